"use server";

import { grantLicence, revokeLicence, type LicenceTarget } from "@/lib/admin/licences";
import { LicenceInput, parseInput } from "@/lib/admin/inputs";
import { runAction, type ActionResult } from "@/lib/http/portal";

export async function grantLicenceAction(
  input: unknown,
): Promise<ActionResult<LicenceTarget & { id: string; created: boolean }>> {
  return runAction("admin", async (ctx) => {
    const target = parseInput(LicenceInput, input);
    return { ...target, ...(await grantLicence(ctx, target)) };
  });
}

export async function revokeLicenceAction(input: unknown): Promise<ActionResult<LicenceTarget & { id: string }>> {
  return runAction("admin", async (ctx) => {
    const target = parseInput(LicenceInput, input);
    return { ...target, ...(await revokeLicence(ctx, target)) };
  });
}

"use server";

import { endLicence, grantLicence, revokeLicence, type LicenceTarget } from "@/lib/admin/licences";
import { EndLicenceInput, GrantLicenceInput, LicenceInput, parseInput } from "@/lib/admin/inputs";
import { runAction, type ActionResult } from "@/lib/http/portal";

export async function grantLicenceAction(
  input: unknown,
): Promise<ActionResult<LicenceTarget & { id: string; created: boolean }>> {
  return runAction("admin", async (ctx) => {
    const { startsAt, endsAt, termsSha256, ...target } = parseInput(GrantLicenceInput, input);
    const granted = await grantLicence(ctx, {
      ...target,
      startsAt: startsAt ?? undefined,
      endsAt: endsAt ?? null,
      termsSha256: termsSha256 ?? null,
    });
    return { ...target, ...granted };
  });
}

export async function endLicenceAction(
  input: unknown,
): Promise<ActionResult<LicenceTarget & { id: string; endsAt: string; previousEndsAt: string | null }>> {
  return runAction("admin", async (ctx) => {
    const { endsAt, ...target } = parseInput(EndLicenceInput, input);
    const ended = await endLicence(ctx, { ...target, endsAt });
    return {
      ...target,
      id: ended.id,
      endsAt: ended.endsAt.toISOString(),
      previousEndsAt: ended.previousEndsAt?.toISOString() ?? null,
    };
  });
}

export async function revokeLicenceAction(input: unknown): Promise<ActionResult<LicenceTarget & { id: string }>> {
  return runAction("admin", async (ctx) => {
    const target = parseInput(LicenceInput, input);
    return { ...target, ...(await revokeLicence(ctx, target)) };
  });
}

"use server";

import { addTerms, type TermsRecord } from "@/lib/admin/terms";
import { AddTermsInput, parseInput } from "@/lib/admin/inputs";
import { runAction, type ActionResult } from "@/lib/http/portal";

export async function addTermsAction(input: unknown): Promise<ActionResult<TermsRecord & { created: boolean }>> {
  return runAction("admin", async (ctx) => {
    const { title, body, datasetId } = parseInput(AddTermsInput, input);
    const added = await addTerms(ctx, { title, body, datasetId: datasetId ?? null });
    return { ...added.document, created: added.created };
  });
}

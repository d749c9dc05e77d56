"use server";

import { setDatasetListing } from "@/lib/admin/listing";
import { ListingInput, parseInput } from "@/lib/admin/inputs";
import { runAction, type ActionResult } from "@/lib/http/portal";
import type { DatasetListing } from "@/lib/db/schema";

export async function setListingAction(
  input: unknown,
): Promise<ActionResult<{ datasetId: string; listing: DatasetListing; changed: boolean }>> {
  return runAction("admin", async (ctx) => {
    const target = parseInput(ListingInput, input);
    const set = await setDatasetListing(ctx, target);
    return { datasetId: target.datasetId, listing: set.listing, changed: set.changed };
  });
}

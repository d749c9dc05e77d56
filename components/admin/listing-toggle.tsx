"use client";

import type { DatasetListing } from "@/lib/db/schema/catalog";
import { Button } from "../ui/button";
import { ActionError } from "./action-error";
import { useAdminAction, type AdminAction } from "./use-admin-action";

export type SetListing = AdminAction<
  { datasetId: string; listing: DatasetListing },
  { datasetId: string; listing: DatasetListing; changed: boolean }
>;

/** Lists or unlists one dataset; the page is refreshed with the new listing. */
export function ListingToggle({
  datasetId,
  listing,
  setListing,
}: {
  datasetId: string;
  listing: DatasetListing;
  setListing: SetListing;
}) {
  const set = useAdminAction(setListing);
  const next: DatasetListing = listing === "listed" ? "unlisted" : "listed";
  return (
    <div className="space-y-2">
      <Button
        size="sm"
        variant={next === "listed" ? "primary" : "secondary"}
        disabled={set.isPending}
        aria-busy={set.isPending || undefined}
        aria-label={`${next === "listed" ? "List" : "Unlist"} ${datasetId}`}
        onClick={() => set.mutate({ datasetId, listing: next })}
      >
        {next === "listed" ? "List" : "Unlist"}
      </Button>
      {set.failure ? <ActionError title="The listing was not changed" failure={set.failure} /> : null}
    </div>
  );
}

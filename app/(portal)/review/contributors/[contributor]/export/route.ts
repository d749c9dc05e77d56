// GET /review/contributors/{contributor}/export?format=csv|jsonl – who received a contributor's episodes
import { z } from "zod";
import { csvLine } from "@/lib/csv";
import { recipientsOfContributor, type ContributorRecipient } from "@/lib/disclosures/recipients-of-contributor";
import { routeContext, routeData, routeSearch } from "@/lib/http/portal";

const COLUMNS: (keyof ContributorRecipient)[] = ["seq", "occurred_at", "organization", "organization_name", "api_key", "user", "channel", "dataset_id", "version", "episode_count", "download_id"];

const Query = z.object({ format: z.enum(["csv", "jsonl"], "must be csv or jsonl").default("csv") });

export async function GET(request: Request, { params }: { params: Promise<{ contributor: string }> }) {
  const ctx = await routeContext("review");
  if (ctx instanceof Response) return ctx;
  const { contributor } = await params;
  const query = routeSearch(request, Query);
  if (query instanceof Response) return query;
  const { format } = query;
  const rows = await routeData(recipientsOfContributor(ctx, contributor));
  if (rows instanceof Response) return rows;
  const body =
    format === "csv"
      ? csvLine(COLUMNS) + rows.map((r) => csvLine(COLUMNS.map((c) => r[c]))).join("")
      : rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length ? "\n" : "");
  const safe = contributor.replace(/[^A-Za-z0-9._-]/g, "_");
  return new Response(body, {
    headers: {
      "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      "Content-Disposition": `attachment; filename="recipients-of-${safe}.${format}"`,
      "Cache-Control": "no-store",
    },
  });
}

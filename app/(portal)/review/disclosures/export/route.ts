// GET /review/disclosures/export?format=csv|jsonl&<search> – the current search of the log, streamed
import { z } from "zod";
import { sqlOf } from "@/lib/db/client";
import { exportDisclosures } from "@/lib/disclosures/export";
import { ReviewSearch, reviewFilter } from "@/lib/disclosures/review-filter";
import { plainText, routeContext, routeSearch } from "@/lib/http/portal";
import { streamText } from "@/lib/http/stream-text";

const Query = ReviewSearch.extend({ format: z.enum(["csv", "jsonl"], "must be csv or jsonl") });

export async function GET(request: Request) {
  const ctx = await routeContext("review");
  if (ctx instanceof Response) return ctx;
  const query = routeSearch(request, Query);
  if (query instanceof Response) return query;
  const { format, ...search } = query;
  const { filter, problems } = await reviewFilter(ctx, search);
  if (problems.length) return plainText(400, problems.join(" "));
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-");
  return streamText(exportDisclosures(sqlOf(ctx.db), filter, format), {
    "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
    "Content-Disposition": `attachment; filename="disclosures-${stamp}.${format}"`,
    "Cache-Control": "no-store",
  });
}

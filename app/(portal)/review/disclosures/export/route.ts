// GET /review/disclosures/export?format=csv|jsonl&<search> – the current search of the log, streamed
import { z } from "zod";
import { EXPORT_FORMATS, exportDisclosures } from "@/lib/disclosures/export";
import { DisclosureSearch, disclosureFilter } from "@/lib/disclosures/filter";
import { streamAttachment } from "@/lib/http/attachment";
import { plainText, routeContext, routeSearch } from "@/lib/http/portal";

const Query = DisclosureSearch.extend({ format: z.enum(EXPORT_FORMATS, "must be csv or jsonl") });

export async function GET(request: Request) {
  const ctx = await routeContext("review");
  if (ctx instanceof Response) return ctx;
  const query = routeSearch(request, Query);
  if (query instanceof Response) return query;
  const { format, ...search } = query;
  const { filter, problems } = disclosureFilter(search);
  if (problems.length) return plainText(400, problems.join(" "));
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-");
  return streamAttachment(() => exportDisclosures(ctx, filter, format), format, `disclosures-${stamp}`);
}

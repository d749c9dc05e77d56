// GET /review/contributors/{contributor}/export?format=csv|jsonl – who received a contributor's episodes, streamed
import { z } from "zod";
import { EXPORT_FORMATS } from "@/lib/disclosures/export";
import { exportRecipientsOfContributor } from "@/lib/disclosures/recipients-of-contributor";
import { streamAttachment } from "@/lib/http/attachment";
import { routeContext, routeSearch } from "@/lib/http/portal";

const Query = z.object({ format: z.enum(EXPORT_FORMATS, "must be csv or jsonl").default("csv") });

export async function GET(request: Request, { params }: { params: Promise<{ contributor: string }> }) {
  const ctx = await routeContext("review");
  if (ctx instanceof Response) return ctx;
  // A route handler is handed the segment decoded (unlike the page): decoding again would break a name with `%`.
  const { contributor } = await params;
  const query = routeSearch(request, Query);
  if (query instanceof Response) return query;
  return streamAttachment(
    () => exportRecipientsOfContributor(ctx, contributor, query.format),
    query.format,
    `recipients-of-${contributor}`,
  );
}

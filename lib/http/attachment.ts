import type { ExportFormat } from "../disclosures/export";
import { routeData } from "./portal";
import { streamText } from "./stream-text";

const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8",
  jsonl: "application/x-ndjson; charset=utf-8",
};

/** A file name safe in a Content-Disposition header and on any disk: letters, digits, `.`, `_` and `-`. */
export const safeFileName = (name: string) => name.replace(/[^A-Za-z0-9._-]/g, "_");

/**
 * A portal export as a file to save: streamed as the verb yields its text or bytes (a batch of lines at a time), never cached.
 * The verb is called here, so that its refusal (403, 400) is a plain-text answer of its own rather
 * than a stream that breaks off.
 */
export async function streamAttachment(
  lines: () => AsyncIterable<string | Uint8Array>,
  format: ExportFormat,
  baseName: string,
): Promise<Response> {
  const iterable = await routeData(Promise.resolve().then(lines));
  if (iterable instanceof Response) return iterable;
  return streamText(iterable, {
    "Content-Type": CONTENT_TYPES[format],
    "Content-Disposition": `attachment; filename="${safeFileName(baseName)}.${format}"`,
    "Cache-Control": "no-store",
  });
}

// GET /downloads/{id}/{json|csv|aria2c|curl} – a portal download's file list as a file to take away
import { recordedDownload } from "@/lib/downloads/download";
import { DOWNLOAD_FORMATS, renderDownload, type DownloadFormat } from "@/lib/downloads/formats";
import { plainText, routeContext, routeData } from "@/lib/http/portal";

export async function GET(_request: Request, { params }: { params: Promise<{ downloadId: string; format: string }> }) {
  const ctx = await routeContext("catalog");
  if (ctx instanceof Response) return ctx;
  const { downloadId, format } = await params;
  if (!Object.hasOwn(DOWNLOAD_FORMATS, format)) return plainText(404, "Unknown format.");
  const download = await routeData(recordedDownload(ctx, downloadId));
  if (download instanceof Response) return download;
  const { file, type } = DOWNLOAD_FORMATS[format as DownloadFormat];
  return new Response(renderDownload(download, format as DownloadFormat), {
    headers: {
      "Content-Type": type,
      "Content-Disposition": `attachment; filename="${download.download_id}-${file}"`,
      "Cache-Control": "no-store",
    },
  });
}

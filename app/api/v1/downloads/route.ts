// POST /api/v1/downloads – signed URLs for a scope of a licensed version, recorded in the disclosure log
import { endpoint, route } from "@/lib/http/route";
import { idempotencyKeyOf } from "@/lib/http/body";
import { JSON_HEADERS } from "@/lib/http/respond";
import { DownloadBody, IDEMPOTENCY_KEY } from "@/lib/api/requests";
import { createDownload } from "@/lib/downloads/create-download";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  POST: endpoint({ body: DownloadBody }, async (ctx, { body, request }) => {
    const { download, replayed } = await createDownload(ctx, {
      body,
      idempotencyKey: idempotencyKeyOf(request, IDEMPOTENCY_KEY),
    });
    // 201 for a new download; 200 when an Idempotency-Key retry returns the one already made.
    return new Response(JSON.stringify(download), { status: replayed ? 200 : 201, headers: JSON_HEADERS });
  }),
});

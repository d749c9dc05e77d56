// POST /api/v1/previews – signed URLs to watch an episode's video streams, recorded in the disclosure log
import { endpoint, route } from "@/lib/http/route";
import { JSON_HEADERS } from "@/lib/http/respond";
import { PreviewBody } from "@/lib/api/requests";
import { createPreview } from "@/lib/previews/create-preview";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  POST: endpoint({ body: PreviewBody }, async (ctx, { body }) => {
    const { preview, replayed } = await createPreview(ctx, body);
    // 201 for a new preview; 200 when the same one, still valid, is handed out again.
    return new Response(JSON.stringify(preview), { status: replayed ? 200 : 201, headers: JSON_HEADERS });
  }),
});

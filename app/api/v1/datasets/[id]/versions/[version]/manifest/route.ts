// GET /api/v1/datasets/{id}/versions/{version}/manifest – every file of a version, streamed
// (a small one whole, so that it can be cached and carry an ETag; the bytes are the same)
import { endpoint, route } from "@/lib/http/route";
import { streamJsonObject } from "@/lib/http/stream-json";
import { CACHE_CONTROL } from "@/lib/http/conditional";
import { getManifest } from "@/lib/catalog/get-manifest";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: endpoint({}, async (ctx, { params }) => {
    const manifest = await getManifest(ctx, { datasetId: params.id!, version: params.version! });
    if (manifest.whole) return manifest.whole;
    const streamed = streamJsonObject(manifest.head, "files", manifest.files, ctx.requestId);
    streamed.headers.set("Cache-Control", CACHE_CONTROL.immutable);
    return streamed;
  }),
});

// GET /api/v1/datasets/{id}/versions/{version}/manifest – every file of a version, streamed
import { endpoint, route } from "@/lib/http/route";
import { streamJsonObject } from "@/lib/http/stream-json";
import { getManifest } from "@/lib/catalog/get-manifest";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: endpoint({}, async (ctx, { params }) => {
    const manifest = await getManifest(ctx, { datasetId: params.id!, version: params.version! });
    return streamJsonObject(manifest.head, "files", manifest.files, ctx.requestId);
  }),
});

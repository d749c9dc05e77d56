// GET /api/v1/datasets/{id}/versions/{version}/manifest – every file of a version, streamed
// (a small one whole, so that it can be cached and carry an ETag; the bytes are the same)
import { getManifest as readManifest } from "../../catalog/get-manifest";
import { defineOperation, StreamedJsonObject } from "../operation";
import { cacheable, errorResponses, hubFileLinks, KEYED, linked, VersionPath } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { Manifest } from "../responses";

export const getManifest = defineOperation({
  method: "GET",
  path: "/api/v1/datasets/{id}/versions/{version}/manifest",
  params: VersionPath,
  conditional: true,
  openapi: {
    operationId: "getManifest",
    tags: ["Catalog"],
    summary: "Every file of a version",
    description:
      "The full manifest of a licensed version: totals, stream names and every file with its size and SHA-256, by path. One document (not paginated), streamed: a failure half way ends the body early as invalid JSON, never as a shorter valid list. A manifest of more than 2,000 files is streamed as it is read and has no ETag. For a fingerprinted version the files are the caller's licence's own copies, with their own size and SHA-256 (503 until every one is made).",
    responses: {
      ...linked(cacheable("The manifest.", Manifest, EXAMPLES.manifest, "optional"), {
        episodes: {
          operationId: "listEpisodes",
          description: "The version's episodes.",
          parameters: { "path.id": "$request.path.id", "path.version": "$request.path.version" },
        },
        download: {
          operationId: "createDownload",
          description: "A download of the version.",
          requestBody: { dataset_id: "$request.path.id", version: "$request.path.version" },
        },
        ...hubFileLinks("$request.path.id", "$request.path.version", "$response.body#/files/0/path", "the first file"),
      }),
      ...errorResponses([...KEYED, "version_not_licensed", "not_found"]),
    },
  },
  handler: async (ctx, { params }) => {
    const manifest = await readManifest(ctx, { datasetId: params.id, version: params.version });
    return manifest.whole ?? new StreamedJsonObject(manifest.head, "files", manifest.files);
  },
});

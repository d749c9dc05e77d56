// GET /api/v1/datasets/{id}/versions/{version}/episodes – one page of episodes, filtered
import { EPISODE_FILTER_FIELDS } from "../../catalog/episode-filter";
import { episodePage } from "../../catalog/list-episodes";
import { defineOperation } from "../operation";
import { cacheable, errorResponses, LIST, linked, nextPage, paging, VersionPath } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { EpisodesQuery } from "../requests";
import { EpisodePage } from "../responses";

const FIRST_EPISODE = "$response.body#/episodes/0/episode_id";

export const listEpisodes = defineOperation({
  method: "GET",
  path: "/api/v1/datasets/{id}/versions/{version}/episodes",
  params: VersionPath,
  query: EpisodesQuery,
  conditional: true,
  openapi: {
    operationId: "listEpisodes",
    tags: ["Catalog"],
    summary: "Episodes of a version, filtered",
    description: `Episode metadata of a licensed version in \`episode_id\` byte order. \`total\` counts every episode matching the filters. Unknown parameters are refused (a typo never silently returns everything). ${paging}`,
    responses: {
      ...linked(cacheable("One page of episodes.", EpisodePage, EXAMPLES.episodes), {
        annotations: {
          operationId: "listAnnotations",
          description: "The first episode's spans in this version.",
          parameters: { "path.episode_id": FIRST_EPISODE, "query.version": "$request.path.version" },
        },
        preview: {
          operationId: "createPreview",
          description: "A preview of the first episode's video in this version.",
          requestBody: { episode_id: FIRST_EPISODE, version: "$request.path.version" },
        },
        download: {
          operationId: "createDownload",
          description: "A download of this version.",
          requestBody: { dataset_id: "$request.path.id", version: "$request.path.version" },
        },
        next: nextPage("listEpisodes", [
          "path.id",
          "path.version",
          ...EPISODE_FILTER_FIELDS.map((name) => `query.${name}`),
        ]),
      }),
      ...errorResponses([...LIST, "version_not_licensed", "not_found"]),
    },
  },
  handler: (ctx, { params, query }) => episodePage(ctx, { datasetId: params.id, version: params.version, ...query }),
});

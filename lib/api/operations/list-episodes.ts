// GET /api/v1/datasets/{id}/versions/{version}/episodes – one page of episodes, filtered
import { episodePage } from "../../catalog/list-episodes";
import { defineOperation } from "../operation";
import { cacheable, errorResponses, LIST, paging, VersionPath } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { EpisodesQuery } from "../requests";
import { EpisodePage } from "../responses";

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
      ...cacheable("One page of episodes.", EpisodePage, EXAMPLES.episodes),
      ...errorResponses([...LIST, "version_not_licensed", "not_found"]),
    },
  },
  handler: (ctx, { params, query }) => episodePage(ctx, { datasetId: params.id, version: params.version, ...query }),
});

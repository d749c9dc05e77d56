// GET /api/v1/datasets/{id}/versions – released versions, newest first, with changelogs
import { versionsPage } from "../../catalog/list-versions";
import { defineOperation } from "../operation";
import {
  cacheable,
  DatasetPath,
  errorResponses,
  hubRepositoryLinks,
  LIST,
  linked,
  nextPage,
  paging,
} from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { PageQuery } from "../requests";
import { VersionList } from "../responses";

export const listVersions = defineOperation({
  method: "GET",
  path: "/api/v1/datasets/{id}/versions",
  params: DatasetPath,
  query: PageQuery,
  conditional: true,
  openapi: {
    operationId: "listVersions",
    tags: ["Catalog"],
    summary: "Released versions of a dataset, with changelogs",
    description: `All released versions of a visible dataset, newest first, each saying whether the key holds a licence for it. ${paging}`,
    responses: {
      ...linked(cacheable("One page of versions.", VersionList, EXAMPLES.versions), {
        manifest: {
          operationId: "getManifest",
          description: "The manifest of the newest version (403 when it is not licensed).",
          parameters: { "path.id": "$request.path.id", "path.version": "$response.body#/versions/0/version" },
        },
        episodes: {
          operationId: "listEpisodes",
          description: "The episodes of the newest version (403 when it is not licensed).",
          parameters: { "path.id": "$request.path.id", "path.version": "$response.body#/versions/0/version" },
        },
        ...hubRepositoryLinks("$request.path.id", "the dataset"),
        next: nextPage("listVersions", ["path.id"]),
      }),
      ...errorResponses([...LIST, "not_found"]),
    },
  },
  handler: (ctx, { params, query }) => versionsPage(ctx, { datasetId: params.id, ...query }),
});

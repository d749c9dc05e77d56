// GET /api/v1/datasets – the datasets the key holds a licence for
import { datasetsPage } from "../../catalog/list-datasets";
import { defineOperation } from "../operation";
import { cacheable, errorResponses, LIST, linked, nextPage, paging } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { PageQuery } from "../requests";
import { DatasetList } from "../responses";

const FIRST = {
  dataset_id: "$response.body#/datasets/0/dataset_id",
  version: "$response.body#/datasets/0/latest_licensed_version",
};

export const listDatasets = defineOperation({
  method: "GET",
  path: "/api/v1/datasets",
  query: PageQuery,
  conditional: true,
  openapi: {
    operationId: "listDatasets",
    tags: ["Catalog"],
    summary: "Datasets the key holds a licence for",
    description: `Every dataset in which the key is licensed for at least one version, ordered by \`dataset_id\`. ${paging}`,
    responses: {
      ...linked(cacheable("One page of datasets.", DatasetList, EXAMPLES.datasets), {
        versions: {
          operationId: "listVersions",
          description: "The first dataset's versions.",
          parameters: { "path.id": FIRST.dataset_id },
        },
        manifest: {
          operationId: "getManifest",
          description: "The manifest of the first dataset's newest licensed version.",
          parameters: { "path.id": FIRST.dataset_id, "path.version": FIRST.version },
        },
        episodes: {
          operationId: "listEpisodes",
          description: "The episodes of the first dataset's newest licensed version.",
          parameters: { "path.id": FIRST.dataset_id, "path.version": FIRST.version },
        },
        download: {
          operationId: "createDownload",
          description: "A download of the first dataset's newest licensed version.",
          requestBody: { dataset_id: FIRST.dataset_id, version: FIRST.version },
        },
        next: nextPage("listDatasets"),
      }),
      ...errorResponses(LIST),
    },
  },
  handler: (ctx, { query }) => datasetsPage(ctx, query),
});

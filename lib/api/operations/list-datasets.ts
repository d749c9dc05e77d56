// GET /api/v1/datasets – the datasets the key holds a licence for
import { datasetsPage } from "../../catalog/list-datasets";
import { defineOperation } from "../operation";
import { cacheable, errorResponses, firstRowLinks, LIST, linked, nextPage, paging } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { PageQuery } from "../requests";
import { DatasetList } from "../responses";

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
        ...firstRowLinks({
          list: "datasets",
          versionField: "latest_licensed_version",
          dataset: "the first dataset",
          version: "the first dataset's newest licensed version",
        }),
        next: nextPage("listDatasets"),
      }),
      ...errorResponses(LIST),
    },
  },
  handler: (ctx, { query }) => datasetsPage(ctx, query),
});

// GET /api/v1/licences – the licences the key may use now, with their terms
import { licencesPage } from "../../catalog/list-licences";
import { defineOperation } from "../operation";
import { cacheable, errorResponses, firstRowLinks, LIST, linked, nextPage, paging } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { PageQuery } from "../requests";
import { LicenceList } from "../responses";

export const listLicences = defineOperation({
  method: "GET",
  path: "/api/v1/licences",
  query: PageQuery,
  conditional: true,
  openapi: {
    operationId: "listLicences",
    tags: ["Catalog"],
    summary: "Licences the key may use now",
    description: `The key's licences usable at this moment (started, not ended, not revoked; a narrowed key's share only), by \`dataset_id\` and newest version first, each with its term and the terms document it was granted under. A licence outside its term is absent, and every read of its version is refused. ${paging}`,
    responses: {
      ...linked(cacheable("One page of licences.", LicenceList, EXAMPLES.licences), {
        ...firstRowLinks({
          list: "licences",
          versionField: "version",
          dataset: "the first licence's dataset",
          version: "the first licence's version",
        }),
        next: nextPage("listLicences"),
      }),
      ...errorResponses(LIST),
    },
  },
  handler: (ctx, { query }) => licencesPage(ctx, query),
});

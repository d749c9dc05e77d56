// GET /api/v1/datasets/{id}/versions – released versions, newest first, with changelogs
import { endpoint, route } from "@/lib/http/route";
import { PageQuery } from "@/lib/api/requests";
import { versionsPage } from "@/lib/catalog/list-versions";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: endpoint({ query: PageQuery }, (ctx, { params, query }) =>
    versionsPage(ctx, { datasetId: params.id!, ...query }),
  ),
});

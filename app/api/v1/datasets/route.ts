// GET /api/v1/datasets – the datasets the key holds a licence for
import { endpoint, route } from "@/lib/http/route";
import { PageQuery } from "@/lib/api/requests";
import { datasetsPage } from "@/lib/catalog/list-datasets";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: endpoint({ query: PageQuery }, (ctx, { query }) => datasetsPage(ctx, query)),
});

// GET /api/v1/datasets/{id}/versions/{version}/episodes – one page of episodes, filtered
import { endpoint, route } from "@/lib/http/route";
import { EpisodesQuery } from "@/lib/api/requests";
import { episodePage } from "@/lib/catalog/list-episodes";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: endpoint({ query: EpisodesQuery }, (ctx, { params, query }) =>
    episodePage(ctx, { datasetId: params.id!, version: params.version!, ...query }),
  ),
});

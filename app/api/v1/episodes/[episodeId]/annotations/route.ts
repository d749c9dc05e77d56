// GET /api/v1/episodes/{episode_id}/annotations – subtask spans in the newest licensed version
import { endpoint, route } from "@/lib/http/route";
import { AnnotationsQuery } from "@/lib/api/requests";
import { annotationsPage } from "@/lib/catalog/list-annotations";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: endpoint({ query: AnnotationsQuery }, (ctx, { params, query }) =>
    annotationsPage(ctx, { episodeId: params.episodeId!, ...query }),
  ),
});

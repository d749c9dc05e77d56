// GET /api/v1/episodes/{episode_id}/annotations – subtask spans in the newest licensed version
import { annotationsPage } from "../../catalog/list-annotations";
import { defineOperation } from "../operation";
import { cacheable, EpisodePath, errorResponses, LIST, linked, nextPage, paging } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { AnnotationsQuery } from "../requests";
import { AnnotationPage } from "../responses";

export const listAnnotations = defineOperation({
  method: "GET",
  path: "/api/v1/episodes/{episode_id}/annotations",
  params: EpisodePath,
  query: AnnotationsQuery,
  conditional: true,
  openapi: {
    operationId: "listAnnotations",
    tags: ["Catalog"],
    summary: "Subtask spans of an episode",
    description: `The episode's spans, ordered by \`start_s\`, in the newest version licensed to the key that contains it, or in the pinned \`version\`. ${paging}`,
    responses: {
      ...linked(cacheable("One page of spans.", AnnotationPage, EXAMPLES.annotations), {
        preview: {
          operationId: "createPreview",
          description: "A preview of the episode's video in the version the spans were read from.",
          requestBody: { episode_id: "$request.path.episode_id", version: "$response.body#/version" },
        },
        next: nextPage("listAnnotations", ["path.episode_id", "query.version"]),
      }),
      ...errorResponses([...LIST, "version_not_licensed", "not_found", "episode_withdrawn"]),
    },
  },
  handler: (ctx, { params, query }) => annotationsPage(ctx, { episodeId: params.episode_id, ...query }),
});

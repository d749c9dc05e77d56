// POST /api/v1/previews – signed URLs to watch an episode's video streams, recorded in the disclosure log
import { createPreview as create } from "../../previews/create-preview";
import { URL_TTL_SECONDS } from "../../storage/config";
import { defineOperation, JsonReply } from "../operation";
import { errorResponses, KEYED, ok } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { PreviewBody } from "../requests";
import { Preview } from "../responses";

export const createPreview = defineOperation({
  method: "POST",
  path: "/api/v1/previews",
  body: PreviewBody,
  openapi: {
    operationId: "createPreview",
    tags: ["Downloads"],
    summary: "Signed URLs to watch an episode's video",
    description: `One signed GET URL per video stream of an episode, each valid for ${URL_TTL_SECONDS} s, with where the episode lies in the file (\`start_s\` to \`end_s\`: a file may hold several episodes). A preview is a disclosure: it is recorded in the disclosure log with channel \`preview\` before any URL is returned. Asking again for the same episode, version and streams while an earlier preview's URLs are still valid for at least a minute returns that preview (200, same id, URLs and expiry) without a new entry. Streams that are not video are not previewed; download them.`,
    requestBody: { required: true, examples: EXAMPLES.previewRequests },
    responses: {
      ...ok("A new preview, recorded in the disclosure log.", Preview, EXAMPLES.preview, "201"),
      ...ok(
        "The preview already issued for the same episode, version and streams, still valid (no new disclosure).",
        Preview,
        EXAMPLES.preview,
        "200",
      ),
      ...errorResponses([
        ...KEYED,
        "invalid_body",
        "body_too_large",
        "version_not_licensed",
        "not_found",
        "episode_withdrawn",
        "withdrawn_content",
      ]),
    },
  },
  handler: async (ctx, { body }) => {
    const { preview, replayed } = await create(ctx, body);
    // 201 for a new preview; 200 when the same one, still valid, is handed out again.
    return new JsonReply(replayed ? 200 : 201, preview);
  },
});

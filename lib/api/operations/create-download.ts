// POST /api/v1/downloads – signed URLs for a scope of a licensed version, recorded in the disclosure log
import { createDownload as create } from "../../downloads/create-download";
import { MAX_FILES_PER_DOWNLOAD } from "../../downloads/scope";
import { URL_TTL_SECONDS } from "../../storage/config";
import { defineOperation, JsonReply } from "../operation";
import { errorResponses, KEYED, ok } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { DownloadBody, DownloadHeaders } from "../requests";
import { Download } from "../responses";

export const createDownload = defineOperation({
  method: "POST",
  path: "/api/v1/downloads",
  headers: DownloadHeaders,
  body: DownloadBody,
  openapi: {
    operationId: "createDownload",
    tags: ["Downloads"],
    summary: "Signed URLs for a scope of a version",
    description: `Resolves the scope, records it in the disclosure log and returns one signed GET URL per file, each valid for ${URL_TTL_SECONDS} s (URLs accept HTTP Range requests). Every request, including one that re-requests expired URLs, is a new disclosure. At most ${MAX_FILES_PER_DOWNLOAD.toLocaleString("en")} files per request: split larger scopes by \`episode_ids\`, \`filter\` or \`streams\`. For a fingerprinted version every file is the caller's licence's own copy, with its own size and SHA-256 (503 with Retry-After while any is still being made).`,
    requestBody: { required: true, examples: EXAMPLES.downloadRequests },
    responses: {
      ...ok("A new download.", Download, EXAMPLES.download, "201"),
      ...ok(
        "The download made earlier with this Idempotency-Key and body (no new disclosure).",
        Download,
        EXAMPLES.download,
        "200",
      ),
      ...errorResponses([
        ...KEYED,
        "invalid_body",
        "body_too_large",
        "version_not_licensed",
        "not_found",
        "idempotency_conflict",
        "scope_too_large",
        "episode_withdrawn",
        "withdrawn_content",
      ]),
    },
  },
  handler: async (ctx, { body, headers }) => {
    const made = await create(ctx, { body, idempotencyKey: headers["Idempotency-Key"] });
    // 201 for a new download; 200 when an Idempotency-Key retry returns the one already made.
    return new JsonReply(made.replayed ? 200 : 201, made.json);
  },
});

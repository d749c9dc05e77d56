// POST /api/v1/datasets/{id}/versions/{version}/plan – what a pull of a version writes to disk, and how to get each file
import { MAX_PLAN_FILES, pullPlan } from "../../views/plan";
import { URL_TTL_SECONDS } from "../../storage/config";
import { defineOperation } from "../operation";
import { errorResponses, KEYED, ok, VersionPath } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { PlanBody, PlanHeaders } from "../requests";
import { Plan } from "../responses";

export const planPull = defineOperation({
  method: "POST",
  path: "/api/v1/datasets/{id}/versions/{version}/plan",
  params: VersionPath,
  headers: PlanHeaders,
  body: PlanBody,
  openapi: {
    operationId: "planPull",
    tags: ["Downloads"],
    summary: "What a pull writes to disk",
    description: `The plan of a pull, decided by the service for every client alike: each file with where it goes, its size and SHA-256, and how to get its bytes (a file that carries episodes through one of \`downloads\`, each a POST /api/v1/downloads and so a disclosure; any other file by a signed URL, valid ${URL_TTL_SECONDS} s). For a version imported from LeRobot, \`meta/\` is written for the episodes delivered whole (withdrawn episodes gone), and a v3.0 subset's data files are renumbered 0..k-1 row by row (\`transform\`) unless \`keep_original_indices\`. The files it hands out by URL are recorded in one disclosure-log entry (no episode: they carry none); every other file leaves through the downloads it lists, each a disclosure of its own. On a fingerprinted version, every size, SHA-256 and URL is of the key's licence's own copy (503 with Retry-After while its copies are being made). At most ${MAX_PLAN_FILES.toLocaleString("en")} files per plan.`,
    requestBody: { required: true, examples: EXAMPLES.planRequests },
    responses: {
      ...ok("The plan.", Plan, EXAMPLES.plan),
      ...errorResponses([
        ...KEYED,
        "invalid_body",
        "body_too_large",
        "version_not_licensed",
        "not_found",
        "episode_withdrawn",
        "scope_too_large",
        "idempotency_conflict",
      ]),
    },
  },
  handler: (ctx, { params, body, headers }) =>
    pullPlan(ctx, { datasetId: params.id, version: params.version, ...body }, headers["Idempotency-Key"]),
});

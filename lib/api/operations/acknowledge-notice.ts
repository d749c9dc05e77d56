// POST /api/v1/notices/{notice_id}/acknowledgements – the organisation states what it deleted
import { acknowledgeNotice as acknowledge } from "../../notices/acknowledge";
import { defineOperation, JsonReply } from "../operation";
import { errorResponses, KEYED, ok } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { AcknowledgementBody, NoticePath } from "../requests";
import { Acknowledgement } from "../responses";

export const acknowledgeNotice = defineOperation({
  method: "POST",
  path: "/api/v1/notices/{notice_id}/acknowledgements",
  params: NoticePath,
  body: AcknowledgementBody,
  openapi: {
    operationId: "acknowledgeNotice",
    tags: ["Notices"],
    summary: "Acknowledge a notice",
    description:
      "Records the organisation's statement of what it did about a notice and the files it deleted (only files the notice's downloads and previews delivered), appended to a hash-chained, append-only record the data owner's reviewers see. A notice may be acknowledged up to 10 times (a portal user, then `das sync` on each machine); each acknowledgement is kept, and an eleventh is 409 `acknowledgement_limit`. Another organisation's notice is 404.",
    requestBody: { required: true, examples: EXAMPLES.acknowledgementRequests },
    responses: {
      ...ok("The acknowledgement, recorded.", Acknowledgement, EXAMPLES.acknowledgement, "201"),
      ...errorResponses([...KEYED, "invalid_body", "body_too_large", "not_found", "acknowledgement_limit"]),
    },
  },
  handler: async (ctx, { params, body }) => {
    const { statement, deleted_paths } = body as { statement: string; deleted_paths: string[] };
    const made = await acknowledge(ctx, { noticeId: params.notice_id!, statement, deletedPaths: deleted_paths });
    return new JsonReply(201, made);
  },
});

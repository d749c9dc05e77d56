// GET /api/v1/notices – the notices addressed to the key's organisation (withdrawals of episodes it received, new versions, licence ends)
import { listNotices as list } from "../../notices/list-notices";
import { defineOperation } from "../operation";
import { errorResponses, LIST, linked, nextPage, ok, paging } from "../openapi-parts";
import { EXAMPLES } from "../openapi-examples";
import { PageQuery } from "../requests";
import { NoticeList } from "../responses";

export const listNotices = defineOperation({
  method: "GET",
  path: "/api/v1/notices",
  query: PageQuery,
  openapi: {
    operationId: "listNotices",
    tags: ["Notices"],
    summary: "Notices to the key's organisation",
    description: `Notices addressed to the key's organisation, newest first, each told apart by \`kind\`. A \`withdrawal\` notice names the organisation's own withdrawn episodes (an episode's contributor withdrew consent) and every download or preview that gave them to it: delete every copy of those episodes' files, then acknowledge the notice (\`das sync\` does both); while it is not acknowledged, a reminder goes out every few days (\`reminders\`). A \`new_version\` notice tells of a new version of a dataset the organisation holds a licence for an earlier version of; a \`licence_ending\` notice warns 30 and 7 days before a licence ends. Those two ask for nothing. Only the organisation's own notices, never another's. ${paging}`,
    responses: {
      ...linked(ok("One page of notices.", NoticeList, EXAMPLES.notices), {
        acknowledge: {
          operationId: "acknowledgeNotice",
          description: "An acknowledgement of the newest notice.",
          parameters: { "path.notice_id": "$response.body#/notices/0/notice_id" },
        },
        next: nextPage("listNotices"),
      }),
      ...errorResponses(LIST),
    },
  },
  handler: (ctx, { query }) => list(ctx, query as { limit: number; cursor?: string }),
});

// GET /api/v1/notices – the notices addressed to the key's organisation (withdrawals of episodes it received)
import { listNotices as list } from "../../withdrawals/list-notices";
import { defineOperation } from "../operation";
import { errorResponses, LIST, ok, paging } from "../openapi-parts";
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
    description: `Notices addressed to the key's organisation, newest first. A withdrawal notice names the organisation's own withdrawn episodes (an episode's contributor withdrew consent) and every download or preview that gave them to it: delete every copy of those episodes' files, then acknowledge the notice (\`das sync\` does both). Only the organisation's own notices, never another's. ${paging}`,
    responses: { ...ok("One page of notices.", NoticeList, EXAMPLES.notices), ...errorResponses(LIST) },
  },
  handler: (ctx, { query }) => list(ctx, query as { limit: number; cursor?: string }),
});

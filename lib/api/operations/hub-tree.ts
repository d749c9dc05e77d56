// GET /hub/api/datasets/{namespace}/{name}/tree/{revision}[/{path}] – a folder of a revision, a page at a time (the Hub protocol)
import { openRevision } from "../../hub/repository";
import { listTree } from "../../hub/tree";
import { defineOperation, JsonReply } from "../operation";
import {
  HUB_DESCRIPTION,
  HUB_KEYED,
  HubFilePath,
  HubRevisionPath,
  HubTreePage,
  HubTreeQuery,
  hubErrorResponses,
  hubOk,
} from "../hub";
import { EXAMPLES } from "../openapi-examples";

const openapi = (operationId: string, summary: string) => ({
  operationId,
  tags: ["Hub"],
  summary,
  description: `${HUB_DESCRIPTION} The folder's files and folders (with \`recursive\`, everything below it) in path order, each file with its size and SHA-256 (\`lfs.oid\`): on a fingerprinted version those of the key's licence's own copy (503 with Retry-After while its copies are being made). Withdrawn episodes' files are not there, and meta/ is the one for the episodes the revision holds. Paged by \`Link: <...>; rel="next"\`.`,
  responses: {
    ...hubOk("One page of entries.", HubTreePage, EXAMPLES.hubTree, true),
    ...hubErrorResponses([...HUB_KEYED, "invalid_cursor", "version_not_licensed"]),
  },
});

export const hubTree = defineOperation({
  method: "GET",
  path: "/hub/api/datasets/{namespace}/{name}/tree/{revision}",
  params: HubRevisionPath,
  query: HubTreeQuery,
  openapi: openapi("hubTree", "The root folder of a revision"),
  handler: async (ctx, { params, query }) => {
    const page = await listTree(ctx, await openRevision(ctx, params), query);
    return new JsonReply(200, page.entries, { nextPage: page.cursor ? { cursor: page.cursor } : null });
  },
});

export const hubTreeAtPath = defineOperation({
  method: "GET",
  path: "/hub/api/datasets/{namespace}/{name}/tree/{revision}/{path}",
  rest: "path",
  params: HubFilePath,
  query: HubTreeQuery,
  openapi: openapi("hubTreeAtPath", "A folder of a revision"),
  handler: async (ctx, { params, query }) => {
    const page = await listTree(ctx, await openRevision(ctx, params), { ...query, path: params.path });
    return new JsonReply(200, page.entries, { nextPage: page.cursor ? { cursor: page.cursor } : null });
  },
});

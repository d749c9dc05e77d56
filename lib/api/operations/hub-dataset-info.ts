// GET /hub/api/datasets/{namespace}/{name}[/revision/{revision}] – a repository's info at a revision (the Hub protocol)
import { repoInfo } from "../../hub/info";
import { openRevision } from "../../hub/repository";
import { defineOperation } from "../operation";
import {
  HUB_DESCRIPTION,
  HUB_KEYED,
  HubInfoQuery,
  HubRepoInfo,
  HubRepoPath,
  HubRevisionPath,
  hubErrorResponses,
  hubOk,
} from "../hub";
import { EXAMPLES } from "../openapi-examples";

const responses = {
  ...hubOk("The repository at the revision.", HubRepoInfo, EXAMPLES.hubRepoInfo),
  ...hubErrorResponses([...HUB_KEYED, "version_not_licensed"]),
};

export const hubDatasetInfo = defineOperation({
  method: "GET",
  path: "/hub/api/datasets/{namespace}/{name}",
  params: HubRepoPath,
  query: HubInfoQuery,
  openapi: {
    operationId: "hubDatasetInfo",
    tags: ["Hub"],
    summary: "A dataset repository at main",
    description: `${HUB_DESCRIPTION} The repository at \`main\`, the newest version the key may read: its sha, files (\`siblings\`) and the card data of its README.`,
    responses,
  },
  handler: (ctx, { params, query }) =>
    openRevision(ctx, params).then((view) => repoInfo(ctx, view, { blobs: query.blobs })),
});

export const hubDatasetInfoAtRevision = defineOperation({
  method: "GET",
  path: "/hub/api/datasets/{namespace}/{name}/revision/{revision}",
  params: HubRevisionPath,
  query: HubInfoQuery,
  openapi: {
    operationId: "hubDatasetInfoAtRevision",
    tags: ["Hub"],
    summary: "A dataset repository at a revision",
    description: `${HUB_DESCRIPTION} The repository at a branch, tag or sha. A version outside the key's licence (or its term) is 403 \`GatedRepo\`, saying when the licence ended or starts.`,
    responses,
  },
  handler: (ctx, { params, query }) =>
    openRevision(ctx, params).then((view) => repoInfo(ctx, view, { blobs: query.blobs })),
});

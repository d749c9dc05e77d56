// GET /hub/api/datasets/{namespace}/{name}/refs – a repository's branches and tags (the Hub protocol)
import { repoRefs } from "../../hub/info";
import { openRepository } from "../../hub/repository";
import { defineOperation } from "../operation";
import { HUB_DESCRIPTION, HUB_KEYED, HubRefs, HubRepoPath, hubErrorResponses, hubOk } from "../hub";
import { EXAMPLES } from "../openapi-examples";

export const hubRefs = defineOperation({
  method: "GET",
  path: "/hub/api/datasets/{namespace}/{name}/refs",
  params: HubRepoPath,
  openapi: {
    operationId: "hubRefs",
    tags: ["Hub"],
    summary: "A dataset repository's branches and tags",
    description: `${HUB_DESCRIPTION} \`main\`, a tag per version the key may read now, and a tag per LeRobot codebase version (\`v3.0\`) on the newest of them in that format, each with its sha. \`converts\` is always empty. A key whose licences to the dataset are all out of their term is 403 \`GatedRepo\`, saying when they ended or start; one that holds none, 404 \`RepoNotFound\`.`,
    responses: {
      ...hubOk("Branches and tags.", HubRefs, EXAMPLES.hubRefs),
      ...hubErrorResponses([...HUB_KEYED, "version_not_licensed"]),
    },
  },
  handler: (ctx, { params }) => openRepository(ctx, params.namespace, params.name).then((repo) => repoRefs(ctx, repo)),
});

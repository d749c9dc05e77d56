// POST /hub/api/datasets/{namespace}/{name}/paths-info/{revision} – named files and folders of a revision (the Hub protocol)
import { openRevision } from "../../hub/repository";
import { pathsInfo } from "../../hub/tree";
import { defineOperation } from "../operation";
import {
  HUB_DESCRIPTION,
  HUB_KEYED,
  HubRevisionPath,
  HubTreePage,
  PathsInfoForm,
  hubErrorResponses,
  hubOk,
} from "../hub";
import { EXAMPLES } from "../openapi-examples";

export const hubPathsInfo = defineOperation({
  method: "POST",
  path: "/hub/api/datasets/{namespace}/{name}/paths-info/{revision}",
  params: HubRevisionPath,
  bodyType: "form",
  body: PathsInfoForm,
  openapi: {
    operationId: "hubPathsInfo",
    tags: ["Hub"],
    summary: "Named paths of a revision",
    description: `${HUB_DESCRIPTION} The entries (as in the tree) of the named paths that are files or folders of the revision; the others are left out. The body is a form: \`paths\` repeated, and \`expand\`. Discloses nothing.`,
    requestBody: { required: true },
    responses: {
      ...hubOk("The entries of the paths that exist.", HubTreePage, EXAMPLES.hubTree),
      ...hubErrorResponses([...HUB_KEYED, "invalid_body", "body_too_large", "version_not_licensed"]),
    },
  },
  handler: async (ctx, { params, body }) => pathsInfo(ctx, await openRevision(ctx, params), body),
});

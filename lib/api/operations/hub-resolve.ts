// HEAD and GET /hub/datasets/{namespace}/{name}/resolve/{revision}/{path} – one file of a revision (the Hub protocol)
import { URL_TTL_SECONDS } from "../../storage/config";
import { openRevision } from "../../hub/repository";
import { fileHeaders, fileUrl, resolveFile } from "../../hub/resolve";
import { BodilessReply, defineOperation } from "../operation";
import { HUB_DESCRIPTION, HUB_KEYED, HubFilePath, fileAnswer, hubErrorResponses } from "../hub";

const refusals = hubErrorResponses([...HUB_KEYED, "version_not_licensed", "withdrawn_content"]);

export const hubResolveHead = defineOperation({
  method: "HEAD",
  path: "/hub/datasets/{namespace}/{name}/resolve/{revision}/{path}",
  rest: "path",
  params: HubFilePath,
  openapi: {
    operationId: "hubResolveHead",
    tags: ["Hub"],
    summary: "A file's metadata",
    description: `${HUB_DESCRIPTION} The revision's sha, the file's SHA-256 and its size (on a fingerprinted version, of the key's licence's own copy), without a body and without a redirect. Discloses nothing.`,
    responses: { ...fileAnswer("200", "The file's metadata."), ...refusals },
  },
  handler: async (ctx, { params }) =>
    new BodilessReply(200, fileHeaders(await resolveFile(ctx, await openRevision(ctx, params), params.path))),
});

export const hubResolve = defineOperation({
  method: "GET",
  path: "/hub/datasets/{namespace}/{name}/resolve/{revision}/{path}",
  rest: "path",
  params: HubFilePath,
  openapi: {
    operationId: "hubResolve",
    tags: ["Hub"],
    summary: "A file: a redirect to its signed URL",
    description: `${HUB_DESCRIPTION} A redirect to a signed URL of the file in the object store (valid ${URL_TTL_SECONDS} s; Range works on it): on a fingerprinted version, of the key's licence's own copy, and 503 with Retry-After while that copy is being made. The file is first recorded in the disclosure log (channel \`hub\`, every episode it carries: none for a README or meta/; a copy's sha256); a repeat by the same key while that URL is valid gets the same URL and records nothing. A file shared with a withdrawn episode is 422 \`withdrawn_content\`; one holding only withdrawn episodes is not there (404 \`EntryNotFound\`).`,
    responses: { ...fileAnswer("302", "The file is at `Location`."), ...refusals },
  },
  handler: async (ctx, { params }) => {
    const resolved = await resolveFile(ctx, await openRevision(ctx, params), params.path);
    return new BodilessReply(302, { ...fileHeaders(resolved), Location: await fileUrl(ctx, resolved) });
  },
});

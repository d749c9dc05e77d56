import { NextRequest } from "next/server";
import { AppError, ERROR_STATUS, type ErrorCode } from "../errors";
import { readBodyText } from "./body";
import { errorOnlyResponse, route, type RouteHandler } from "./route";
import { withAuthEndpointHeaders } from "./security-headers";

/**
 * The actions of Auth.js that the portal's providers (credentials, OIDC) use; any other path under
 * /api/auth/ (its e-mail and passkey pages among them) is the API's JSON 404.
 */
const AUTH_ACTIONS = new Set(["providers", "session", "csrf", "signin", "signout", "callback", "error"]);

/** A sign-in or sign-out form is a few hundred bytes: its body is cut well before it could cost memory. */
const AUTH_BODY_MAX_BYTES = 64 * 1024;

const CODE_OF_STATUS = new Map<number, ErrorCode>(
  (Object.entries(ERROR_STATUS) as [ErrorCode, number][])
    .filter(
      ([code]) =>
        !["invalid_cursor", "invalid_body", "version_not_licensed", "https_required", "acknowledgement_limit"].includes(
          code,
        ),
    )
    .map(([code, status]) => [status, code]),
);

/**
 * Auth.js's endpoints as the rest of /api answers: an action it does not have is the JSON 404,
 * and its own refusals (a bare `"Bad request."`) come in the error envelope. Its HTML sign-out page
 * and its redirects stay as they are, with the portal's protective headers on every answer.
 */
type AuthHandler = (request: NextRequest) => Promise<Response>;

export function authEndpoints(handlers: { GET: AuthHandler; POST: AuthHandler }) {
  const wrap =
    (handler: AuthHandler): RouteHandler =>
    async (request) => {
      const url = new URL(request.url);
      const action = url.pathname.split("/")[3] ?? "";
      if (!AUTH_ACTIONS.has(action)) {
        return withAuthEndpointHeaders(
          await errorOnlyResponse(request, new AppError("not_found", "No such sign-in endpoint.")),
        );
      }
      const refused = callbackUrlProblem(request as NextRequest, url);
      if (refused) {
        return withAuthEndpointHeaders(await errorOnlyResponse(request, new AppError("invalid_parameter", refused)));
      }
      let bounded: NextRequest;
      try {
        bounded = await withBoundedBody(request as NextRequest);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return withAuthEndpointHeaders(await errorOnlyResponse(request, error));
      }
      const response = await handler(bounded);
      if (response.status < 400) return withAuthEndpointHeaders(response);
      const code = CODE_OF_STATUS.get(response.status) ?? "internal_error";
      return withAuthEndpointHeaders(
        await errorOnlyResponse(request, new AppError(code, "The sign-in service refused this request.")),
      );
    };
  return route({ GET: wrap(handlers.GET), POST: wrap(handlers.POST) });
}

/**
 * The request with its body read here, counted as it arrives and refused past
 * AUTH_BODY_MAX_BYTES (413): Auth.js reads a form body whole. Next hands route handlers its
 * NextRequest, which is what Auth.js reads; one without a body is passed on as it is.
 */
async function withBoundedBody(request: NextRequest): Promise<NextRequest> {
  if (!request.body) return request;
  const body = await readBodyText(request, AUTH_BODY_MAX_BYTES);
  const headers = new Headers(request.headers);
  headers.delete("content-length");
  headers.delete("transfer-encoding");
  return new NextRequest(request.url, { method: request.method, headers, body });
}

/** The names Auth.js gives its callback-address cookie, over http and over https. */
const CALLBACK_COOKIES = ["authjs.callback-url", "__Secure-authjs.callback-url"];

/**
 * Auth.js takes a callback address that is neither an http(s) address nor a path (`?callbackUrl=%`,
 * or its cookie) for a fault of its configuration and answers 500: refused here, before it, as the
 * client's fault it is. The rule is Auth.js's own (lib/utils/assert.js of @auth/core).
 */
function callbackUrlProblem(request: NextRequest, url: URL): string | null {
  const offered = [
    ["callbackUrl", url.searchParams.get("callbackUrl")],
    ...CALLBACK_COOKIES.map((name) => [`the ${name} cookie`, request.cookies.get(name)?.value ?? null]),
  ];
  for (const [where, value] of offered) {
    if (value && !isHttpAddressOrPath(value, url.origin))
      return `${where} must be an http(s) address or a path starting with /.`;
  }
  return null;
}

function isHttpAddressOrPath(value: string, origin: string): boolean {
  try {
    return /^https?:$/.test(new URL(value, value.startsWith("/") ? origin : undefined).protocol);
  } catch {
    return false;
  }
}

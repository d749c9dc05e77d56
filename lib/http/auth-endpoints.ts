import type { NextRequest } from "next/server";
import { AppError, ERROR_STATUS, type ErrorCode } from "../errors";
import { errorOnlyResponse, route, type RouteHandler } from "./route";
import { withAuthEndpointHeaders } from "./security-headers";

/**
 * The actions of Auth.js that the portal's providers (credentials, OIDC) use; any other path under
 * /api/auth/ (its e-mail and passkey pages among them) is the API's JSON 404.
 */
const AUTH_ACTIONS = new Set(["providers", "session", "csrf", "signin", "signout", "callback", "error"]);

const CODE_OF_STATUS = new Map<number, ErrorCode>(
  (Object.entries(ERROR_STATUS) as [ErrorCode, number][])
    .filter(([code]) => !["invalid_cursor", "invalid_body", "version_not_licensed", "https_required"].includes(code))
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
      const action = new URL(request.url).pathname.split("/")[3] ?? "";
      if (!AUTH_ACTIONS.has(action)) {
        return withAuthEndpointHeaders(
          await errorOnlyResponse(request, new AppError("not_found", "No such sign-in endpoint.")),
        );
      }
      // Next hands route handlers its NextRequest, which is what Auth.js reads.
      const response = await handler(request as NextRequest);
      if (response.status < 400) return withAuthEndpointHeaders(response);
      const code = CODE_OF_STATUS.get(response.status) ?? "internal_error";
      return withAuthEndpointHeaders(
        await errorOnlyResponse(request, new AppError(code, "The sign-in service refused this request.")),
      );
    };
  return route({ GET: wrap(handlers.GET), POST: wrap(handlers.POST) });
}

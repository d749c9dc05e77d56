import { NextResponse, type NextFetchEvent, type NextRequest } from "next/server";
import { auth } from "@/lib/auth/next-auth";
import { API_PATH, apiPathError, badRequestPage, portalAddressProblem } from "@/lib/http/address";
import { errorOnlyResponse } from "@/lib/http/route";

// Pages anyone may open; everything else in the portal needs a session.
const PUBLIC_PAGES = [/^\/login$/, /^\/docs(\/|$)/];

/**
 * Runs before routing, for three jobs:
 * - API paths containing `%`, `/api` itself and paths starting `/API` in another case: malformed
 *   percent-encoding would make Next answer a plain-text 500 while decoding route parameters, and
 *   the others would get the portal's redirect to /login; they get the JSON envelope instead.
 *   (Only those paths come here: running the proxy for every API request costs a fifth of the
 *   throughput.)
 * - Portal addresses the portal cannot have made (malformed percent-encoding, control characters,
 *   a repeated query parameter): a 400 page, before Next fails on them or a page sees them.
 * - Portal pages: a visitor without a session goes to /login and comes back afterwards. Roles are
 *   checked by each page and server action itself, never by this alone.
 */
// With a lazily built config (lib/auth/next-auth.ts), next-auth hands back the wrapped handler as a promise.
const withSession = auth(async (request) => {
  const { pathname, search } = request.nextUrl;
  if (API_PATH.test(pathname)) {
    const error = apiPathError(pathname);
    return error ? errorOnlyResponse(request, error) : NextResponse.next();
  }
  const problem = portalAddressProblem(request.nextUrl);
  if (problem) return badRequestPage(problem);
  if (!request.auth?.user && !PUBLIC_PAGES.some((page) => page.test(pathname))) {
    const login = new URL("/login", request.nextUrl);
    login.searchParams.set("callbackUrl", `${pathname}${search}`);
    return NextResponse.redirect(login);
  }
  const response = NextResponse.next();
  response.headers.set("Strict-Transport-Security", "max-age=63072000; includeSubDomains");
  return response;
});

type ProxyHandler = (request: NextRequest, event: NextFetchEvent) => Promise<Response | undefined>;

export async function proxy(request: NextRequest, event: NextFetchEvent) {
  const handler = (await (withSession as unknown as Promise<ProxyHandler>)) as ProxyHandler;
  return handler(request, event);
}

// The second pattern also takes `/api` itself and `/API/...` (it leaves out `api/`, case-sensitively).
export const config = {
  matcher: ["/api/:path(.*%.*)", "/((?!api/|_next/|favicon.ico|robots.txt).*)"],
};

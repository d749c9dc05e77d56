import { NextResponse, type NextFetchEvent, type NextRequest } from "next/server";
import { auth } from "@/lib/auth/next-auth";
import { AppError } from "@/lib/errors";
import { signInPath } from "@/lib/http/redirect-target";
import { errorOnlyResponse } from "@/lib/http/route";

// Pages anyone may open; everything else in the portal needs a session.
const PUBLIC_PAGES = [/^\/login$/, /^\/docs(\/|$)/];

/**
 * Runs before routing, for two jobs:
 * - API paths containing `%`: malformed percent-encoding would make Next answer a plain-text 500
 *   while decoding route parameters, so it is refused here with the JSON envelope. (Only those
 *   paths come here: running the proxy for every API request costs a fifth of the throughput.)
 * - Portal pages: a visitor without a session goes to /login and comes back afterwards. Roles are
 *   checked by each page and server action itself, never by this alone.
 */
// With a lazily built config (lib/auth/next-auth.ts), next-auth hands back the wrapped handler as a promise.
const withSession = auth(async (request) => {
  const { pathname, search } = request.nextUrl;
  if (pathname.startsWith("/api/")) {
    try {
      decodeURIComponent(pathname);
    } catch {
      return errorOnlyResponse(request, new AppError("invalid_parameter", "The request path is not valid percent-encoded UTF-8."));
    }
    return NextResponse.next();
  }
  if (!request.auth?.user && !PUBLIC_PAGES.some((page) => page.test(pathname))) {
    return NextResponse.redirect(new URL(signInPath(`${pathname}${search}`), request.nextUrl));
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

export const config = {
  matcher: ["/api/:path(.*%.*)", "/((?!api/|_next/|favicon.ico|robots.txt).*)"],
};

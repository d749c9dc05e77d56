import { NextResponse, type NextFetchEvent, type NextRequest } from "next/server";
import { auth, oidcEnabled } from "@/lib/auth/next-auth";
import { env } from "@/lib/env";
import { API_PATH, apiPathError, badRequestPage, hubPathError, portalAddressProblem } from "@/lib/http/address";
import { isHubPath } from "@/lib/http/hub";
import { signInPath } from "@/lib/redirect-target";
import { errorOnlyResponse } from "@/lib/http/route";
import { contentSecurityPolicy, newNonce, pageSecurityHeaders } from "@/lib/http/security-headers";
import { storeOrigin } from "@/lib/storage/config";

// Pages anyone may open; everything else in the portal needs a session.
const PUBLIC_PAGES = [/^\/login$/, /^\/docs(\/|$)/];

/**
 * Runs before routing, for three jobs:
 * - API paths containing `%`, `/api` itself and paths starting `/API` in another case: malformed
 *   percent-encoding would make Next answer a plain-text 500 while decoding route parameters, and
 *   the others would get the portal's redirect to /login; they get the JSON envelope instead.
 *   (Only those paths come here: running the proxy for every API request costs a fifth of the
 *   throughput.) The same for the Hub protocol's paths under /hub/ that contain `%` (its clients
 *   percent-encode every revision and many paths).
 * - Portal addresses the portal cannot have made (malformed percent-encoding, control characters,
 *   a repeated query parameter): a 400 page, before Next fails on them or a page sees them.
 * - Portal pages: a visitor without a session goes to /login and comes back afterwards. Roles are
 *   checked by each page and server action itself, never by this alone. Every page gets its
 *   security headers here, with a fresh nonce for its Content-Security-Policy.
 */
// With a lazily built config (lib/auth/next-auth.ts), next-auth hands back the wrapped handler as a promise.
const withSession = auth(async (request) => {
  const { pathname, search } = request.nextUrl;
  if (API_PATH.test(pathname)) {
    const error = apiPathError(pathname);
    return error ? errorOnlyResponse(request, error) : NextResponse.next();
  }
  if (isHubPath(pathname)) {
    const error = hubPathError(pathname);
    return error ? errorOnlyResponse(request, error) : NextResponse.next();
  }
  const problem = portalAddressProblem(request.nextUrl);
  if (problem) return badRequestPage(problem);
  if (!request.auth?.user && !PUBLIC_PAGES.some((page) => page.test(pathname))) {
    return NextResponse.redirect(new URL(signInPath(`${pathname}${search}`), request.nextUrl));
  }
  // Next reads the nonce from the request's policy and puts it on the scripts it renders.
  const policy = contentSecurityPolicy({
    nonce: newNonce(),
    development: process.env.NODE_ENV === "development",
    formTargets: oidcFormTargets(),
    mediaSources: mediaSources(),
  });
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("Content-Security-Policy", policy);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  for (const [name, value] of Object.entries(pageSecurityHeaders(policy))) response.headers.set(name, value);
  return response;
});

/** The OIDC sign-in form's server action redirects the browser to the issuer, which form-action must allow. */
function oidcFormTargets(): string[] {
  const issuer = oidcEnabled() ? env().AUTH_OIDC_ISSUER : undefined;
  return issuer && URL.canParse(issuer) ? [new URL(issuer).origin] : [];
}

/** The episode player's video: the object store's origin, from the store's configuration. */
function mediaSources(): string[] {
  const origin = storeOrigin();
  return origin ? [origin] : [];
}

type ProxyHandler = (request: NextRequest, event: NextFetchEvent) => Promise<Response | undefined>;

export async function proxy(request: NextRequest, event: NextFetchEvent) {
  const handler = (await (withSession as unknown as Promise<ProxyHandler>)) as ProxyHandler;
  return handler(request, event);
}

// The last pattern also takes `/api` itself and `/API/...` (it leaves out `api/` and `hub/`, case-sensitively).
export const config = {
  matcher: ["/api/:path(.*%.*)", "/hub/:path(.*%.*)", "/((?!api/|hub/|_next/|favicon.ico|robots.txt).*)"],
};

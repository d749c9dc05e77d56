/**
 * The headers every portal page is served with (set by proxy.ts, which runs for pages but not for
 * /api/v1). Next reads the nonce from the request's Content-Security-Policy and puts it on every
 * script it renders, so only the scripts of this very response run: an injected `<script>` or
 * `onclick=` does not, and the portal cannot be framed.
 */

/** A fresh, unguessable nonce for one response (128 bits). */
export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
}

export type PolicyOptions = {
  nonce: string;
  /** `next dev` evaluates code for its error overlay and injects styles without a nonce. */
  development: boolean;
  /** Where an OIDC sign-in form sends the browser on (the issuer's origin), when configured. */
  formTargets?: readonly string[];
  /**
   * Where the episode player's video comes from: the object store's origin, whose signed URLs it
   * plays. The player also reads the episode's data table from there (range requests by fetch), so
   * the origin is allowed to connect to as well.
   */
  mediaSources?: readonly string[];
};

export function contentSecurityPolicy({
  nonce,
  development,
  formTargets = [],
  mediaSources = [],
}: PolicyOptions): string {
  const directives: Record<string, string[]> = {
    "default-src": ["'self'"],
    // 'strict-dynamic': the nonced framework scripts may load their chunks; 'self' is for browsers without CSP 3.
    // 'wasm-unsafe-eval' compiles WebAssembly only (never evaluates text as script): the episode
    // player's parquet reader decompresses the robot's data (zstd, brotli, snappy) with it.
    "script-src": [
      "'self'",
      `'nonce-${nonce}'`,
      "'strict-dynamic'",
      "'wasm-unsafe-eval'",
      ...(development ? ["'unsafe-eval'"] : []),
    ],
    "style-src": ["'self'", development ? "'unsafe-inline'" : `'nonce-${nonce}'`],
    // Charts and the timeline size their bars with style attributes, which a nonce cannot cover.
    "style-src-attr": ["'unsafe-inline'"],
    "img-src": ["'self'", "data:", "blob:"],
    "font-src": ["'self'"],
    // The player streams video straight from the store through signed URLs: that origin alone. The
    // portal serves no media of its own, so not 'self'; with no store configured, no media at all.
    "media-src": mediaSources.length ? [...mediaSources] : ["'none'"],
    "connect-src": ["'self'", ...mediaSources],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'", ...formTargets],
    "frame-ancestors": ["'none'"],
  };
  return Object.entries(directives)
    .map(([name, values]) => `${name} ${values.join(" ")}`)
    .join("; ");
}

/** The response headers of a portal page. */
export function pageSecurityHeaders(policy: string): Record<string, string> {
  return {
    "Content-Security-Policy": policy,
    // For browsers that predate frame-ancestors.
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    // Page URLs name downloads and disclosures; other sites learn nothing of them.
    "Referrer-Policy": "same-origin",
    "Strict-Transport-Security": "max-age=63072000; includeSubDomains",
  };
}

/**
 * Auth.js's own endpoints (/api/auth/*) answer outside the proxy, and some answer HTML of their
 * own: GET /api/auth/signout is a page whose one button signs the visitor out, which another site
 * could frame and get clicked. Their policy allows no script and no framing; Auth.js's pages style
 * themselves with an inline <style>, which is all they are allowed besides posting to this site.
 */
const AUTH_ENDPOINT_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** A response of Auth.js's endpoints with the portal's protective headers added. */
export function withAuthEndpointHeaders(response: Response): Response {
  // A copy: a redirect's headers may be immutable.
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(pageSecurityHeaders(AUTH_ENDPOINT_POLICY))) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

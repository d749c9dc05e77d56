export type SignInAttempt = { ok: boolean; cookie: string; location: string | null };

/**
 * A sign-in over HTTP, the way a browser does it: the CSRF token from Auth.js, then the
 * credentials callback. `ip` is the client address (as a proxy would report it); `callbackUrl`
 * is where the form asks to go afterwards.
 */
export async function attemptSignIn(
  baseUrl: string,
  email: string,
  password: string,
  ip?: string,
  callbackUrl = `${baseUrl}/`,
): Promise<SignInAttempt> {
  const forwarded: Record<string, string> = ip ? { "x-forwarded-for": ip } : {};
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`, { headers: forwarded });
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const jar = new Map<string, string>();
  const keep = (response: Response) => {
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const [name, ...value] = pair!.split("=");
      jar.set(name!.trim(), value.join("="));
    }
  };
  keep(csrf);
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const callback = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookieHeader(), ...forwarded },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl }),
  });
  keep(callback);
  const ok = [...jar.entries()].some(([name, value]) => name.endsWith("authjs.session-token") && value.length > 0);
  return { ok, cookie: cookieHeader(), location: callback.headers.get("location") };
}

/** A real portal session; returns the Cookie header to send with later requests. */
export async function signInOverHttp(baseUrl: string, email: string, password: string): Promise<string> {
  const attempt = await attemptSignIn(baseUrl, email, password);
  if (!attempt.ok) throw new Error(`sign-in as ${email} failed: ${attempt.location}`);
  return attempt.cookie;
}

/** A sign-out through Auth.js's own endpoint (CSRF token, then POST /api/auth/signout) with this session's cookie. */
export async function signOutOverHttp(baseUrl: string, cookie: string): Promise<Response> {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`, { headers: { cookie } });
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const csrfCookie = csrf.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .join("; ");
  return fetch(`${baseUrl}/api/auth/signout`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      cookie: [cookie, csrfCookie].filter(Boolean).join("; "),
    },
    body: new URLSearchParams({ csrfToken }),
  });
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/admin/users";
import type { UserRole } from "@/lib/db/schema";
import { adminCli } from "@/lib/testing/admin-cli";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { createTestOrg, operatorCtx, uniqueId } from "@/lib/testing/fixtures";
import { getDb } from "@/lib/db/client";
import { randomIp } from "@/lib/testing/http";
import { attemptSignIn, signInOverHttp, signOutOverHttp } from "@/lib/testing/portal-session";
import { callAction, postAction } from "@/lib/testing/server-actions";

// Sign-in over HTTP against a server with low limits: failed attempts are counted per account
// and per client address, and past either limit even the right password is refused.
const PASSWORD = "correct horse battery";
let server: AppServer;
const admin = adminCli("sign-in");

beforeAll(async () => {
  server = await startAppServer({ SIGNIN_FAILURES_PER_MINUTE: "3", AUTH_FAILURES_PER_MINUTE: "6" });
});
afterAll(async () => {
  await server?.stop();
});

async function newUser(role: UserRole = "licensee"): Promise<string> {
  const email = `${uniqueId("s")}@signin.example`;
  await createUser(operatorCtx(), {
    email,
    role,
    organizationId: role === "licensee" ? (await createTestOrg()).id : null,
    password: PASSWORD,
  });
  return email;
}

describe("portal sign-in", () => {
  it("signs in with the right password, and refuses a wrong one and an unknown email", async () => {
    const email = await newUser();
    expect((await attemptSignIn(server.url, email, PASSWORD, randomIp())).ok).toBe(true);
    const wrong = await attemptSignIn(server.url, email, "not the password", randomIp());
    expect(wrong.ok).toBe(false);
    expect(wrong.location).toContain("error=CredentialsSignin");
    expect((await attemptSignIn(server.url, `nobody-${email}`, PASSWORD, randomIp())).ok).toBe(false);
  });

  it("locks an account after SIGNIN_FAILURES_PER_MINUTE failures, from any address, without locking others", async () => {
    const [email, other] = [await newUser(), await newUser()];
    for (let i = 0; i < 3; i++)
      expect((await attemptSignIn(server.url, email, `wrong ${i}`, randomIp())).ok).toBe(false);
    const locked = await attemptSignIn(server.url, email, PASSWORD, randomIp());
    expect(locked.ok).toBe(false);
    expect(locked.location).toContain("code=rate_limited");
    expect((await attemptSignIn(server.url, other, PASSWORD, randomIp())).ok).toBe(true);
  });

  it("stops an address after AUTH_FAILURES_PER_MINUTE failures across accounts, without stopping other addresses", async () => {
    const ip = randomIp();
    for (let i = 0; i < 6; i++)
      expect((await attemptSignIn(server.url, `guess-${i}-${uniqueId("g")}@signin.example`, "guess", ip)).ok).toBe(
        false,
      );
    const email = await newUser();
    const blocked = await attemptSignIn(server.url, email, PASSWORD, ip);
    expect(blocked.ok).toBe(false);
    expect(blocked.location).toContain("code=rate_limited");
    expect((await attemptSignIn(server.url, email, PASSWORD, randomIp())).ok).toBe(true);
  });

  it("lets a user created with `das-admin user create` sign in with the password given on stdin", async () => {
    const email = `${uniqueId("cli")}@signin.example`;
    const created = await admin.run(["user", "create", email, "--role", "reviewer"], { stdin: `${PASSWORD}\n` });
    expect(created.code, created.stderr).toBe(0);
    expect((await attemptSignIn(server.url, email, PASSWORD, randomIp())).ok).toBe(true);
    expect((await attemptSignIn(server.url, email, `${PASSWORD}\n`, randomIp())).ok).toBe(false);
  });
});

describe("single sign-on", () => {
  it("is offered on the sign-in page only when AUTH_OIDC_ISSUER, AUTH_OIDC_ID and AUTH_OIDC_SECRET are set", async () => {
    const withOidc = await startAppServer({
      AUTH_OIDC_ISSUER: "https://idp.example.com",
      AUTH_OIDC_ID: "das",
      AUTH_OIDC_SECRET: "not-a-real-secret",
    });
    try {
      expect(await (await fetch(`${withOidc.url}/login`)).text()).toContain("Continue with single sign-on");
      const providers = (await (await fetch(`${withOidc.url}/api/auth/providers`)).json()) as Record<
        string,
        { type: string }
      >;
      expect(Object.keys(providers).sort()).toEqual(["credentials", "oidc"]);
      expect(providers.oidc!.type).toBe("oidc");
    } finally {
      await withOidc.stop();
    }
    expect(await (await fetch(`${server.url}/login`)).text()).not.toContain("Continue with single sign-on");
    expect(Object.keys((await (await fetch(`${server.url}/api/auth/providers`)).json()) as object)).toEqual([
      "credentials",
    ]);
  });
});

// Each of these has led browsers off the site after a sign-in somewhere; here every one goes home.
const HOSTILE_CALLBACKS = [
  "/\t/evil.example",
  "/\n/evil.example",
  "/\r\n/evil.example",
  "\t//evil.example",
  " //evil.example",
  "//evil.example",
  "///evil.example",
  "/\\evil.example",
  "\\\\evil.example",
  "/.//evil.example",
  "https://evil.example/datasets",
  "https:evil.example",
  "http://127.0.0.1@evil.example/",
  "javascript:alert(document.cookie)",
  "java\tscript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
];

/** Where a browser goes when told to go to `target` from the sign-in page. */
const destination = (target: string) => new URL(target, `${server.url}/login`);

/** The redirect a server action answered with (Next sends it as x-action-redirect, "url;push"), or a plain Location. */
function actionRedirect(res: Response): string | null {
  const header = res.headers.get("x-action-redirect") ?? res.headers.get("location");
  return header === null ? null : header.replace(/;(push|replace)$/, "");
}

function signInForm(email: string, callbackUrl: string): FormData {
  const form = new FormData();
  form.append("callbackUrl", callbackUrl);
  form.append("email", email);
  form.append("password", PASSWORD);
  return form;
}

describe("where sign-in leads", () => {
  it("the sign-in form's action goes to a path on this site only: a hostile callbackUrl goes home", async () => {
    const email = await newUser();
    for (const callbackUrl of HOSTILE_CALLBACKS) {
      const res = await postAction(server.url, "signInWithPassword", [{}, signInForm(email, callbackUrl)], {
        page: "/login",
      });
      await res.body?.cancel();
      const target = actionRedirect(res);
      expect(target, JSON.stringify(callbackUrl)).not.toBeNull();
      expect(target, JSON.stringify(callbackUrl)).not.toMatch(/[\u0000-\u001f\\]/);
      expect(destination(target!).origin, JSON.stringify(callbackUrl)).toBe(server.url);
      expect(destination(target!).pathname, JSON.stringify(callbackUrl)).toBe("/");
    }
  });

  it("the sign-in form's action comes back to the page a signed-out visitor asked for", async () => {
    const email = await newUser();
    const res = await postAction(
      server.url,
      "signInWithPassword",
      [{}, signInForm(email, "/datasets?outcome=failure")],
      { page: "/login" },
    );
    await res.body?.cancel();
    const target = destination(actionRedirect(res)!);
    expect(`${target.origin}${target.pathname}${target.search}`).toBe(`${server.url}/datasets?outcome=failure`);
  });

  it("Auth.js's own endpoints apply the same rule: the credentials callback and the callback URL kept for single sign-on", async () => {
    const email = await newUser();
    /** The callback URL Auth.js keeps (in a cookie, for the return from the identity provider) when asked for `callbackUrl`. */
    const keptFor = async (callbackUrl: string) => {
      const res = await fetch(`${server.url}/api/auth/signin?${new URLSearchParams({ callbackUrl })}`, {
        redirect: "manual",
      });
      await res.body?.cancel();
      const cookie = res.headers
        .getSetCookie()
        .map((c) => c.split(";")[0]!)
        .find((c) => c.startsWith("authjs.callback-url="));
      return cookie === undefined ? null : decodeURIComponent(cookie.slice("authjs.callback-url=".length));
    };
    // Auth.js's route handler knows its origin from Next's own request URL (not the Host header): its home is there.
    const home = new URL("/", (await keptFor("/"))!).href;
    for (const callbackUrl of HOSTILE_CALLBACKS) {
      const attempt = await attemptSignIn(server.url, email, PASSWORD, randomIp(), callbackUrl);
      expect(attempt.ok).toBe(true);
      expect(attempt.location, JSON.stringify(callbackUrl)).toBe(home);
      // Some of them Auth.js refuses outright (an error page, nothing kept); none is kept as anything but home.
      expect([null, home], JSON.stringify(callbackUrl)).toContain(await keptFor(callbackUrl));
    }
    expect((await attemptSignIn(server.url, email, PASSWORD, randomIp(), "/datasets?outcome=failure")).location).toBe(
      new URL("/datasets?outcome=failure", home).href,
    );
  });

  it("the sign-in page never writes a hostile callbackUrl into its form", async () => {
    for (const callbackUrl of HOSTILE_CALLBACKS) {
      const res = await fetch(`${server.url}/login?${new URLSearchParams({ callbackUrl })}`);
      const html = await res.text();
      // An address with control characters is refused before any page renders (the 400 page).
      if (res.status === 400) {
        expect(html, JSON.stringify(callbackUrl)).not.toContain('name="callbackUrl"');
        continue;
      }
      expect(res.status, JSON.stringify(callbackUrl)).toBe(200);
      const field = /<input type="hidden" name="callbackUrl" value="([^"]*)"/.exec(html);
      expect(field?.[1], JSON.stringify(callbackUrl)).toBe("/");
    }
  });
});

type Access = { page: string; route: number; action: string };

/** What a session cookie gets now: a page (its status, or where it is sent), a portal route handler's status, a server action's answer. */
async function accessWith(cookie: string): Promise<Access> {
  const page = await fetch(`${server.url}/review/disclosures`, { redirect: "manual", headers: { cookie } });
  await page.body?.cancel();
  const route = await fetch(`${server.url}/review/disclosures/export?format=csv`, {
    redirect: "manual",
    headers: { cookie },
  });
  await route.body?.cancel();
  const action = await callAction(
    server.url,
    "requestDownload",
    { dataset_id: "none", version: "1.0.0" },
    cookie,
    "/datasets/none/1.0.0",
  );
  return {
    page:
      page.status === 307 ? `to ${new URL(page.headers.get("location")!, server.url).pathname}` : String(page.status),
    route: route.status,
    action: "error" in action && action.error ? action.error.code : JSON.stringify(action),
  };
}

// A reviewer's session: the log's pages and exports are theirs, a licensee's download action is not.
const LIVE_REVIEWER: Access = { page: "200", route: 200, action: "forbidden" };
const ENDED: Access = { page: "to /login", route: 401, action: "unauthorized" };

describe("ending sessions", () => {
  it("signing out ends every session of the user: a replayed cookie is signed out everywhere at once", async () => {
    const email = await newUser("reviewer");
    const [here, elsewhere] = [
      await signInOverHttp(server.url, email, PASSWORD),
      await signInOverHttp(server.url, email, PASSWORD),
    ];
    expect(await accessWith(here)).toEqual(LIVE_REVIEWER);
    expect(await accessWith(elsewhere)).toEqual(LIVE_REVIEWER);
    const res = await postAction(server.url, "signOutAction", [], { cookie: here, page: "/review/disclosures" });
    await res.body?.cancel();
    expect(destination(actionRedirect(res)!).pathname).toBe("/login");
    expect(await accessWith(here)).toEqual(ENDED);
    expect(await accessWith(elsewhere)).toEqual(ENDED);
    // Signing in again starts a session that works.
    expect(await accessWith(await signInOverHttp(server.url, email, PASSWORD))).toEqual(LIVE_REVIEWER);
  });

  it("signing out through Auth.js's own endpoint ends them as well", async () => {
    const email = await newUser("reviewer");
    const cookie = await signInOverHttp(server.url, email, PASSWORD);
    expect(await accessWith(cookie)).toEqual(LIVE_REVIEWER);
    const res = await signOutOverHttp(server.url, cookie);
    expect(res.status).toBe(302);
    expect(await accessWith(cookie)).toEqual(ENDED);
  });

  it("a replayed cookie of an ended session cannot sign the user out of a newer one", async () => {
    const email = await newUser("reviewer");
    const old = await signInOverHttp(server.url, email, PASSWORD);
    await (
      await postAction(server.url, "signOutAction", [], { cookie: old, page: "/review/disclosures" })
    ).body?.cancel();
    const current = await signInOverHttp(server.url, email, PASSWORD);
    await (
      await postAction(server.url, "signOutAction", [], { cookie: old, page: "/review/disclosures" })
    ).body?.cancel();
    await (await signOutOverHttp(server.url, old)).body?.cancel();
    expect(await accessWith(current)).toEqual(LIVE_REVIEWER);
  });

  describe("by an admin", () => {
    let admin: string;
    let adminEmail: string;
    const idOf = async (email: string) =>
      (await getDb().$client<{ id: string }[]>`select id from users where email = ${email}`)[0]!.id;
    beforeAll(async () => {
      adminEmail = await newUser("admin");
      admin = await signInOverHttp(server.url, adminEmail, PASSWORD);
    });

    it("disabling a user ends every session they have at once, and they cannot sign in again", async () => {
      const email = await newUser("reviewer");
      const cookie = await signInOverHttp(server.url, email, PASSWORD);
      expect(await accessWith(cookie)).toEqual(LIVE_REVIEWER);
      const id = await idOf(email);
      expect(await callAction(server.url, "disableUserAction", { id }, admin)).toMatchObject({
        ok: true,
        data: { id, email },
      });
      expect(await accessWith(cookie)).toEqual(ENDED);
      expect((await attemptSignIn(server.url, email, PASSWORD, randomIp())).ok).toBe(false);
    });

    it("changing a user's role ends every session they have at once; a new sign-in has the new role", async () => {
      const email = await newUser("reviewer");
      const cookie = await signInOverHttp(server.url, email, PASSWORD);
      expect(await accessWith(cookie)).toEqual(LIVE_REVIEWER);
      const id = await idOf(email);
      const organizationId = (await createTestOrg()).id;
      expect(
        await callAction(server.url, "changeUserRoleAction", { id, role: "licensee", organizationId }, admin),
      ).toMatchObject({ ok: true, data: { role: "licensee" } });
      expect(await accessWith(cookie)).toEqual(ENDED);
      const again = await signInOverHttp(server.url, email, PASSWORD);
      expect((await accessWith(again)).page).toBe("403");
    });

    it("an admin cannot disable their own account or change their own role; an unknown user is not found", async () => {
      const id = await idOf(adminEmail);
      expect(await callAction(server.url, "disableUserAction", { id }, admin)).toMatchObject({
        ok: false,
        error: { code: "invalid_parameter" },
      });
      expect(await callAction(server.url, "changeUserRoleAction", { id, role: "reviewer" }, admin)).toMatchObject({
        ok: false,
        error: { code: "invalid_parameter" },
      });
      expect(await callAction(server.url, "disableUserAction", { id: "usr_missing" }, admin)).toMatchObject({
        ok: false,
        error: { code: "not_found" },
      });
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/admin/users";
import type { UserPrincipal } from "@/lib/auth/principal";
import { createDownload } from "@/lib/downloads/create-download";
import { getDb } from "@/lib/db/client";
import { mayEnter, type Area } from "@/lib/portal/access";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { createTestOrg, grant, importTestDataset, operatorCtx, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";
import { signInOverHttp } from "@/lib/testing/portal-session";
import { presignedOrigin } from "@/lib/storage/presigner";
import { addTerms } from "@/lib/admin/terms";
import { setDatasetListing } from "@/lib/admin/listing";
import { storeLocation } from "@/lib/storage/config";

// Every portal page and portal route handler, requested over HTTP by a real session of each role.
type Role = "licensee" | "reviewer" | "admin";
const PASSWORD = "correct horse battery";

let server: AppServer;
const cookies: Partial<Record<Role | "otherLicensee", string>> = {};
const users: Partial<Record<Role | "otherLicensee", UserPrincipal>> = {};
let pages: { path: string; area: Area }[] = [];
let otherOrgDownload = "";
/** A listed dataset that no organisation of the suite holds a licence for, with its own terms. */
let listed: { datasetId: string; episodeId: string; terms: string };

beforeAll(async () => {
  const [orgA, orgB] = [await createTestOrg(), await createTestOrg()];
  const episodes = randomEpisodes(6, 31);
  const contributor = episodes[0]!.contributor;
  const files = episodes.map((e) => ({
    path: `${e.episode_id}/cam.mp4`,
    episode_id: e.episode_id,
    stream: "cam",
    size_bytes: 10,
    sha256: "a".repeat(64),
  }));
  const datasetId = await importTestDataset([{ version: "1.0.0", episodes, files }]);
  await grant(orgA.id, datasetId, "1.0.0");
  await grant(orgB.id, datasetId, "1.0.0");
  const make = async (key: Role | "otherLicensee", role: Role, organizationId: string | null) => {
    const email = `${uniqueId(key)}@rbac.example`;
    const created = await createUser(operatorCtx(), { email, role, organizationId, password: PASSWORD });
    users[key] = { kind: "user", userId: created.id, email, role, organizationId };
  };
  await make("licensee", "licensee", orgA.id);
  await make("otherLicensee", "licensee", orgB.id);
  await make("reviewer", "reviewer", null);
  await make("admin", "admin", null);
  const download = async (user: UserPrincipal) =>
    (
      await createDownload(
        { db: getDb(), principal: user, requestId: "rbac" },
        { body: { dataset_id: datasetId, version: "1.0.0" } },
      )
    ).download.download_id;
  const listedEpisodes = randomEpisodes(2, 37);
  const listedId = await importTestDataset([{ version: "1.0.0", episodes: listedEpisodes }]);
  await setDatasetListing(operatorCtx(), { datasetId: listedId, listing: "listed" });
  const terms = await addTerms(operatorCtx(), {
    title: "RBAC terms",
    body: `# Terms\n\n${listedId}`,
    datasetId: listedId,
  });
  listed = { datasetId: listedId, episodeId: listedEpisodes[0]!.episode_id, terms: terms.document.sha256 };
  const ownDownload = await download(users.licensee!);
  otherOrgDownload = await download(users.otherLicensee!);
  pages = [
    { path: "/datasets", area: "catalog" },
    { path: `/datasets/${datasetId}`, area: "catalog" },
    { path: `/datasets/${datasetId}/1.0.0`, area: "catalog" },
    { path: `/episodes/${episodes[0]!.episode_id}`, area: "catalog" },
    { path: `/downloads/${ownDownload}`, area: "catalog" },
    { path: `/downloads/${ownDownload}/csv`, area: "catalog" },
    { path: "/notices", area: "catalog" },
    { path: "/requests", area: "catalog" },
    { path: `/datasets/${listedId}`, area: "catalog" },
    { path: `/datasets/${listedId}/request`, area: "catalog" },
    { path: `/datasets/${listedId}/request?version=1.0.0`, area: "catalog" },
    { path: "/review/overview", area: "review" },
    { path: "/review/overview?from=2026-01-01&to=2026-03-31&granularity=week", area: "review" },
    { path: "/review/disclosures", area: "review" },
    { path: `/review/disclosures/${ownDownload}`, area: "review" },
    { path: "/review/disclosures/export?format=csv", area: "review" },
    { path: `/review/contributors/${contributor}`, area: "review" },
    { path: `/review/episodes/${episodes[0]!.episode_id}`, area: "review" },
    { path: `/review/contributors/${contributor}/export?format=csv`, area: "review" },
    { path: "/review/withdrawals", area: "review" },
    { path: "/admin/organizations", area: "admin" },
    { path: "/admin/users", area: "admin" },
    { path: "/admin/licences", area: "admin" },
    { path: "/admin/licence-use", area: "admin" },
    { path: "/admin/keys", area: "admin" },
    { path: "/admin/webhooks", area: "admin" },
    { path: "/admin/webhooks?organization=org_unknown", area: "admin" },
    { path: "/admin/withdrawals", area: "admin" },
    { path: "/admin/audit", area: "admin" },
    { path: "/admin/datasets", area: "admin" },
    { path: "/admin/requests", area: "admin" },
    { path: "/admin/terms", area: "admin" },
    { path: `/admin/terms/${listed.terms}`, area: "admin" },
  ];
  server = await startAppServer();
  for (const key of ["licensee", "otherLicensee", "reviewer", "admin"] as const) {
    cookies[key] = await signInOverHttp(server.url, users[key]!.email, PASSWORD);
  }
});

afterAll(async () => {
  await server?.stop();
});

const get = (path: string, cookie?: string) =>
  fetch(`${server.url}${path}`, { redirect: "manual", headers: cookie ? { cookie } : {} });

describe("the portal's access matrix", () => {
  it("sends a signed-out visitor of every page to /login and back", async () => {
    for (const { path } of pages) {
      const res = await get(path);
      expect(res.status, path).toBe(307);
      const location = new URL(res.headers.get("location")!, server.url);
      expect(location.pathname, path).toBe("/login");
      expect(location.searchParams.get("callbackUrl"), path).toBe(path);
    }
  });

  it("leaves the sign-in page and the API reference open to everyone", async () => {
    expect((await get("/login")).status).toBe(200);
    expect((await get("/docs/api")).status).toBe(200);
  });

  for (const role of ["licensee", "reviewer", "admin"] as const) {
    it(`lets a ${role} in exactly where the policy says, and answers 403 elsewhere`, async () => {
      for (const { path, area } of pages) {
        const allowed = mayEnter(users[role]!, area);
        const res = await get(path, cookies[role]);
        expect(res.status, `${role} ${path}`).toBe(allowed ? 200 : 403);
        if (allowed && !path.includes("/csv") && !path.includes("export"))
          expect(res.headers.get("content-type"), path).toMatch(/text\/html/);
      }
    });
  }

  it("matches the service's roles: licensees browse, reviewers review, admins review and administer", () => {
    const areas = (role: Role) => (["catalog", "review", "admin"] as const).filter((a) => mayEnter(users[role]!, a));
    expect(areas("licensee")).toEqual(["catalog"]);
    expect(areas("reviewer")).toEqual(["review"]);
    expect(areas("admin")).toEqual(["review", "admin"]);
  });

  it("does not show a licensee another organisation's download, nor its file list", async () => {
    expect((await get(`/downloads/${otherOrgDownload}`, cookies.licensee)).status).toBe(404);
    expect((await get(`/downloads/${otherOrgDownload}/csv`, cookies.licensee)).status).toBe(404);
    expect((await get(`/downloads/${otherOrgDownload}`, cookies.otherLicensee)).status).toBe(200);
  });

  it("shows a listed dataset's facts to a member without a licence, but never its episodes", async () => {
    const page = await get(`/datasets/${listed.datasetId}`, cookies.licensee);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Request access");
    expect(html).not.toContain(listed.episodeId);
    expect(html).not.toContain("data-dataset-card");
    expect((await get("/datasets", cookies.licensee).then((r) => r.text())).includes(listed.datasetId)).toBe(true);
    for (const path of [`/datasets/${listed.datasetId}/1.0.0`, `/episodes/${listed.episodeId}`])
      expect((await get(path, cookies.licensee)).status, path).toBe(404);
    // No terms document has this hash: the admin's page is a 404, not an error.
    expect((await get(`/admin/terms/${"0".repeat(64)}`, cookies.admin)).status).toBe(404);
    expect((await get("/admin/terms/not-a-hash", cookies.admin)).status).toBe(404);
  });

  it("sends each role from / to its own start page", async () => {
    const start = async (role: Role) =>
      new URL((await get("/", cookies[role])).headers.get("location")!, server.url).pathname;
    expect(await start("licensee")).toBe("/datasets");
    expect(await start("reviewer")).toBe("/review/overview");
    expect(await start("admin")).toBe("/admin/organizations");
  });

  it("ends access at once when an account is disabled, whatever its session cookie says", async () => {
    const email = `${uniqueId("gone")}@rbac.example`;
    const user = await createUser(operatorCtx(), { email, role: "reviewer", password: PASSWORD });
    const cookie = await signInOverHttp(server.url, email, PASSWORD);
    expect((await get("/review/disclosures", cookie)).status).toBe(200);
    await getDb().$client`update users set disabled_at = now() where id = ${user.id}`;
    const res = await get("/review/disclosures", cookie);
    expect(res.status).toBe(307);
    expect(res.headers.get("location")).toContain("/login");
  });
});

describe("the security headers of portal pages", () => {
  /** The nonce of a response's policy, after checking the policy itself. */
  const checkedNonce = (res: Response, path: string): string => {
    const policy = res.headers.get("content-security-policy") ?? "";
    const scriptSrc =
      policy
        .split(";")
        .map((d) => d.trim())
        .find((d) => d.startsWith("script-src ")) ?? "";
    expect(scriptSrc, path).toMatch(
      /^script-src 'self' 'nonce-[A-Za-z0-9+/]{22}==' 'strict-dynamic' 'wasm-unsafe-eval'$/,
    );
    expect(policy, path).toContain("frame-ancestors 'none'");
    expect(policy, path).toContain("object-src 'none'");
    expect(policy, path).toContain("base-uri 'none'");
    // The player's video comes from the store's signed URLs: that origin, and nothing broader.
    expect(
      policy.split(";").map((d) => d.trim()),
      path,
    ).toContain(`media-src ${presignedOrigin(storeLocation())}`);
    // 'wasm-unsafe-eval' (the player's parquet decoders) compiles WebAssembly only; JavaScript eval stays off.
    expect(policy, path).not.toContain("'unsafe-eval'");
    expect(res.headers.get("x-frame-options"), path).toBe("DENY");
    expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
    expect(res.headers.get("referrer-policy"), path).toBe("same-origin");
    return /'nonce-([^']+)'/.exec(scriptSrc)![1]!;
  };

  it("carry a nonce policy that every script of the page has, a fresh one per response", async () => {
    const visits: [string, string | undefined][] = [
      ["/login", undefined],
      ["/docs/api", undefined],
      ["/no-such-page", cookies.licensee],
      ...pages
        .filter((p) => mayEnter(users.licensee!, p.area) && !/csv|export/.test(p.path))
        .map((p): [string, string | undefined] => [p.path, cookies.licensee]),
      ...pages
        .filter((p) => mayEnter(users.admin!, p.area) && !/csv|export/.test(p.path))
        .map((p): [string, string | undefined] => [p.path, cookies.admin]),
    ];
    for (const [path, cookie] of visits) {
      const res = await get(path, cookie);
      expect(res.headers.get("content-type"), path).toMatch(/text\/html/);
      const nonce = checkedNonce(res, path);
      const scripts = [...(await res.text()).matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
      expect(scripts.length, path).toBeGreaterThan(0);
      for (const tag of scripts) expect(tag, path).toContain(`nonce="${nonce}"`);
    }
    const [first, second] = [await get("/login"), await get("/login")];
    expect(checkedNonce(first, "/login")).not.toBe(checkedNonce(second, "/login"));
  });

  it("are the proxy's, which does not run for the API", async () => {
    const res = await fetch(`${server.url}/api/v1/datasets`);
    expect(res.status).toBe(401);
    expect(res.headers.get("content-security-policy")).toBeNull();
  });

  // Auth.js's endpoints answer outside the proxy, and its sign-out page is a form another site
  // could frame and get clicked.
  it("are on Auth.js's endpoints too, its own sign-out page included: no framing, no script", async () => {
    const signOutPage = await get("/api/auth/signout", cookies.licensee);
    expect(signOutPage.status).toBe(200);
    expect(signOutPage.headers.get("content-type")).toMatch(/text\/html/);
    for (const [path, res] of [
      ["/api/auth/signout", signOutPage],
      ["/api/auth/session", await get("/api/auth/session", cookies.licensee)],
      ["/api/auth/csrf", await get("/api/auth/csrf")],
      ["/api/auth/signin", await get("/api/auth/signin")],
      ["/api/auth/error?error=x", await get("/api/auth/error?error=x")],
    ] as const) {
      const policy = (res.headers.get("content-security-policy") ?? "").split(";").map((d) => d.trim());
      expect(policy, path).toContain("frame-ancestors 'none'");
      expect(policy, path).toContain("default-src 'none'");
      expect(
        policy.some((d) => d.startsWith("script-src")),
        path,
      ).toBe(false);
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
  });
});

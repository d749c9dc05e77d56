import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/admin/users";
import type { UserPrincipal } from "@/lib/auth/principal";
import { getDb } from "@/lib/db/client";
import { createDownload } from "@/lib/downloads/create-download";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { createTestOrg, grant, importTestDataset, operatorCtx, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";
import { signInOverHttp } from "@/lib/testing/portal-session";
import { rawRequest, type RawResponse } from "@/lib/testing/raw-http";

// The overview page over HTTP, as the production build serves it: who may open it, what it links
// to, and that no query string a reviewer could type or paste gives a 500.

type Role = "signedOut" | "licensee" | "reviewer" | "admin";
const PASSWORD = "correct horse battery";

let server: AppServer;
const cookies: Record<Role, string> = { signedOut: "", licensee: "", reviewer: "", admin: "" };
let datasetId: string;

beforeAll(async () => {
  const org = await createTestOrg();
  const episodes = randomEpisodes(4, 61);
  datasetId = await importTestDataset([
    {
      version: "1.0.0",
      episodes,
      files: episodes.map((e) => ({
        path: `${e.episode_id}/cam.mp4`,
        episode_id: e.episode_id,
        stream: "cam",
        size_bytes: 10,
        sha256: "a".repeat(64),
      })),
    },
  ]);
  await grant(org.id, datasetId, "1.0.0");
  const users: Partial<Record<Role, UserPrincipal>> = {};
  for (const [role, organizationId] of [
    ["licensee", org.id],
    ["reviewer", null],
    ["admin", null],
  ] as const) {
    const email = `${uniqueId(role)}@overview.example`;
    const created = await createUser(operatorCtx(), { email, role, organizationId, password: PASSWORD });
    users[role] = { kind: "user", userId: created.id, email, role, organizationId };
  }
  await createDownload(
    { db: getDb(), principal: users.licensee!, requestId: "overview" },
    { body: { dataset_id: datasetId, version: "1.0.0" } },
  );
  server = await startAppServer();
  for (const role of ["licensee", "reviewer", "admin"] as const)
    cookies[role] = await signInOverHttp(server.url, users[role]!.email, PASSWORD);
});

afterAll(async () => {
  await server?.stop();
});

const get = (target: string, role: Role) =>
  rawRequest(server.url, { path: target, headers: cookies[role] ? { cookie: cookies[role] } : {} });
const where = (target: string, res: RawResponse) => `${target} → ${res.status} ${res.text.slice(0, 200)}`;
const today = () => new Date().toISOString().slice(0, 10);

describe("/review/overview", () => {
  it("shows a reviewer and an admin this period's figures, each leading into the log", async () => {
    for (const role of ["reviewer", "admin"] as const) {
      const res = await get("/review/overview", role);
      expect(res.status, where("/review/overview", res)).toBe(200);
      expect(String(res.headers["content-type"])).toMatch(/^text\/html/);
      expect(res.text).toContain("Disclosures per day");
      expect(res.text).toContain("Episodes disclosed per day");
      // Today's bar, the organisations' rows and the versions' rows, each a search of the log. Other
      // suites share this database and download today too, so which organisations and versions make
      // the top ten is theirs to decide: the link's form is checked, on whichever rows are shown
      // (lib/disclosures/overview.test.ts checks the figures and rows on a database of its own).
      expect(res.text).toContain(`href="/review/disclosures?from=${today()}&amp;to=${today()}"`);
      expect(res.text).toMatch(
        new RegExp(`href="/review/disclosures\\?org=[a-z0-9-]+&amp;from=\\d{4}-\\d{2}-\\d{2}&amp;to=${today()}"`),
      );
      expect(res.text).toMatch(
        new RegExp(`href="/review/disclosures\\?dataset=[a-z0-9._-]+&amp;version=\\d+\\.\\d+\\.\\d+&amp;from=`),
      );
    }
  });

  it("draws weeks when asked", async () => {
    const res = await get("/review/overview?from=2026-12-28&to=2027-01-10&granularity=week", "reviewer");
    expect(res.status).toBe(200);
    expect(res.text).toContain("Disclosures per week");
    expect(res.text).toContain("2026-W53 (2026-12-28 to 2027-01-03)");
    expect(res.text).toContain("2027-W01 (2027-01-04 to 2027-01-10)");
  });

  it("refuses a licensee as every review page does, and sends a signed-out visitor to sign in", async () => {
    const refused = await get("/review/overview", "licensee");
    expect(refused.status).toBe(403);
    const signedOut = await get("/review/overview?granularity=week", "signedOut");
    expect(signedOut.status).toBe(307);
    expect(String(signedOut.headers.location)).toContain(
      "/login?callbackUrl=%2Freview%2Foverview%3Fgranularity%3Dweek",
    );
  });

  it.each([
    ["?granularity=year", "Show by must be day or week."],
    ["?granularity=__proto__", "Show by must be day or week."],
    ["?from=yesterday", "From must be a date like"],
    ["?to=2026-02-30", "To must be a date like"],
    ["?from=2026-11-21T09:30:00Z", "the overview counts whole UTC days"],
    ["?from=2027-01-02&to=2027-01-01", "From must not be after To."],
    ["?from=2000-01-01&to=2026-01-01", "A chart by day covers at most 366 days"],
    ["?from=1000-01-01&to=9999-12-31&granularity=week", "The overview covers at most 1830 days"],
    ["?from=%FF", "From must be a date like"],
    [`?from=${"9".repeat(3000)}`, "From must be a date like"],
  ])("explains %.60s on the page, with the form to correct it", async (query, message) => {
    const res = await get(`/review/overview${query}`, "reviewer");
    expect(res.status, where(query, res)).toBe(200);
    expect(res.text).toContain("Check the period");
    expect(res.text).toContain(message.replaceAll("'", "&#x27;"));
    expect(res.text).toContain('name="granularity"');
  });

  it.each([["?from=%00"], ["?to=%0A"], ["?granularity=day&granularity=week"], ["?from=2026-01-01&from=2026-02-01"]])(
    "answers %s with the 400 page",
    async (query) => {
      const res = await get(`/review/overview${query}`, "reviewer");
      expect(res.status, where(query, res)).toBe(400);
      expect(res.text).toContain("This address is not valid");
    },
  );

  it("ignores parameters it does not read", async () => {
    const res = await get("/review/overview?org=x&before=1&x=%C3%A9", "reviewer");
    expect(res.status).toBe(200);
    expect(res.text).not.toContain("Check the period");
  });

  it("gives no 500 for any query string", async () => {
    const value = fc.oneof(
      fc.constantFrom(
        "",
        "day",
        "week",
        "year",
        "2026-01-01",
        "2027-12-31",
        "0001-01-01",
        "9999-12-31",
        "2026-13-01",
        "2026-11-21T00:00:00Z",
        "%00",
        "%FF",
        "%C3%A9",
        "__proto__",
        "constructor",
        "x".repeat(2000),
      ),
      fc.stringMatching(/^[A-Za-z0-9._~%:+-]{0,24}$/),
    );
    const query = fc
      .array(fc.tuple(fc.constantFrom("from", "to", "granularity", "org"), value), { maxLength: 4 })
      .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}` : ""));
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const res = await get(`/review/overview${q}`, "reviewer");
        expect([200, 400], where(q, res)).toContain(res.status);
        expect(String(res.headers["content-type"]), q).toMatch(/^text\/html/);
        expect(res.text, q).not.toContain("This page could not be loaded");
      }),
      { numRuns: 60, seed: 20261122 },
    );
  }, 240_000);
});

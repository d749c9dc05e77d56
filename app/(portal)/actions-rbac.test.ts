import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/admin/users";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { adminWorld, auditRowsBy, pendingAccessRequest } from "@/lib/testing/admin";
import {
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import { signInOverHttp } from "@/lib/testing/portal-session";
import { callAction as callActionOn } from "@/lib/testing/server-actions";
import { getDb } from "@/lib/db/client";
import { ADMIN_ACTIONS, type AdminActionWorld } from "@/lib/testing/admin-actions";
import * as organizationActions from "./admin/organizations/actions";
import * as userActions from "./admin/users/actions";
import * as licenceActions from "./admin/licences/actions";
import * as keyActions from "./admin/keys/actions";
import * as termsActions from "./admin/terms/actions";
import * as datasetActions from "./admin/datasets/actions";
import * as requestActions from "./admin/requests/actions";
import * as withdrawalActions from "./admin/withdrawals/actions";
import * as webhookActions from "./admin/webhooks/actions";
import { addTerms } from "@/lib/admin/terms";
import { setDatasetListing } from "@/lib/admin/listing";

// Server actions called the way the browser calls them (lib/testing/server-actions.ts), with a real
// session cookie of each role. Nothing is faked.
type Role = "licensee" | "reviewer" | "admin";
const PASSWORD = "correct horse battery";

let server: AppServer;
const session: Partial<Record<Role, { cookie: string; userId: string }>> & { licenseeOrg?: string } = {};
let catalog: { datasetId: string; episodeId: string; organizationId: string };

/** Calls a server action on this suite's server. */
const callAction = (name: string, input: unknown, cookie?: string, page?: string) =>
  callActionOn(server.url, name, input, cookie, page);

async function world(): Promise<AdminActionWorld> {
  const w = await adminWorld();
  // The dataset listed with terms, and its licensee's pending request for the version it lacks.
  return { ...w, unique: uniqueId("w").slice(2), pendingRequestId: await pendingAccessRequest(w) };
}

beforeAll(async () => {
  const org = await createTestOrg();
  const episodes = randomEpisodes(3, 41);
  const datasetId = await importTestDataset([
    {
      version: "1.0.0",
      episodes,
      files: episodes.flatMap((e) => [
        { path: `${e.episode_id}.bin`, episode_id: e.episode_id, size_bytes: 1, sha256: "b".repeat(64) },
        {
          path: `${e.episode_id}/cam.mp4`,
          episode_id: e.episode_id,
          stream: "cam",
          size_bytes: 1,
          sha256: "c".repeat(64),
        },
      ]),
    },
  ]);
  await grant(org.id, datasetId, "1.0.0");
  catalog = { datasetId, episodeId: episodes[0]!.episode_id, organizationId: org.id };
  session.licenseeOrg = org.id;
  server = await startAppServer();
  for (const role of ["licensee", "reviewer", "admin"] as const) {
    const email = `${uniqueId(role)}@actions.example`;
    const user = await createUser(operatorCtx(), {
      email,
      role,
      organizationId: role === "licensee" ? org.id : null,
      password: PASSWORD,
    });
    session[role] = { cookie: await signInOverHttp(server.url, email, PASSWORD), userId: user.id };
  }
});

afterAll(async () => {
  await server?.stop();
});

describe("the admin action registry", () => {
  it("lists every server action the admin actions files export, each in the admin area", () => {
    const exported = [
      organizationActions,
      userActions,
      licenceActions,
      keyActions,
      termsActions,
      datasetActions,
      requestActions,
      withdrawalActions,
      webhookActions,
    ].flatMap((m) => Object.keys(m));
    expect(ADMIN_ACTIONS.map((a) => a.name).sort()).toEqual(exported.sort());
    for (const entry of ADMIN_ACTIONS) expect(entry.area).toBe("admin");
  });
});

describe.each(ADMIN_ACTIONS.map((a) => [a.name, a] as const))("server action %s over HTTP", (name, entry) => {
  it(`runs for an admin and ${entry.audit ? "writes one audit row naming them" : "writes nothing: it only reads"}`, async () => {
    const before = (await auditRowsBy(session.admin!.userId)).length;
    expect(await callAction(name, entry.exampleInput(await world()), session.admin!.cookie)).toMatchObject({
      ok: true,
    });
    const rows = await auditRowsBy(session.admin!.userId);
    expect(rows.length).toBe(before + (entry.audit ? 1 : 0) + (entry.alsoAudits?.length ?? 0));
    if (entry.audit) expect(rows.map((r) => r.action)).toContain(entry.audit);
    for (const also of entry.alsoAudits ?? []) expect(rows.map((r) => r.action)).toContain(also);
  });

  it.each([["reviewer"], ["licensee"]] as const)(
    "is refused for a %s with forbidden, writing nothing",
    async (role) => {
      expect(await callAction(name, entry.exampleInput(await world()), session[role]!.cookie)).toMatchObject({
        ok: false,
        error: { code: "forbidden" },
      });
      expect(await auditRowsBy(session[role]!.userId)).toEqual([]);
    },
  );

  it("never runs without a session: the request is sent to sign in", async () => {
    const w = await world();
    // Audit rows about this world only (its organisation, key, or unique names), so other suites cannot interfere.
    const aboutWorld = async () =>
      (
        await getDb().$client<{ n: number }[]>`
          select count(*)::int as n from admin_audit
          where target_id in (${w.organizationId}, ${w.keyId}) or details::text like ${`%${w.organizationId}%`} or details::text like ${`%${w.unique}%`}`
      )[0]!.n;
    const before = await aboutWorld();
    expect(await callAction(name, entry.exampleInput(w))).toEqual({ redirectedTo: "/login" });
    expect(await aboutWorld()).toBe(before);
  });
});

describe("admin actions over HTTP return errors as data", () => {
  it("a malformed input is invalid_body naming the field, and a domain error keeps its code and message", async () => {
    const admin = session.admin!.cookie;
    expect(
      await callAction(
        "createUserAction",
        { email: "someone@example.com", role: "owner", password: "0123456789" },
        admin,
      ),
    ).toMatchObject({
      ok: false,
      error: { code: "invalid_body", message: "'role' must be one of admin, reviewer, licensee" },
    });
    expect(
      await callAction(
        "createUserAction",
        { email: "someone@example.com", role: "reviewer", password: "short" },
        admin,
      ),
    ).toMatchObject({
      ok: false,
      error: { code: "invalid_parameter", message: "A password needs at least 10 characters." },
    });
    expect(
      await callAction(
        "issueKeyAction",
        { organizationId: "org_missing", name: "k", expiresInDays: null, scope: [] },
        admin,
      ),
    ).toMatchObject({
      ok: false,
      error: { code: "not_found", message: "No organisation with id 'org_missing'." },
    });
  });

  it("issueKeyAction returns the secret once; it authenticates against the API with the chosen expiry and scope", async () => {
    const w = await world();
    const before = Date.now();
    const result = await callAction(
      "issueKeyAction",
      {
        organizationId: w.organizationId,
        name: "from the portal",
        expiresInDays: 30,
        scope: [{ datasetId: w.datasetId, version: w.licensedVersion }],
      },
      session.admin!.cookie,
    );
    if (!("ok" in result) || !result.ok) throw new Error(JSON.stringify(result));
    const { secret, id, expires_at } = result.data as { secret: string; id: string; expires_at: string };
    const api = await fetch(`${server.url}/api/v1/datasets/${w.datasetId}/versions`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(api.status).toBe(200);
    const versions = (await api.json()).versions as { version: string; licensed: boolean }[];
    expect(versions.filter((v) => v.licensed).map((v) => v.version)).toEqual([w.licensedVersion]);
    expect(Date.parse(expires_at) - before).toBeGreaterThanOrEqual(30 * 86_400_000);
    expect(Date.parse(expires_at) - Date.now()).toBeLessThanOrEqual(30 * 86_400_000);
    expect(
      (
        await getDb().$client<
          { n: number }[]
        >`select count(*)::int as n from api_keys where id = ${id} and created_by_user_id = ${session.admin!.userId}`
      )[0]!.n,
    ).toBe(1);
  });
});

describe("withdrawal and webhook actions over HTTP", () => {
  it("preview then withdraw: the preview writes nothing, a stale confirmation is refused, bad input names its problem", async () => {
    const admin = session.admin!.cookie;
    const w = await world();
    const input = { datasetId: w.datasetId, episodeIds: w.episodeIds, reason: "consent withdrawn" };
    const withdrawn = async () =>
      (
        await getDb().$client<
          { n: number }[]
        >`select count(*)::int as n from withdrawn_episodes where episode_id = any(${w.episodeIds}::text[])`
      )[0]!.n;
    expect(await callAction("previewWithdrawalAction", input, admin)).toMatchObject({
      ok: true,
      data: {
        episodes: 3,
        episode_ids: [...w.episodeIds].sort(),
        versions: [{ version: "1.0.0", episodes: 3 }],
        notices: 0,
      },
    });
    expect(await withdrawn()).toBe(0);
    expect(await callAction("withdrawAction", { ...input, expectedEpisodes: 2 }, admin)).toMatchObject({
      ok: false,
      error: { code: "invalid_parameter", message: expect.stringContaining("Preview it again") },
    });
    expect(await withdrawn()).toBe(0);
    expect(await callAction("withdrawAction", { ...input, reason: "   " }, admin)).toMatchObject({
      ok: false,
      error: { code: "invalid_parameter", message: expect.stringContaining("needs a reason") },
    });
    expect(await callAction("previewWithdrawalAction", { ...input, episodeIds: ["not an id!"] }, admin)).toMatchObject({
      ok: false,
      error: { code: "invalid_parameter", message: "'not an id!' is not an episode id." },
    });
    expect(
      await callAction("previewWithdrawalAction", { ...input, datasetId: "no-such-dataset" }, admin),
    ).toMatchObject({ ok: false, error: { code: "not_found", message: "There is no dataset 'no-such-dataset'." } });
    expect(await callAction("previewWithdrawalAction", { ...input, episodeIds: w.episodeIds[0] }, admin)).toMatchObject(
      {
        ok: false,
        error: { code: "invalid_body", message: expect.stringContaining("'episodeIds'") },
      },
    );
    expect(await callAction("withdrawAction", { ...input, expectedEpisodes: 3 }, admin)).toMatchObject({
      ok: true,
      data: { withdrawal_id: expect.stringMatching(/^wd_/), episodes: 3 },
    });
    expect(await withdrawn()).toBe(3);
    expect(await callAction("previewWithdrawalAction", input, admin)).toMatchObject({
      ok: false,
      error: { code: "not_found", message: "Every named episode is withdrawn already." },
    });
  });

  it("addWebhookAction returns the secret once and lists the endpoint without it; a private address is refused", async () => {
    const admin = session.admin!.cookie;
    const w = await world();
    const added = await callAction(
      "addWebhookAction",
      { organizationId: w.organizationId, url: `https://203.0.113.10/${w.unique}` },
      admin,
    );
    expect(added).toMatchObject({
      ok: true,
      data: { id: expect.stringMatching(/^whk_/), secret: expect.stringMatching(/^whsec_/) },
    });
    const page = await fetch(`${server.url}/admin/webhooks?organization=${w.organizationId}`, {
      headers: { cookie: admin },
    });
    const html = await page.text();
    expect(html).toContain(`https://203.0.113.10/${w.unique}`);
    expect(html).not.toContain((added as { data: { secret: string } }).data.secret);
    expect(
      await callAction("addWebhookAction", { organizationId: w.organizationId, url: "http://127.0.0.1:9/hook" }, admin),
    ).toMatchObject({ ok: false, error: { code: "invalid_parameter" } });
    expect(
      await callAction("removeWebhookAction", { id: (added as { data: { id: string } }).data.id }, admin),
    ).toMatchObject({ ok: true });
    expect(
      await callAction("removeWebhookAction", { id: (added as { data: { id: string } }).data.id }, admin),
    ).toMatchObject({
      ok: false,
      error: { code: "invalid_parameter", message: "That webhook endpoint is already removed." },
    });
  });
});

describe("the notice action over HTTP", () => {
  /** A withdrawal notice to an organisation, as a withdrawal writes one. */
  async function noticeTo(organizationId: string): Promise<string> {
    const withdrawalId = uniqueId("wd");
    const noticeId = `nt_${randomBytes(16).toString("hex")}`;
    const sql = getDb().$client;
    await sql`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, episode_count)
      values (${withdrawalId}, 'operator', 'rbac', 'rbac (das-admin)', 'rbac', 1)`;
    await sql`insert into notices (id, organization_id, kind, withdrawal_id, episode_ids, deliveries)
      values (${noticeId}, ${organizationId}, 'withdrawal', ${withdrawalId}, ${[uniqueId("ep")]}::text[], '[]'::jsonb)`;
    return noticeId;
  }
  const acks = async (noticeId: string) =>
    (
      await getDb().$client<
        { n: number }[]
      >`select count(*)::int as n from notice_acknowledgements where notice_id = ${noticeId}`
    )[0]!.n;

  it("acknowledges the member's own organisation's notice; another's is not found; other roles and no session write nothing", async () => {
    const own = await noticeTo(catalog.organizationId);
    const input = { noticeId: own, statement: "Deleted every copy.", deletedPaths: [] };
    expect(await callAction("acknowledgeNoticeAction", input, session.reviewer!.cookie, "/notices")).toMatchObject({
      ok: false,
      error: { code: "forbidden" },
    });
    expect(await callAction("acknowledgeNoticeAction", input, undefined, "/notices")).toEqual({
      redirectedTo: "/login",
    });
    expect(await acks(own)).toBe(0);
    expect(await callAction("acknowledgeNoticeAction", input, session.licensee!.cookie, "/notices")).toMatchObject({
      ok: true,
      data: { acknowledgement_id: expect.stringMatching(/^ack_/) },
    });
    expect(await acks(own)).toBe(1);
    const others = await noticeTo((await createTestOrg()).id);
    expect(
      await callAction("acknowledgeNoticeAction", { ...input, noticeId: others }, session.licensee!.cookie, "/notices"),
    ).toMatchObject({ ok: false, error: { code: "not_found" } });
    expect(await acks(others)).toBe(0);
  });
});

describe("the preview actions over HTTP", () => {
  const input = () => ({ episode_id: catalog.episodeId });
  const previews = async (userId: string) =>
    getDb().$client<
      { reviewer_role: string | null; organization_id: string | null }[]
    >`select reviewer_role, organization_id from disclosures where user_id = ${userId} and channel = 'preview'`;

  it("previewEpisode discloses a licensee's preview under their organisation, once while its URLs are valid", async () => {
    const page = `/episodes/${catalog.episodeId}`;
    const first = await callAction("previewEpisode", input(), session.licensee!.cookie, page);
    expect(first).toMatchObject({
      ok: true,
      data: { episode_id: catalog.episodeId, version: "1.0.0", streams: [{ stream: "cam", media_type: "video/mp4" }] },
    });
    expect(await callAction("previewEpisode", input(), session.licensee!.cookie, page)).toEqual(first);
    expect(await previews(session.licensee!.userId)).toEqual([
      { reviewer_role: null, organization_id: expect.stringMatching(/^org_/) },
    ]);
  });

  it("previewEpisodeForReview records a reviewer and an admin as such, and neither action serves the other's area", async () => {
    const page = `/review/episodes/${catalog.episodeId}`;
    for (const role of ["reviewer", "admin"] as const) {
      expect(await callAction("previewEpisodeForReview", input(), session[role]!.cookie, page)).toMatchObject({
        ok: true,
        data: { episode_id: catalog.episodeId },
      });
      expect(await previews(session[role]!.userId)).toEqual([{ reviewer_role: role, organization_id: null }]);
      expect(
        await callAction("previewEpisode", input(), session[role]!.cookie, `/episodes/${catalog.episodeId}`),
      ).toMatchObject({ ok: false, error: { code: "forbidden" } });
    }
    const licensee = await callAction("previewEpisodeForReview", input(), session.licensee!.cookie, page);
    expect(licensee).toMatchObject({ ok: false, error: { code: "forbidden" } });
  });

  it("gives a licensee no URL for an episode outside their organisation's licences: the API's 404, nothing written", async () => {
    const elsewhere = randomEpisodes(1, 43).map((e) => ({ ...e, streams: ["cam"] }));
    const episodeId = elsewhere[0]!.episode_id;
    const otherDataset = await importTestDataset([
      {
        version: "1.0.0",
        episodes: elsewhere,
        files: [
          { path: `${episodeId}/cam.mp4`, episode_id: episodeId, stream: "cam", size_bytes: 1, sha256: "d".repeat(64) },
        ],
      },
    ]);
    await grant((await createTestOrg()).id, otherDataset, "1.0.0");
    const result = await callAction(
      "previewEpisode",
      { episode_id: episodeId },
      session.licensee!.cookie,
      `/episodes/${catalog.episodeId}`,
    );
    expect(result).toMatchObject({
      ok: false,
      error: { code: "not_found", message: "No such episode is available to you." },
    });
    expect(JSON.stringify(result)).not.toContain("X-Amz-");
    expect(
      (
        await getDb().$client<
          { n: number }[]
        >`select count(*)::int as n from disclosures where dataset_id = ${otherDataset}`
      )[0]!.n,
    ).toBe(0);
  });

  it("checks its input as the API does, and never runs without a session", async () => {
    expect(
      await callAction(
        "previewEpisode",
        { episode_id: catalog.episodeId, streams: ["nope"] },
        session.licensee!.cookie,
      ),
    ).toMatchObject({ ok: false, error: { code: "invalid_body" } });
    expect(await callAction("previewEpisode", { episode_id: 7 }, session.licensee!.cookie)).toMatchObject({
      ok: false,
      error: { code: "invalid_body" },
    });
    expect(await callAction("previewEpisode", input())).toEqual({ redirectedTo: "/login" });
    expect(await callAction("previewEpisodeForReview", input())).toEqual({ redirectedTo: "/login" });
  });
});

describe("server action requestDownload over HTTP", () => {
  const input = () => ({ dataset_id: catalog.datasetId, version: "1.0.0", episode_ids: [catalog.episodeId] });
  const explorer = () => `/datasets/${catalog.datasetId}/1.0.0`;
  const portalEntries = async (userId: string) =>
    (
      await getDb().$client<
        { n: number }[]
      >`select count(*)::int as n from disclosures where user_id = ${userId} and channel = 'portal'`
    )[0]!.n;

  it("creates a download disclosed to the licensee, on the portal channel", async () => {
    const result = await callAction("requestDownload", input(), session.licensee!.cookie, explorer());
    expect(result).toMatchObject({ ok: true });
    expect(await portalEntries(session.licensee!.userId)).toBe(1);
  });

  it.each([["reviewer"], ["admin"]] as const)("is refused for a %s, who belongs to no organisation", async (role) => {
    expect(await callAction("requestDownload", input(), session[role]!.cookie, explorer())).toMatchObject({
      ok: false,
      error: { code: "forbidden" },
    });
    expect(await portalEntries(session[role]!.userId)).toBe(0);
  });

  it("never runs without a session: the request is sent to sign in", async () => {
    expect(await callAction("requestDownload", input(), undefined, explorer())).toEqual({ redirectedTo: "/login" });
  });
});

describe("access requests over HTTP", () => {
  /** A listed dataset with its own terms, which the suite's licensee's organisation holds nothing of. */
  async function listedDataset() {
    const episodes = randomEpisodes(2, 47);
    const datasetId = await importTestDataset([
      {
        version: "1.0.0",
        episodes,
        files: episodes.map((e) => ({
          path: `${e.episode_id}/cam.mp4`,
          episode_id: e.episode_id,
          stream: "cam",
          size_bytes: 1,
          sha256: "f".repeat(64),
        })),
      },
    ]);
    await setDatasetListing(operatorCtx(), { datasetId, listing: "listed" });
    const terms = await addTerms(operatorCtx(), { title: "Listed terms", body: `# Use\n\n${datasetId}`, datasetId });
    return { datasetId, terms: terms.document.sha256 };
  }
  const page = (datasetId: string) => `/datasets/${datasetId}/request`;
  const ask = (d: { datasetId: string; terms: string }, purpose = "Research on grasping") => ({
    datasetId: d.datasetId,
    version: "1.0.0",
    purpose,
    termsSha256: d.terms,
    accepted: true,
  });
  const getPage = async (path: string, cookie: string) =>
    fetch(`${server.url}${path}`, { redirect: "manual", headers: { cookie } });

  it("grants a licence for a term under terms from the portal, and ends it early: the API refuses from then", async () => {
    const d = await listedDataset();
    const org = await createTestOrg();
    const { secret } = await createTestKey(org.id);
    const admin = session.admin!.cookie;
    const target = { organizationId: org.id, datasetId: d.datasetId, version: "1.0.0" };
    const download = () =>
      fetch(`${server.url}/api/v1/downloads`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ dataset_id: d.datasetId, version: "1.0.0" }),
      });
    expect(
      await callAction(
        "grantLicenceAction",
        { ...target, startsAt: null, endsAt: "31/12/2099", termsSha256: null },
        admin,
      ),
    ).toMatchObject({ ok: false, error: { code: "invalid_body" } });
    const granted = await callAction(
      "grantLicenceAction",
      { ...target, startsAt: "2026-01-01", endsAt: "2099-12-31", termsSha256: d.terms },
      admin,
    );
    expect(granted).toMatchObject({ ok: true, data: { created: true } });
    const id = (granted as { data: { id: string } }).data.id;
    const licence = async () =>
      (await getDb().$client`select starts_at, ends_at, terms_sha256 from licences where id = ${id}`)[0];
    // Dates are UTC days, the last one included: the licence ends at the next midnight.
    expect(await licence()).toEqual({
      starts_at: new Date("2026-01-01T00:00:00Z"),
      ends_at: new Date("2100-01-01T00:00:00Z"),
      terms_sha256: d.terms,
    });
    expect((await download()).status).toBe(201);

    // A last day before its first is refused with the reason, and nothing changes.
    expect(await callAction("endLicenceAction", { ...target, endsAt: "2025-12-30" }, admin)).toMatchObject({
      ok: false,
      error: { code: "invalid_parameter" },
    });
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect(await callAction("endLicenceAction", { ...target, endsAt: yesterday }, admin)).toMatchObject({
      ok: true,
      data: { id, previousEndsAt: "2100-01-01T00:00:00.000Z" },
    });
    expect((await licence())!.ends_at).toEqual(new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`));
    // Its only version no longer usable, the dataset is as unknown to the key as before the grant.
    expect((await download()).status).toBe(404);
  });
  it("request, accept, approve: the organisation's key downloads the version through the API", async () => {
    const d = await listedDataset();
    const licensee = session.licensee!.cookie;
    const requested = await callAction("requestAccessAction", ask(d), licensee, page(d.datasetId));
    expect(requested).toMatchObject({ ok: true, data: { id: expect.stringMatching(/^areq_/) } });
    const id = (requested as { data: { id: string } }).data.id;
    const [acceptance] = await getDb().$client`
      select a.user_id, a.terms_sha256 from access_requests r join terms_acceptances a on a.id = r.acceptance_id where r.id = ${id}`;
    expect(acceptance).toEqual({ user_id: session.licensee!.userId, terms_sha256: d.terms });
    const queue = await (await getPage("/admin/requests", session.admin!.cookie)).text();
    expect(queue).toContain(id);

    const { secret } = await createTestKey(session.licenseeOrg!);
    const download = () =>
      fetch(`${server.url}/api/v1/downloads`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ dataset_id: d.datasetId, version: "1.0.0" }),
      });
    expect((await download()).status).toBe(404);
    const approved = await callAction(
      "approveRequestAction",
      { id, startsAt: null, endsAt: "2099-12-31" },
      session.admin!.cookie,
    );
    expect(approved).toMatchObject({ ok: true, data: { id, licence_id: expect.stringMatching(/^lic_/) } });
    const licenceId = (approved as { data: { licence_id: string } }).data.licence_id;
    const [licence] = await getDb().$client`select terms_sha256, ends_at from licences where id = ${licenceId}`;
    expect(licence).toEqual({ terms_sha256: d.terms, ends_at: new Date("2100-01-01T00:00:00Z") });
    const res = await download();
    expect(res.status).toBe(201);
    expect((await res.json()).file_count).toBe(2);
    const mine = await (await getPage("/requests", licensee)).text();
    expect(mine).toContain("approved");
  });

  it("reject: the requester reads the reason on their requests page", async () => {
    const d = await listedDataset();
    const requested = await callAction("requestAccessAction", ask(d), session.licensee!.cookie, page(d.datasetId));
    const id = (requested as { data: { id: string } }).data.id;
    const reason = `Commercial use is outside these terms (${uniqueId("r")}).`;
    expect(await callAction("rejectRequestAction", { id, reason }, session.admin!.cookie)).toMatchObject({ ok: true });
    const mine = await getPage("/requests", session.licensee!.cookie);
    expect(mine.status).toBe(200);
    const html = await mine.text();
    expect(html).toContain("rejected");
    expect(html).toContain(reason);
  });

  it("an unlisted dataset cannot be requested: the page and the action answer not found", async () => {
    const d = await listedDataset();
    await setDatasetListing(operatorCtx(), { datasetId: d.datasetId, listing: "unlisted" });
    expect((await getPage(page(d.datasetId), session.licensee!.cookie)).status).toBe(404);
    expect((await getPage(`/datasets/${d.datasetId}`, session.licensee!.cookie)).status).toBe(404);
    expect(await callAction("requestAccessAction", ask(d), session.licensee!.cookie, page(d.datasetId))).toMatchObject({
      ok: false,
      error: { code: "not_found", message: "No such dataset is available to you." },
    });
    // Licensed but unlisted: still nothing to request.
    expect((await getPage(page(catalog.datasetId), session.licensee!.cookie)).status).toBe(404);
  });

  it("is the catalog area's: refused for a reviewer and an admin, sent to sign in without a session, checked as input", async () => {
    const d = await listedDataset();
    for (const role of ["reviewer", "admin"] as const)
      expect(await callAction("requestAccessAction", ask(d), session[role]!.cookie, page(d.datasetId))).toMatchObject({
        ok: false,
        error: { code: "forbidden" },
      });
    expect(await callAction("requestAccessAction", ask(d), undefined, page(d.datasetId))).toEqual({
      redirectedTo: "/login",
    });
    expect(
      await callAction(
        "requestAccessAction",
        { ...ask(d), accepted: false },
        session.licensee!.cookie,
        page(d.datasetId),
      ),
    ).toMatchObject({ ok: false, error: { code: "invalid_body" } });
    expect(
      (
        await getDb()
          .$client`select count(*)::int as n from access_requests r join dataset_versions v on v.id = r.version_id where v.dataset_id = ${d.datasetId}`
      )[0]!.n,
    ).toBe(0);
  });
});

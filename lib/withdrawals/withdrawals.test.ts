import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { createDownload } from "@/lib/downloads/create-download";
import { createPreview } from "@/lib/previews/create-preview";
import { importVersion } from "@/lib/catalog/import/import-version";
import { ImportError } from "@/lib/catalog/import/problems";
import type { EpisodeLine, FileLine } from "@/lib/catalog/import/records";
import { call } from "@/lib/testing/http";
import { expectError, expectOk } from "@/lib/testing/expect-api";
import {
  createTestKey,
  createTestOrg,
  grant,
  operatorCtx,
  randomEpisodes,
  uniqueId,
  writeImportDir,
} from "@/lib/testing/fixtures";
import { filesOf, keyPrincipal, userPrincipal } from "@/lib/testing/disclosure-fixtures";
import { createOrganization } from "@/lib/admin/organizations";
import { addWebhookEndpoint } from "@/lib/admin/webhook-endpoints";
import { createIsolatedDb } from "@/lib/testing/isolated-db";
import { previewWithdrawal, withdrawEpisodes } from "./withdraw";
import { computeWithdrawalNotices } from "@/lib/notices/withdrawal-notices";
import { acknowledgeNotice, MAX_ACKNOWLEDGEMENTS_PER_NOTICE, verifyAcknowledgements } from "@/lib/notices/acknowledge";
import { listNotices } from "@/lib/notices/list-notices";
import * as api from "../../app/api/[[...path]]/route";

// Consent withdrawal end to end on a real database, through the API's real handlers: three
// organisations receive overlapping parts of a contributor's episodes through the three channels,
// a fourth receives none of them; the contributor withdraws.

const sql = () => getDb().$client;
// A webhook endpoint on 127.0.0.1 (nothing listens there: no worker runs in this file).
process.env.WEBHOOKS_ALLOW_PRIVATE = "1";

/** A video and a joints file per episode; version 2.0.0 packs the video of A1 and B1 into one file, as LeRobot v3.0 packs episodes. */
function versionFiles(episodes: EpisodeLine[], packed: string[] | null): FileLine[] {
  const files = filesOf(episodes).map((f) =>
    f.stream === "cam" ? { ...f, path: f.path.replace(/\.bin$/, ".mp4") } : f,
  );
  if (!packed) return files;
  return [
    ...files.filter((f) => !(f.stream === "cam" && packed.includes(f.episode_id!))),
    { path: "pack/cam.mp4", episode_ids: packed, stream: "cam", size_bytes: 500, sha256: "c".repeat(64) },
  ];
}

async function importVersionOf(datasetId: string, version: string, episodes: EpisodeLine[], packed: string[] | null) {
  const dir = writeImportDir(datasetId, { version, episodes, files: versionFiles(episodes, packed) });
  try {
    return await importVersion(sql(), dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function world() {
  const alice = uniqueId("alice");
  const base = randomEpisodes(8, 2626);
  const episodes = base.map((e, i) => ({ ...e, contributor: i < 3 ? alice : uniqueId("bob") }));
  const [A1, A2, A3, B1, B2, B3, B4] = episodes.map((e) => e.episode_id) as [string, ...string[]];
  const datasetId = uniqueId("wd");
  await importVersionOf(datasetId, "1.0.0", episodes, null);
  await importVersionOf(datasetId, "2.0.0", episodes, [A1, B1!]);
  const orgs = { api: await createTestOrg(), portal: await createTestOrg(), preview: await createTestOrg() };
  const other = await createTestOrg();
  const unlicensed = await createTestOrg();
  for (const org of [...Object.values(orgs), other]) {
    await grant(org.id, datasetId, "1.0.0");
    await grant(org.id, datasetId, "2.0.0");
  }
  const keys = {
    api: (await createTestKey(orgs.api.id)).secret,
    portal: (await createTestKey(orgs.portal.id)).secret,
    preview: (await createTestKey(orgs.preview.id)).secret,
    other: (await createTestKey(other.id)).secret,
    unlicensed: (await createTestKey(unlicensed.id)).secret,
  };
  return {
    alice,
    datasetId,
    episodes,
    ids: { A1, A2: A2!, A3: A3!, B1: B1!, B2: B2!, B3: B3!, B4: B4! },
    orgs,
    other,
    keys,
  };
}

type World = Awaited<ReturnType<typeof world>>;

const get = (key: string, url: string) => call(api.GET, url, { key });
const post = (key: string, url: string, body: unknown) => call(api.POST, url, { key, method: "POST", body });

/** The three channels: an API download, a portal download, a preview; and a fourth organisation with none of alice's. */
async function receive(w: World) {
  const { A1, A2, A3, B2, B3, B4 } = w.ids;
  expectOk(
    await post(w.keys.api, "/api/v1/downloads", {
      dataset_id: w.datasetId,
      version: "1.0.0",
      episode_ids: [A1, A2, B2],
    }),
    201,
  );
  const member = await userPrincipal(operatorCtx(), w.orgs.portal.id);
  await createDownload(
    { db: getDb(), principal: member, requestId: uniqueId("req") },
    { body: { dataset_id: w.datasetId, version: "2.0.0", episode_ids: [A2, A3] } },
  );
  expectOk(await post(w.keys.preview, "/api/v1/previews", { episode_id: A3, version: "1.0.0", streams: ["cam"] }), 201);
  expectOk(
    await post(w.keys.other, "/api/v1/downloads", { dataset_id: w.datasetId, version: "1.0.0", episode_ids: [B3, B4] }),
    201,
  );
  // A reviewer's preview is disclosed without an organisation: nobody to notify.
  const reviewer = await userPrincipal(operatorCtx(), null, "reviewer");
  await createPreview({ db: getDb(), principal: reviewer, requestId: uniqueId("req") }, { episode_id: A1 });
}

describe("withdrawing a contributor", () => {
  it("notifies exactly the organisations that received the contributor's episodes, each of its own", async () => {
    const w = await world();
    await receive(w);
    const { A1, A2, A3 } = w.ids;
    // Episode lists are read (and cached) before the withdrawal, so a stale cache would show.
    const before = await get(w.keys.api, `/api/v1/datasets/${w.datasetId}/versions/1.0.0/episodes`);
    expect(before.json.total).toBe(8);

    const done = await withdrawEpisodes(operatorCtx(), { contributor: w.alice, reason: "consent withdrawn" });
    expect(done.episode_ids).toEqual([A1, A2, A3].sort());
    expect(done.versions.map((v) => [v.version, v.episodes])).toEqual([
      ["1.0.0", 3],
      ["2.0.0", 3],
    ]);
    expect(done.notices).toBe(3);

    const noticesOf = async (key: string) => (await get(key, "/api/v1/notices")).json.notices;
    const [apiNotices, portalNotices, previewNotices, otherNotices] = await Promise.all(
      [w.keys.api, w.keys.portal, w.keys.preview, w.keys.other].map(noticesOf),
    );
    expect(apiNotices.map((n: { episode_ids: string[] }) => n.episode_ids)).toEqual([[A1, A2].sort()]);
    expect(portalNotices.map((n: { episode_ids: string[] }) => n.episode_ids)).toEqual([[A2, A3].sort()]);
    expect(previewNotices.map((n: { episode_ids: string[] }) => n.episode_ids)).toEqual([[A3]]);
    expect(otherNotices).toEqual([]);
    // Each notice names the entries that carried the episodes, with their channel and when.
    expect(apiNotices[0].deliveries).toHaveLength(1);
    expect(apiNotices[0].deliveries[0]).toMatchObject({
      channel: "api",
      version: "1.0.0",
      episode_ids: [A1, A2].sort(),
    });
    expect(portalNotices[0].deliveries[0]).toMatchObject({ channel: "portal", version: "2.0.0" });
    expect(previewNotices[0].deliveries[0]).toMatchObject({ channel: "preview", version: "1.0.0", episode_ids: [A3] });
    expect(apiNotices[0].acknowledged_at).toBeNull();

    // Idempotent: computing again adds nothing.
    expect(await computeWithdrawalNotices(sql(), done.withdrawal_id)).toBe(3);
    const counted = await sql()`select count(*)::int as count from notices where withdrawal_id = ${done.withdrawal_id}`;
    expect(counted[0]!.count).toBe(3);
    // Audited in the same transaction.
    const audit = await sql()`select action from admin_audit where target_id = ${done.withdrawal_id}`;
    expect(audit.map((r) => r.action)).toEqual(["episodes.withdraw"]);
  });

  it("enqueues each notice's webhook delivery in the withdrawal's transaction, for organisations with an endpoint", async () => {
    const w = await world();
    await receive(w);
    const endpoint = await addWebhookEndpoint(operatorCtx(), {
      organizationId: w.orgs.api.id,
      url: "http://127.0.0.1:9/das-notices",
    });
    const done = await withdrawEpisodes(operatorCtx(), { contributor: w.alice, reason: "consent withdrawn" });
    // A job names its notice and nothing it says: the worker writes that from the notice (lib/notices/messages.ts).
    const jobs = await sql()<
      { organization_id: string; endpoint_id: string; type: string; keys: string[]; episode_ids: string[] }[]
    >`
      select j.data->>'organizationId' as organization_id, j.data->>'endpointId' as endpoint_id,
             j.data->>'eventType' as type, n.episode_ids,
             (select array_agg(k order by k) from jsonb_object_keys(j.data) k) as keys
      from pgboss.job j join notices n on n.id = j.data->>'noticeId'
      where n.withdrawal_id = ${done.withdrawal_id}`;
    expect(jobs).toEqual([
      {
        organization_id: w.orgs.api.id,
        endpoint_id: endpoint.id,
        type: "notice.withdrawal",
        keys: ["endpointId", "eventType", "messageId", "noticeId", "organizationId", "timestamp"],
        episode_ids: [w.ids.A1, w.ids.A2].sort(),
      },
    ]);
  });

  it("previews exactly what the withdrawal then does, leaving nothing behind; a changed count is refused", async () => {
    const w = await world();
    await receive(w);
    await addWebhookEndpoint(operatorCtx(), { organizationId: w.orgs.api.id, url: "http://127.0.0.1:9/das-notices" });
    const traces = async () =>
      (
        await sql()<{ n: number }[]>`
          select (select count(*) from withdrawals where contributor = ${w.alice})
               + (select count(*) from withdrawn_episodes x join episodes e on e.episode_id = x.episode_id where e.contributor = ${w.alice})
               + (select count(*) from admin_audit where details->>'contributor' = ${w.alice})
               + (select count(*) from pgboss.job where data->>'organizationId' = ${w.orgs.api.id})
               as n`
      )[0]!.n;
    const seen = await previewWithdrawal(operatorCtx(), { contributor: w.alice, reason: "consent withdrawn" });
    expect(Number(await traces())).toBe(0);
    expect(seen.episode_ids).toEqual([w.ids.A1, w.ids.A2, w.ids.A3].sort());
    expect(seen.notices).toBe(3);
    // Named episodes narrowed to a dataset: one of another dataset is refused, naming it.
    await expect(
      previewWithdrawal(operatorCtx(), {
        episodeIds: [w.ids.A1],
        datasetId: (await world()).datasetId,
        reason: "consent withdrawn",
      }),
    ).rejects.toMatchObject({ code: "invalid_parameter", message: expect.stringContaining(w.ids.A1) });
    // A count other than the one confirmed is refused, writing nothing.
    await expect(
      withdrawEpisodes(operatorCtx(), { contributor: w.alice, reason: "consent withdrawn", expectedEpisodes: 2 }),
    ).rejects.toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("Preview it again") });
    expect(Number(await traces())).toBe(0);
    const done = await withdrawEpisodes(operatorCtx(), {
      contributor: w.alice,
      reason: "consent withdrawn",
      expectedEpisodes: seen.episode_ids.length,
    });
    expect({ ...done, withdrawal_id: undefined, withdrawn_at: undefined }).toEqual({
      ...seen,
      withdrawal_id: undefined,
      withdrawn_at: undefined,
    });
  });

  it("takes withdrawn episodes out of every list, total, manifest, download and preview, with 410, 404 and 422", async () => {
    const w = await world();
    const { A1, A2, B1, B2 } = w.ids;
    const v1 = `/api/v1/datasets/${w.datasetId}/versions/1.0.0`;
    const v2 = `/api/v1/datasets/${w.datasetId}/versions/2.0.0`;
    // Read first, so that the API's cache holds the answers a withdrawal must change.
    expect((await get(w.keys.api, `${v1}/episodes`)).json.total).toBe(8);
    expect((await get(w.keys.api, `${v1}/manifest`)).json.episode_count).toBe(8);
    expectOk(await get(w.keys.api, `/api/v1/episodes/${A1}/annotations`));

    await withdrawEpisodes(operatorCtx(), { contributor: w.alice, reason: "consent withdrawn" });
    const alices = new Set(w.episodes.filter((e) => e.contributor === w.alice).map((e) => e.episode_id));

    for (const base of [v1, v2]) {
      const page = await get(w.keys.api, `${base}/episodes`);
      expectOk(page);
      expect(page.json.total).toBe(5);
      expect(page.json.episodes.some((e: { episode_id: string }) => alices.has(e.episode_id))).toBe(false);
      const filtered = await get(w.keys.api, `${base}/episodes?outcome=${w.episodes[0]!.outcome}`);
      const expected = w.episodes.filter((e) => e.outcome === w.episodes[0]!.outcome && !alices.has(e.episode_id));
      expect(filtered.json.total).toBe(expected.length);
      expect(filtered.json.episodes).toHaveLength(expected.length);
      const manifest = await get(w.keys.api, `${base}/manifest`);
      expect(manifest.json.episode_count).toBe(5);
      const files = manifest.json.files as { path: string; episode_ids: string[]; size_bytes: number }[];
      expect(files.some((f) => f.episode_ids.some((id) => alices.has(id)))).toBe(false);
      expect(manifest.json.total_bytes).toBe(files.reduce((s, f) => s + f.size_bytes, 0));
    }
    const versions = await get(w.keys.api, `/api/v1/datasets/${w.datasetId}/versions`);
    expect(versions.json.versions.map((v: { episode_count: number }) => v.episode_count)).toEqual([5, 5]);

    // Named directly: 410 to a licensed caller, 404 to anyone else.
    expectError(await get(w.keys.api, `/api/v1/episodes/${A1}/annotations`), 410, "episode_withdrawn");
    expectError(await get(w.keys.api, `/api/v1/episodes/${A1}/annotations?version=1.0.0`), 410, "episode_withdrawn");
    expectError(await get(w.keys.unlicensed, `/api/v1/episodes/${A1}/annotations`), 404, "not_found");
    expectError(await post(w.keys.api, "/api/v1/previews", { episode_id: A2 }), 410, "episode_withdrawn");
    expectError(await post(w.keys.unlicensed, "/api/v1/previews", { episode_id: A2 }), 404, "not_found");
    expectError(
      await post(w.keys.api, "/api/v1/downloads", { dataset_id: w.datasetId, version: "1.0.0", episode_ids: [A1, B2] }),
      410,
      "episode_withdrawn",
    );

    // B1 shares a file with A1 in 2.0.0: the file is not delivered, and the refusal names it and A1.
    for (const body of [
      { dataset_id: w.datasetId, version: "2.0.0", episode_ids: [B1] },
      { dataset_id: w.datasetId, version: "2.0.0" },
    ]) {
      const refused = await post(w.keys.api, "/api/v1/downloads", body);
      expectError(refused, 422, "withdrawn_content");
      expect(refused.json.error.message).toContain("pack/cam.mp4");
      expect(refused.json.error.message).toContain(A1);
    }
    const sharedPreview = await post(w.keys.api, "/api/v1/previews", { episode_id: B1, version: "2.0.0" });
    expectError(sharedPreview, 422, "withdrawn_content");
    // Without the shared file, B1 is delivered as before.
    expectOk(
      await post(w.keys.api, "/api/v1/downloads", {
        dataset_id: w.datasetId,
        version: "2.0.0",
        episode_ids: [B1],
        streams: ["joints"],
      }),
      201,
    );
    // A whole version without shared files delivers everything but the withdrawn episodes' files.
    const whole = await post(w.keys.api, "/api/v1/downloads", { dataset_id: w.datasetId, version: "1.0.0" });
    expectOk(whole, 201);
    const delivered = whole.json.files.flatMap((f: { episode_ids: string[] }) => f.episode_ids);
    expect(delivered.some((id: string) => alices.has(id))).toBe(false);
    expect(new Set(delivered).size).toBe(5);
  });

  it("refuses a later import of a withdrawn episode unless the operator allows it", async () => {
    const w = await world();
    await withdrawEpisodes(operatorCtx(), { episodeIds: [w.ids.A1], reason: "a bystander is recognisable" });
    const refused = await importVersionOf(w.datasetId, "3.0.0", w.episodes, null).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ImportError);
    expect((refused as ImportError).message).toContain(w.ids.A1);
    expect((refused as ImportError).message).toContain("--allow-withdrawn");
    const dir = writeImportDir(w.datasetId, { version: "3.0.0", episodes: w.episodes, files: filesOf(w.episodes) });
    try {
      const imported = await importVersion(sql(), dir, { allowWithdrawnEpisodes: true });
      expect(imported.status).toBe("imported");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await grant(w.orgs.api.id, w.datasetId, "3.0.0");
    // Back in the new version only; the versions it was withdrawn from still leave it out.
    const annotations = await get(w.keys.api, `/api/v1/episodes/${w.ids.A1}/annotations`);
    expectOk(annotations);
    expect(annotations.json.version).toBe("3.0.0");
    expectError(
      await get(w.keys.api, `/api/v1/episodes/${w.ids.A1}/annotations?version=1.0.0`),
      410,
      "episode_withdrawn",
    );
    // Withdrawing what is withdrawn already is refused, so every record says what it did.
    await expect(
      withdrawEpisodes(operatorCtx(), { episodeIds: [w.ids.A2], reason: "again" }).then(() =>
        withdrawEpisodes(operatorCtx(), { episodeIds: [w.ids.A2], reason: "again" }),
      ),
    ).rejects.toThrow(/withdrawn already/);
  });

  it("keeps withdrawals, notices and acknowledgements append-only", async () => {
    const w = await world();
    await receive(w);
    const done = await withdrawEpisodes(operatorCtx(), { contributor: w.alice, reason: "consent withdrawn" });
    for (const table of ["withdrawals", "withdrawn_episodes", "notices"]) {
      await expect(sql().unsafe(`delete from ${table} where true`)).rejects.toThrow(/append-only/);
    }
    await expect(sql()`update withdrawals set reason = 'x' where id = ${done.withdrawal_id}`).rejects.toThrow(
      /append-only/,
    );
  });
});

describe("notices and acknowledgements", () => {
  it("are the organisation's own, cursor-paginated, acknowledged with what was deleted", async () => {
    const w = await world();
    await receive(w);
    await withdrawEpisodes(operatorCtx(), { episodeIds: [w.ids.A1], reason: "first" });
    await withdrawEpisodes(operatorCtx(), { episodeIds: [w.ids.A2], reason: "second" });
    const first = await get(w.keys.api, "/api/v1/notices?limit=1");
    expectOk(first);
    expect(first.json.notices).toHaveLength(1);
    expect(first.json.notices[0].episode_ids).toEqual([w.ids.A2]);
    const second = await get(w.keys.api, `/api/v1/notices?limit=1&cursor=${first.json.next_cursor}`);
    expect(second.json.notices[0].episode_ids).toEqual([w.ids.A1]);
    expect(second.json.next_cursor).toBeNull();

    const notice = first.json.notices[0];
    const url = `/api/v1/notices/${notice.notice_id}/acknowledgements`;
    expectError(await post(w.keys.portal, url, { statement: "x", deleted_paths: [] }), 404, "not_found");
    expectError(await post(w.keys.api, url, { statement: "", deleted_paths: [] }), 400, "invalid_body");
    const made = await post(w.keys.api, url, { statement: "Deleted.", deleted_paths: [`${w.ids.A2}/cam.mp4`] });
    expectOk(made, 201);
    expect(made.json).toMatchObject({ notice_id: notice.notice_id, deleted_paths: [`${w.ids.A2}/cam.mp4`] });
    const after = await get(w.keys.api, "/api/v1/notices?limit=1");
    expect(after.json.notices[0].acknowledged_at).toBe(made.json.acknowledged_at);
  });

  it("take deleted_paths only from files the notice's deliveries delivered, each once, and at most 10 per notice", async () => {
    const w = await world();
    await receive(w);
    await withdrawEpisodes(operatorCtx(), { episodeIds: [w.ids.A1], reason: "consent withdrawn" });
    const [notice] = (await get(w.keys.api, "/api/v1/notices")).json.notices;
    const url = `/api/v1/notices/${notice.notice_id}/acknowledgements`;
    const acknowledge = (body: unknown) => post(w.keys.api, url, body);
    // The API organisation's download delivered A1, A2 and B2 of 1.0.0; B3 went to another organisation only.
    const delivered = [`${w.ids.A1}/cam.mp4`, `${w.ids.A2}/cam.mp4`];
    const strangers = ["../../etc/passwd", `${w.ids.B3}/cam.mp4`, "pack/cam.mp4"];
    for (const stranger of strangers) {
      const refused = await acknowledge({ statement: "Deleted.", deleted_paths: [...delivered, stranger, "x/y"] });
      expectError(refused, 400, "invalid_body");
      expect(refused.json.error.message).toContain(`'${stranger}' is not one of them`);
    }
    const twice = await acknowledge({ statement: "Deleted.", deleted_paths: [delivered[0], delivered[0]] });
    expectError(twice, 400, "invalid_body");
    expect(twice.json.error.message).toContain("more than once");

    const made = await acknowledge({ statement: "Deleted.", deleted_paths: delivered });
    expectOk(made, 201);
    expect(made.json.deleted_paths).toEqual(delivered);
    // The paths are optional: none is [].
    const bare = await acknowledge({ statement: "Nothing of it was kept." });
    expectOk(bare, 201);
    expect(bare.json.deleted_paths).toEqual([]);
    // A preview's files are what it delivered: the preview organisation's notice takes its A3 video.
    await withdrawEpisodes(operatorCtx(), { episodeIds: [w.ids.A3], reason: "consent withdrawn" });
    const [previewed] = (await get(w.keys.preview, "/api/v1/notices")).json.notices;
    const previewUrl = `/api/v1/notices/${previewed.notice_id}/acknowledgements`;
    expectOk(
      await post(w.keys.preview, previewUrl, { statement: "Deleted.", deleted_paths: [`${w.ids.A3}/cam.mp4`] }),
      201,
    );
    expectError(
      await post(w.keys.preview, previewUrl, { statement: "Deleted.", deleted_paths: [`${w.ids.A3}/joints.bin`] }),
      400,
      "invalid_body",
    );

    for (let i = 2; i < MAX_ACKNOWLEDGEMENTS_PER_NOTICE; i++)
      expectOk(await acknowledge({ statement: `Checked again (${i}).`, deleted_paths: [] }), 201);
    const eleventh = await acknowledge({ statement: "Once more.", deleted_paths: [] });
    expectError(eleventh, 409, "acknowledgement_limit");
    expect(eleventh.json.error.message).toContain(`has ${MAX_ACKNOWLEDGEMENTS_PER_NOTICE} acknowledgements already`);
    const [kept] = await sql()<{ n: number }[]>`
      select count(*)::int as n from notice_acknowledgements where notice_id = ${notice.notice_id}`;
    expect(kept!.n).toBe(MAX_ACKNOWLEDGEMENTS_PER_NOTICE);
  });

  it("chain: verified, and a tampered acknowledgement breaks it where it was changed", async () => {
    const iso = await createIsolatedDb("acks");
    try {
      const operator = iso.operator;
      const org = await createOrganization(operator, { slug: "acks" });
      const principal = await keyPrincipal(operator, org.id);
      const ctx = { db: iso.db, principal, requestId: "t" };
      await iso.sql`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, episode_count) values ('wd_t', 'operator', 'op', 'op', 'r', 1)`;
      const orgId = org.id;
      await iso.sql`insert into notices (id, organization_id, kind, withdrawal_id, episode_ids, deliveries)
        values (${`nt_${"a".repeat(32)}`}, ${orgId}, 'withdrawal', 'wd_t', '{e1}', '[]')`;
      for (let i = 0; i < 3; i++)
        await acknowledgeNotice(ctx, {
          noticeId: `nt_${"a".repeat(32)}`,
          statement: `deleted ${i}`,
          deletedPaths: [],
        });
      expect((await listNotices(ctx, { limit: 10 })).notices[0]!.acknowledged_at).not.toBeNull();
      expect(await verifyAcknowledgements(operator)).toEqual({ ok: true, acknowledgements: 3 });
      await iso.sql.unsafe(`alter table notice_acknowledgements disable trigger user;
        update notice_acknowledgements set statement = 'deleted nothing' where seq = 2;
        alter table notice_acknowledgements enable trigger user`);
      expect(await verifyAcknowledgements(operator)).toMatchObject({ ok: false, broken_at_seq: 2 });
    } finally {
      await iso.drop();
    }
  });
});

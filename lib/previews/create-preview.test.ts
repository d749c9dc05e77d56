import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal, UserPrincipal } from "@/lib/auth/principal";
import type { Ctx } from "@/lib/context";
import { sqlOf, type Db } from "@/lib/db/client";
import { createOrganization } from "@/lib/admin/organizations";
import { grantLicence } from "@/lib/admin/licences";
import { importVersion } from "@/lib/catalog/import/import-version";
import type { EpisodeLine, FileLine } from "@/lib/catalog/import/records";
import { appendDisclosure } from "@/lib/disclosures/append";
import { withdrawnMeanwhile } from "@/lib/catalog/withdrawn";
import { episodesDigest } from "@/lib/disclosures/chain";
import { disclosedEpisodes, getDisclosure, searchDisclosures } from "@/lib/disclosures/search";
import { verifyChain } from "@/lib/disclosures/verify";
import { allRecipientsOfContributor, clockAhead, keyPrincipal, userPrincipal } from "@/lib/testing/disclosure-fixtures";
import { randomEpisodes, uniqueId, writeImportDir } from "@/lib/testing/fixtures";
import { createIsolatedDb, withTriggersDisabled, type IsolatedDb } from "@/lib/testing/isolated-db";
import { createPreview } from "./create-preview";
import { episodeStreams, reviewEpisode } from "./episode-streams";

// Previews by every kind of caller, on a database of its own: the whole chain is this suite's, and
// its clock can be moved ahead to see a preview's URLs run out.

let iso: IsolatedDb;
let datasetId: string;
let orgId: string;
const contributors = [uniqueId("contrib"), uniqueId("contrib")];
const episodes: EpisodeLine[] = randomEpisodes(3, 501).map((e, i) => ({
  ...e,
  streams: ["cam", "joints"],
  contributor: contributors[i % 2]!,
}));
const [first, second, third] = episodes.map((e) => e.episode_id) as [string, string, string];
const files: FileLine[] = episodes.flatMap((e) => [
  {
    path: `${e.episode_id}/cam.mp4`,
    episode_id: e.episode_id,
    stream: "cam",
    size_bytes: 1234,
    sha256: "a".repeat(64),
  },
  {
    path: `${e.episode_id}/joints.parquet`,
    episode_id: e.episode_id,
    stream: "joints",
    size_bytes: 99,
    sha256: "b".repeat(64),
  },
]);
let licensee: UserPrincipal;
let reviewer: UserPrincipal;
let admin: UserPrincipal;

const ctxOn = (db: Db, principal: Principal): Ctx => ({ db, principal, requestId: uniqueId("req") });
const as = (principal: Principal) => ctxOn(iso.db, principal);

beforeAll(async () => {
  iso = await createIsolatedDb("previews");
  datasetId = uniqueId("ds");
  for (const version of ["1.0.0", "2.0.0"]) {
    const dir = writeImportDir(datasetId, { version, episodes, files });
    try {
      await importVersion(iso.sql, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const org = await createOrganization(iso.operator, { slug: uniqueId("org"), name: "Preview Org" });
  orgId = org.id;
  // Only 1.0.0 is licensed, to anyone.
  await grantLicence(iso.operator, { organizationId: org.id, datasetId, version: "1.0.0" });
  licensee = await userPrincipal(iso.operator, org.id);
  reviewer = await userPrincipal(iso.operator, null, "reviewer");
  admin = await userPrincipal(iso.operator, null, "admin");
}, 120_000);

afterAll(async () => {
  await iso?.drop();
});

const entries = () =>
  iso.sql<
    {
      id: string;
      organization_id: string | null;
      licence_id: string | null;
      user_id: string | null;
      api_key_id: string | null;
      reviewer_role: string | null;
      channel: string;
      version: string;
    }[]
  >`
    select id, organization_id, licence_id, user_id, api_key_id, reviewer_role, channel, version from disclosures order by seq`;

describe("createPreview", () => {
  it("discloses a licensee's preview under their organisation's licence, on the preview channel", async () => {
    const { preview, replayed } = await createPreview(as(licensee), { episode_id: first });
    expect(replayed).toBe(false);
    expect(preview).toMatchObject({ episode_id: first, dataset_id: datasetId, version: "1.0.0" });
    expect(preview.streams.map((s) => s.stream)).toEqual(["cam"]);
    const [entry] = (await entries()).filter((e) => e.id === preview.preview_id);
    expect(entry).toMatchObject({
      organization_id: orgId,
      user_id: licensee.userId,
      api_key_id: null,
      reviewer_role: null,
      channel: "preview",
      version: "1.0.0",
    });
    expect(entry!.licence_id).toMatch(/^lic_/);
    // The licensee cannot reach the unlicensed version.
    await expect(createPreview(as(licensee), { episode_id: first, version: "2.0.0" })).rejects.toMatchObject({
      code: "version_not_licensed",
    });
  });

  it("records a reviewer's and an admin's preview as theirs, with their role and no organisation or licence, in any version", async () => {
    const byReviewer = await createPreview(as(reviewer), { episode_id: second });
    // No licence is needed: the newest version, which nobody holds, is the one previewed.
    expect(byReviewer.preview.version).toBe("2.0.0");
    const byAdmin = await createPreview(as(admin), { episode_id: second, version: "1.0.0" });
    const rows = await entries();
    expect(rows.find((e) => e.id === byReviewer.preview.preview_id)).toMatchObject({
      organization_id: null,
      licence_id: null,
      api_key_id: null,
      user_id: reviewer.userId,
      reviewer_role: "reviewer",
      channel: "preview",
      version: "2.0.0",
    });
    expect(rows.find((e) => e.id === byAdmin.preview.preview_id)).toMatchObject({
      organization_id: null,
      licence_id: null,
      user_id: admin.userId,
      reviewer_role: "admin",
    });
    // The chain covers them (version 2 of the canonical entry) and the log shows them, role and all.
    expect(await verifyChain(iso.operator)).toMatchObject({ intact: true });
    const detail = await getDisclosure(as(reviewer), byReviewer.preview.preview_id);
    expect(detail).toMatchObject({
      hash_matches: true,
      channel: "preview",
      reviewer_role: "reviewer",
      organization: null,
      user: reviewer.email,
      licence_id: null,
    });
    expect((await disclosedEpisodes(as(reviewer), { id: detail.id, limit: 10 })).episodeIds).toEqual([second]);
  });

  it("refuses an operator, who is no person to show a video to, and a missing episode for a reviewer", async () => {
    await expect(createPreview(iso.operator, { episode_id: first })).rejects.toMatchObject({ code: "forbidden" });
    await expect(createPreview(as(reviewer), { episode_id: uniqueId("nope") })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(createPreview(as(reviewer), { episode_id: first, version: "9.9.9" })).rejects.toMatchObject({
      code: "not_found",
    });
  });

  it("writes one entry per recipient, episode, version and streams within the URLs' lifetime, and a new one after", async () => {
    const key = await keyPrincipal(iso.operator, orgId);
    const a = await createPreview(as(key), { episode_id: third });
    const count = async () =>
      (await iso.sql<{ n: number }[]>`select count(*)::int as n from disclosures where api_key_id = ${key.keyId}`)[0]!
        .n;
    // 700 s later (the log's clock moved ahead): the same preview.
    const b = await createPreview({ ...as(key), clock: clockAhead(700) }, { episode_id: third });
    expect(b.replayed).toBe(true);
    expect(b.preview).toEqual(a.preview);
    expect(await count()).toBe(1);
    // Past the lifetime: a new preview, a new entry, new URLs.
    const c = await createPreview({ ...as(key), clock: clockAhead(901) }, { episode_id: third });
    expect(c.replayed).toBe(false);
    expect(c.preview.preview_id).not.toBe(a.preview.preview_id);
    expect(c.preview.streams[0]!.url).not.toBe(a.preview.streams[0]!.url);
    expect(Date.parse(c.preview.expires_at)).toBeGreaterThan(Date.parse(a.preview.expires_at));
    expect(await count()).toBe(2);
    expect(await verifyChain(iso.operator)).toMatchObject({ intact: true });
  });

  it("is found by the reviewer by contributor, and counted apart from downloads in the contributor's report", async () => {
    const rows = await allRecipientsOfContributor(as(reviewer), contributors[1]!);
    expect(rows.map((r) => r.channel)).toEqual(rows.map(() => "preview"));
    expect(rows.map((r) => r.user)).toEqual(expect.arrayContaining([reviewer.email, admin.email]));
    const found = await searchDisclosures(as(reviewer), { filter: { contributor: contributors[1]! }, limit: 50 });
    expect(found.entries.map((e) => e.id).sort()).toEqual(rows.map((r) => r.download_id).sort());
    expect(found.entries.every((e) => e.channel === "preview" && e.episode_count === 1)).toBe(true);
  });

  it("lists an episode's streams, video to play and anything else with its size, disclosing nothing", async () => {
    const before = (await entries()).length;
    expect(await episodeStreams(as(licensee), { episodeId: first })).toEqual([
      { stream: "cam", media_type: "video/mp4", size_bytes: 1234, video: true, codec: null, table: null },
      // A parquet stream of our own format other than `data` is listed, not plotted.
      {
        stream: "joints",
        media_type: "application/vnd.apache.parquet",
        size_bytes: 99,
        video: false,
        codec: null,
        table: null,
      },
    ]);
    const reviewed = await reviewEpisode(as(reviewer), { episodeId: first });
    expect(reviewed).toMatchObject({
      dataset_id: datasetId,
      version: "2.0.0",
      versions: ["2.0.0", "1.0.0"],
      episode: { episode_id: first },
    });
    await expect(reviewEpisode(as(licensee), { episodeId: first })).rejects.toMatchObject({ code: "forbidden" });
    expect((await entries()).length).toBe(before);
  });
});

describe("the log's rules for entries without a licence", () => {
  const base = (id: string) => ({
    id,
    apiKeyId: null,
    datasetId,
    version: "1.0.0",
    versionId: 1,
    requestedScope: { episode_ids: [first] },
    episodeCount: 1,
    fileCount: 1,
    totalBytes: 1,
    episodesSha256: episodesDigest([first]),
    requestId: "req_x",
    idempotencyScope: null,
    idempotencyKey: null,
    requestSha256: "c".repeat(64),
    termsSha256: undefined as string | null | undefined,
  });
  const attempt = (entry: Parameters<typeof appendDisclosure>[1]["entry"]) =>
    iso.db.transaction(async (tx) =>
      appendDisclosure(sqlOf(tx as unknown as Db), {
        entry,
        episodeIds: [first],
        ttlSeconds: 900,
        refusals: [withdrawnMeanwhile],
      }),
    );

  it("refuse a download without a licence, and a reviewer's entry on any channel but preview, or with an organisation", async () => {
    const cases = [
      {
        ...base("dl_nolicence"),
        organizationId: orgId,
        userId: licensee.userId,
        reviewerRole: null,
        channel: "portal" as const,
        licenceId: null,
        termsSha256: null,
      },
      {
        ...base("dl_reviewerdownload"),
        organizationId: null,
        userId: reviewer.userId,
        reviewerRole: "reviewer" as const,
        channel: "portal" as const,
        licenceId: null,
      },
      {
        ...base("pv_withorg"),
        organizationId: orgId,
        userId: reviewer.userId,
        reviewerRole: "reviewer" as const,
        channel: "preview" as const,
        licenceId: null,
      },
      {
        ...base("pv_nouser"),
        organizationId: null,
        userId: null,
        reviewerRole: "admin" as const,
        channel: "preview" as const,
        licenceId: null,
      },
    ];
    for (const entry of cases) {
      const error = await attempt(entry).then(
        () => null,
        (e: unknown) => e as { code?: string; constraint_name?: string },
      );
      expect(error, entry.id).toMatchObject({ code: "23514", constraint_name: "disclosures_basis_check" });
    }
    expect(await verifyChain(iso.operator)).toMatchObject({ intact: true });
  });

  it("break the chain when a stored preview's role is altered", async () => {
    const [reviewed] = await iso.sql<
      { seq: string }[]
    >`select seq from disclosures where reviewer_role = 'reviewer' order by seq limit 1`;
    const report = await withTriggersDisabled(iso.db, async (tx, operator) => {
      await tx`update disclosures set reviewer_role = 'admin' where seq = ${reviewed!.seq}`;
      return verifyChain(operator);
    });
    expect(report).toMatchObject({
      intact: false,
      firstBadSeq: Number(reviewed!.seq),
      reason: expect.stringMatching(/altered/),
    });
  });
});

describe("simultaneous equal previews", () => {
  it("append one entry: the others find it before the lock, or under it and roll back to return it", async () => {
    const before = (await entries()).length;
    const made = await Promise.all(Array.from({ length: 8 }, () => createPreview(as(admin), { episode_id: first })));
    expect(made.filter((m) => !m.replayed)).toHaveLength(1);
    expect(new Set(made.map((m) => m.preview.preview_id)).size).toBe(1);
    expect(new Set(made.map((m) => JSON.stringify(m.preview.streams))).size).toBe(1);
    expect((await entries()).length).toBe(before + 1);
    // No episodes were left behind by the ones that rolled back.
    const [orphans] = await iso.sql<{ n: number }[]>`
      select count(*)::int as n from disclosure_episodes de where not exists (select from disclosures d where d.id = de.disclosure_id)`;
    expect(orphans!.n).toBe(0);
    expect(await verifyChain(iso.operator)).toMatchObject({ intact: true });
  });
});

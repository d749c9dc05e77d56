import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@/lib/auth/principal";
import type { Ctx } from "@/lib/context";
import { createOrganization } from "@/lib/admin/organizations";
import { grantLicence } from "@/lib/admin/licences";
import { addTerms } from "@/lib/admin/terms";
import { licenceUse, licencesEnding } from "@/lib/admin/licence-use";
import { importVersion } from "@/lib/catalog/import/import-version";
import type { EpisodeLine, FileLine } from "@/lib/catalog/import/records";
import { createDownload } from "@/lib/downloads/create-download";
import { createPreview } from "@/lib/previews/create-preview";
import { keyPrincipal, userPrincipal } from "@/lib/testing/disclosure-fixtures";
import { randomEpisodes, uniqueId, writeImportDir } from "@/lib/testing/fixtures";
import { createIsolatedDb, withTriggersDisabled, type IsolatedDb } from "@/lib/testing/isolated-db";
import { entryHash, episodesDigest, GENESIS_HASH, type ChainedEntry } from "./chain";
import { exportDisclosures } from "./export";
import { disclosureFilter } from "./filter";
import { getDisclosure, searchDisclosures } from "./search";
import { verifyChain } from "./verify";

// Entries that name the terms they were delivered under (migration 0017), on a database of its own
// that holds an entry written as the service wrote them before: the old entry must verify beside
// the new ones, and the new fields must be under the hash.

let iso: IsolatedDb;
let datasetId: string;
let termsSha256: string;
let withTerms: { licenceId: string; key: Principal };
let withoutTerms: { licenceId: string; key: Principal };
let reviewer: Principal;
let oldEntry: ChainedEntry & { hash: string };

const episodes: EpisodeLine[] = randomEpisodes(3, 1717).map((e) => ({ ...e, streams: ["cam"] }));
const files: FileLine[] = episodes.map((e) => ({
  path: `${e.episode_id}/cam.mp4`,
  episode_id: e.episode_id,
  stream: "cam",
  size_bytes: 1000,
  sha256: "a".repeat(64),
}));
const [first] = episodes.map((e) => e.episode_id) as [string];

const as = (principal: Principal): Ctx => ({ db: iso.db, principal, requestId: uniqueId("req") });
const download = (principal: Principal, version: string) =>
  createDownload(as(principal), { body: { dataset_id: datasetId, version, episode_ids: [first] } });
const stored = async (id: string) =>
  (
    await iso.sql<{ seq: string; names_terms: boolean; terms_sha256: string | null; licence_id: string | null }[]>`
      select seq, names_terms, terms_sha256, licence_id from disclosures where id = ${id}`
  )[0]!;

beforeAll(async () => {
  iso = await createIsolatedDb("terms");
  datasetId = uniqueId("ds");
  for (const version of ["1.0.0", "2.0.0"]) {
    const dir = writeImportDir(datasetId, { version, episodes, files });
    try {
      await importVersion(iso.sql, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const terms = await addTerms(iso.operator, {
    title: "Research licence v1",
    body: `Use for research only. ${uniqueId("t")}`,
  });
  termsSha256 = terms.document.sha256;
  const org = await createOrganization(iso.operator, { slug: uniqueId("org"), name: "Terms Org" });
  const granted = await grantLicence(iso.operator, {
    organizationId: org.id,
    datasetId,
    version: "1.0.0",
    termsSha256,
  });
  const plain = await grantLicence(iso.operator, { organizationId: org.id, datasetId, version: "2.0.0" });
  const key = await keyPrincipal(iso.operator, org.id);
  withTerms = { licenceId: granted.id, key };
  withoutTerms = { licenceId: plain.id, key };
  reviewer = await userPrincipal(iso.operator, null, "reviewer");

  // An entry as the append wrote it before migration 0017: no terms, canonical version 1.
  const [version] = await iso.sql<{ id: number }[]>`
    select id from dataset_versions where dataset_id = ${datasetId} and version = '1.0.0'`;
  const [clock] = await iso.sql<{ now: Date }[]>`select date_trunc('second', now()) as now`;
  const entry: ChainedEntry = {
    id: "dl_0000000000000000000000001",
    seq: 1,
    occurredAt: clock!.now,
    organizationId: org.id,
    apiKeyId: key.kind === "api_key" ? key.keyId : null,
    userId: null,
    reviewerRole: null,
    channel: "api",
    datasetId,
    version: "1.0.0",
    licenceId: granted.id,
    requestedScope: { episode_ids: [first] },
    episodeCount: 1,
    fileCount: 1,
    totalBytes: 1000,
    episodesSha256: episodesDigest([first]),
    expiresAt: new Date(clock!.now.getTime() + 900_000),
    requestId: "req_before_0017",
    prevHash: GENESIS_HASH,
  };
  oldEntry = { ...entry, hash: entryHash(entry) };
  await iso.sql.begin(async (tx) => {
    // With the entry's occurred_at, which the episodes carry since the log is partitioned (migration 0026).
    await tx`insert into disclosure_episodes (disclosure_id, version_id, episode_id, occurred_at)
      values (${entry.id}, ${version!.id}, ${first}, ${entry.occurredAt})`;
    await tx`
      insert into disclosures (id, seq, occurred_at, organization_id, api_key_id, user_id, reviewer_role, channel, dataset_id, version,
        version_id, licence_id, requested_scope, episode_count, file_count, total_bytes, episodes_sha256, expires_at, request_id,
        request_sha256, prev_hash, hash)
      values (${entry.id}, 1, ${entry.occurredAt}, ${entry.organizationId}, ${entry.apiKeyId}, null, null, 'api', ${datasetId}, '1.0.0',
        ${version!.id}, ${entry.licenceId}, ${JSON.stringify(entry.requestedScope)}::jsonb, 1, 1, 1000, ${entry.episodesSha256},
        ${entry.expiresAt}, ${entry.requestId}, ${"0".repeat(64)}, ${GENESIS_HASH}, ${oldEntry.hash})`;
  });
  // Its hash, computed here, is the one the service computed then (lib/disclosures/chain.test.ts holds
  // the canonical form of such entries to hashes taken before 0017); the insert is the one the append
  // made then, without the new columns, which read as migration 0017 makes every older row read.
}, 180_000);

afterAll(async () => {
  await iso?.drop();
});

describe("entries name the terms they were delivered under", () => {
  it("keeps an entry written before migration 0017 verifying, as one that names no terms", async () => {
    expect(await stored(oldEntry.id)).toMatchObject({ names_terms: false, terms_sha256: null });
    expect(await verifyChain(iso.operator)).toMatchObject({ intact: true, count: 1, headHash: oldEntry.hash });
    const detail = await getDisclosure(as(reviewer), oldEntry.id);
    expect(detail).toMatchObject({ hash_matches: true, names_terms: false, terms_sha256: null });
  });

  it("records a download under a licence with terms with the document's SHA-256, under the hash", async () => {
    const { download: made } = await download(withTerms.key, "1.0.0");
    expect(await stored(made.download_id)).toMatchObject({
      names_terms: true,
      terms_sha256: termsSha256,
      licence_id: withTerms.licenceId,
    });
    const detail = await getDisclosure(as(reviewer), made.download_id);
    expect(detail).toMatchObject({ hash_matches: true, terms_sha256: termsSha256, terms_title: "Research licence v1" });
    // The old entry and the new one in one chain.
    expect(await verifyChain(iso.operator)).toMatchObject({ intact: true, headHash: detail.hash });
  });

  it("records a licence without terms as naming none, and a preview under a licence with terms", async () => {
    const { download: plain } = await download(withoutTerms.key, "2.0.0");
    expect(await stored(plain.download_id)).toMatchObject({ names_terms: true, terms_sha256: null });
    const { preview } = await createPreview(as(withTerms.key), { episode_id: first, version: "1.0.0" });
    expect(await stored(preview.preview_id)).toMatchObject({ names_terms: true, terms_sha256: termsSha256 });
    // A reviewer's preview has no licence and names no terms.
    const { preview: reviewed } = await createPreview(as(reviewer), { episode_id: first });
    expect(await stored(reviewed.preview_id)).toMatchObject({
      names_terms: false,
      terms_sha256: null,
      licence_id: null,
    });
    expect(await verifyChain(iso.operator)).toMatchObject({ intact: true });
  });

  it("lets the reviewer search and export by licence and by terms document", async () => {
    const search = (params: { licence?: string; terms?: string }) => {
      const { filter, problems } = disclosureFilter(params);
      expect(problems).toEqual([]);
      return searchDisclosures(as(reviewer), { filter, limit: 50 });
    };
    const underTerms = await search({ terms: termsSha256.toUpperCase() });
    // The download and the preview made under the terms; not the entry from before 0017, which names none.
    expect(underTerms.entries.map((e) => e.channel).sort()).toEqual(["api", "preview"]);
    const underLicence = await search({ licence: withTerms.licenceId });
    expect(underLicence.entries.map((e) => e.id)).toContain(oldEntry.id);
    expect(underLicence.entries).toHaveLength(3);
    expect((await search({ licence: withoutTerms.licenceId })).entries).toHaveLength(1);
    expect(disclosureFilter({ terms: "abc" }).problems).toHaveLength(1);
    expect(disclosureFilter({ licence: "x'; drop" }).problems).toHaveLength(1);

    let csv = "";
    for await (const chunk of exportDisclosures(as(reviewer), { termsSha256 }, "csv")) csv += chunk.toString();
    const [header, ...lines] = csv.trim().split("\n");
    expect(header!.split(",")).toContain("terms_sha256");
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toContain(termsSha256);
  });

  it("detects a changed terms hash, terms removed, and terms added to an old entry", async () => {
    const [newest] = await iso.sql<{ seq: string }[]>`
      select seq from disclosures where terms_sha256 = ${termsSha256} order by seq limit 1`;
    const seq = Number(newest!.seq);
    const tampers = [
      // Another document's hash (the key still holds: the document exists).
      async (tx: typeof iso.sql) => {
        const [doc] = await tx<{ sha256: string }[]>`
          insert into terms_documents (sha256, title, body, created_by)
          values (encode(sha256(convert_to('other terms', 'UTF8')), 'hex'), 'Other', 'other terms', 'test')
          returning sha256`;
        await tx`update disclosures set terms_sha256 = ${doc!.sha256} where seq = ${seq}`;
      },
      async (tx: typeof iso.sql) => tx`update disclosures set terms_sha256 = null where seq = ${seq}`,
      // Made to look like an entry from before migration 0017.
      async (tx: typeof iso.sql) =>
        tx`update disclosures set terms_sha256 = null, names_terms = false where seq = ${seq}`,
    ];
    for (const tamper of tampers) {
      const report = await withTriggersDisabled(iso.db, async (tx, operator) => {
        await tamper(tx);
        return verifyChain(operator, { writeCheckpoint: false });
      });
      expect(report).toMatchObject({ intact: false, firstBadSeq: seq, reason: expect.stringContaining("altered") });
    }
    const onOld = await withTriggersDisabled(iso.db, async (tx, operator) => {
      await tx`update disclosures set names_terms = true where seq = 1`;
      return verifyChain(operator, { writeCheckpoint: false });
    });
    expect(onOld).toMatchObject({ intact: false, firstBadSeq: 1 });
    expect(await verifyChain(iso.operator)).toMatchObject({ intact: true });
  });

  it("keeps each licence's totals, and the rebuild gives the same", async () => {
    const totals = await iso.sql<{ channel: string; entries: string; episodes: string; bytes: string }[]>`
      select channel, entries, episodes, bytes from disclosure_licence_totals
      where licence_id = ${withTerms.licenceId} order by channel`;
    expect(totals.map((t) => [t.channel, Number(t.entries)])).toEqual([
      ["api", 2],
      ["preview", 1],
    ]);
    expect(Number(totals[0]!.bytes)).toBe(2000);
    const before = await iso.sql`select * from disclosure_licence_totals order by licence_id, channel`;
    await iso.sql`select das_rebuild_disclosure_summaries()`;
    expect(await iso.sql`select * from disclosure_licence_totals order by licence_id, channel`).toEqual(before);
  });

  it("gives the owner each licence's downloads, previews, episodes, bytes and last use", async () => {
    const use = await licenceUse(iso.operator);
    const [lastEntry] = await iso.sql<{ occurred_at: Date }[]>`
      select occurred_at from disclosures where licence_id = ${withTerms.licenceId} order by seq desc limit 1`;
    expect(use.find((l) => l.id === withTerms.licenceId)).toMatchObject({
      dataset_id: datasetId,
      version: "1.0.0",
      terms_title: "Research licence v1",
      downloads: 2,
      previews: 1,
      episodes: 3,
      last_used_at: lastEntry!.occurred_at,
    });
    expect(use.find((l) => l.id === withoutTerms.licenceId)).toMatchObject({ downloads: 1, previews: 0, bytes: 1000 });
  });

  it("lists the licences in force that end within 30 days, soonest first", async () => {
    const day = 86_400_000;
    const endingIn = async (days: number, version: string) => {
      const org = await createOrganization(iso.operator, { slug: uniqueId("org"), name: `Ends in ${days}` });
      const endsAt = new Date(Date.now() + days * day);
      return (await grantLicence(iso.operator, { organizationId: org.id, datasetId, version, endsAt })).id;
    };
    const soon = await endingIn(10, "1.0.0");
    const sooner = await endingIn(2, "2.0.0");
    const later = await endingIn(40, "1.0.0");
    const ending = (await licencesEnding(iso.operator)).map((l) => l.id);
    expect(ending).toEqual([sooner, soon]);
    expect(ending).not.toContain(later);
  });
});

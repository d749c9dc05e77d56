import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiKeyPrincipal } from "@/lib/auth/principal";
import type { LogClock } from "@/lib/context";
import { getDb } from "@/lib/db/client";
import type { FileLine } from "@/lib/catalog/import/records";
import { clockAhead, keyPrincipal, makeDownload } from "@/lib/testing/disclosure-fixtures";
import {
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
  writeImportDir,
} from "@/lib/testing/fixtures";
import { createOrganization } from "@/lib/admin/organizations";
import { grantLicence } from "@/lib/admin/licences";
import { InvalidationChannel } from "@/lib/cache/invalidation";
import { ReadCache } from "@/lib/cache/read-cache";
import { importVersion } from "@/lib/catalog/import/import-version";
import { createIsolatedDb, type IsolatedDb } from "@/lib/testing/isolated-db";
import { withdrawEpisodes } from "@/lib/withdrawals/withdraw";
import { createDownload } from "./create-download";
import { recordedDownload } from "./download";
import { until } from "@/lib/testing/until";

// A download's URLs are signed while its entry is appended, at the time the entry will most likely
// have (decision 0148). Whichever second the entry gets, every URL is signed at it: a replay of the
// download, which signs at the entry's time, answers the very same URLs.

const episodes = randomEpisodes(40, 148).map((e) => ({ ...e, streams: ["cam"] }));
const files: FileLine[] = episodes.map((e) => ({
  path: `${e.episode_id}/cam.mp4`,
  episode_id: e.episode_id,
  stream: "cam",
  size_bytes: 1000,
  sha256: "c".repeat(64),
}));
let datasetId: string;
let principal: ApiKeyPrincipal;

beforeAll(async () => {
  datasetId = await importTestDataset([{ version: "1.0.0", episodes, files }]);
  const org = await createTestOrg();
  await grant(org.id, datasetId, "1.0.0");
  principal = await keyPrincipal(operatorCtx(), org.id);
}, 120_000);

/** SigV4's X-Amz-Date of a time: 20261202T165001Z. */
const amzDate = (at: Date) => at.toISOString().replace(/[-:]|\.\d{3}/g, "");

describe("a download's URLs", () => {
  it.each<[string, LogClock | undefined]>([
    ["the entry gets the second they were signed ahead for", undefined],
    ["the entry gets another second (its clock an hour ahead)", clockAhead(3600)],
  ])("are signed at the entry's time when %s", async (_, clock) => {
    const made = await makeDownload(getDb(), principal, { dataset_id: datasetId, version: "1.0.0" }, clock);
    const { download } = made;
    expect(download.file_count).toBe(files.length);
    const [entry] = await getDb().$client<{ occurred_at: Date; expires_at: Date }[]>`
      select occurred_at, expires_at from disclosures where id = ${download.download_id}`;
    expect(download.expires_at).toBe(entry!.expires_at.toISOString());
    for (const file of download.files)
      expect(new URL(file.url).searchParams.get("X-Amz-Date")).toBe(amzDate(entry!.occurred_at));
    const replayed = await recordedDownload({ db: getDb(), principal, requestId: "req-replay" }, download.download_id);
    expect(replayed).toEqual(download);
  });
});

// A released version's scope is resolved once per instance, until an episode of it is withdrawn.
// On a database of its own: a write by a suite running alongside would notify and flush the cache.
describe("a download's resolved scope, kept by the instance's cache", () => {
  let iso: IsolatedDb;
  let channel: InvalidationChannel;
  let cache: ReadCache;
  let isoDataset: string;
  let isoPrincipal: ApiKeyPrincipal;
  beforeAll(async () => {
    iso = await createIsolatedDb("scopes");
    isoDataset = uniqueId("ds");
    const dir = writeImportDir(isoDataset, { version: "1.0.0", episodes, files });
    try {
      await importVersion(iso.sql, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const org = await createOrganization(iso.operator, { slug: uniqueId("org"), name: "Scope Org" });
    await grantLicence(iso.operator, { organizationId: org.id, datasetId: isoDataset, version: "1.0.0" });
    isoPrincipal = await keyPrincipal(iso.operator, org.id);
    channel = new InvalidationChannel({ url: iso.url, notifier: iso.sql, relistenMs: 100 });
    cache = new ReadCache(channel, 1 << 20);
    channel.start();
    await until(() => channel.listening);
  }, 120_000);
  afterAll(async () => {
    await channel?.stop();
    await iso?.drop();
  });

  const download = () =>
    createDownload(
      { db: iso.db, principal: isoPrincipal, requestId: uniqueId("req"), cache },
      { body: { dataset_id: isoDataset, version: "1.0.0" } },
    ).then((made) => made.download);

  it("serves the same scope from memory, and resolves it again once an episode is withdrawn", async () => {
    const first = await download();
    expect(first.file_count).toBe(files.length);
    expect(cache.held("scopes")).toBe(files.length);
    // A change no trigger announces (as none can happen to a released version): the cache still
    // answers, which shows the second download's files came from it.
    await iso.sql.begin(async (tx) => {
      await tx`alter table files disable trigger files_notify_cache`;
      await tx`update files set size_bytes = size_bytes + 1
        where version_id = (select id from dataset_versions where dataset_id = ${isoDataset})`;
      await tx`alter table files enable trigger files_notify_cache`;
    });
    const second = await download();
    expect(second.total_bytes).toBe(first.total_bytes);
    // A withdrawal notifies: the next download resolves the scope again, without the episode.
    const generation = channel.generation;
    const gone = episodes[3]!.episode_id;
    await withdrawEpisodes(iso.operator, { episodeIds: [gone], reason: "consent withdrawn" });
    await until(() => channel.generation !== generation && channel.listening);
    const third = await download();
    expect(third.files.map((f) => f.episode_id)).not.toContain(gone);
    expect(third.file_count).toBe(files.length - 1);
    // Read afresh: the sizes as they now are (1,001 bytes each), for the 39 files left.
    expect(third.total_bytes).toBe((files.length - 1) * 1001);
  });
});

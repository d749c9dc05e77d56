import { beforeAll, describe, expect, it } from "vitest";
import type { ApiKeyPrincipal } from "@/lib/auth/principal";
import type { LogClock } from "@/lib/context";
import { getDb } from "@/lib/db/client";
import type { FileLine } from "@/lib/catalog/import/records";
import { clockAhead, keyPrincipal, makeDownload } from "@/lib/testing/disclosure-fixtures";
import { createTestOrg, grant, importTestDataset, operatorCtx, randomEpisodes } from "@/lib/testing/fixtures";
import { recordedDownload } from "./download";

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

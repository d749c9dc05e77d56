import { beforeAll, describe, expect, it } from "vitest";
import type { FileLine } from "@/lib/catalog/import/records";
import { verifyChain } from "@/lib/disclosures/verify";
import { grant, importTestDataset, operatorCtx, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";
import { expectError, expectOk } from "@/lib/testing/expect-api";
import { disclosureRows, expectedScope, expectSignedUrls, failAtCommit, versionIdOf } from "@/lib/testing/downloads";
import {
  body,
  datasetId,
  download,
  episodes,
  expectRefused,
  extra,
  FILES,
  hiddenEpisode,
  hiddenId,
  ids,
  noFiles,
  org,
  ourEntries,
  setUpDownloadFixture,
  sha,
  sql,
} from "@/lib/testing/create-download-fixture";

// The requests POST /api/v1/downloads refuses for what they ask (streams, episodes, versions the
// key's licences do not hold, too many files, a key reused for another body) and a failure at
// commit: each answered in the error envelope, with no URL, and nothing left in the disclosure log.

setUpDownloadFixture();

describe("POST /api/v1/downloads: errors", () => {
  const e = (i: number) => episodes[i]!;

  it("names unknown streams, including one that only another version has", async () => {
    const before = (await ourEntries()).length;
    const res = await download(body({ streams: ["cam", "thermal", "lidar"] }));
    await expectRefused(res, 400, "invalid_body", before);
    expect(res.json.error.message).toContain("thermal");
    expect(res.json.error.message).toContain("lidar");
    expect(res.json.error.message).toContain(`${datasetId}@1.0.0`);
    expect(res.json.error.message).toContain(": thermal, lidar. Its streams are: cam, depth, joints.");
  });

  it("names the episode ids that are not in the version, and only those", async () => {
    const before = (await ourEntries()).length;
    const stranger = uniqueId("nope");
    const res = await download(body({ episode_ids: [ids[0]!, extra.episode_id, stranger, hiddenEpisode, ids[1]!] }));
    await expectRefused(res, 400, "invalid_body", before);
    const message: string = res.json.error.message;
    for (const missing of [extra.episode_id, stranger, hiddenEpisode]) expect(message).toContain(missing);
    expect(message).not.toContain(ids[0]!);
    expect(message).not.toContain(ids[1]!);
    expect(message).toContain(`${datasetId}@1.0.0`);
  });

  it("refuses a scope that matches no files with 400", async () => {
    const before = (await ourEntries()).length;
    for (const scope of [
      { episode_ids: [noFiles] },
      { episode_ids: [ids[1]!], streams: ["depth"] },
      { filter: { outcome: "no-such-outcome" } },
      { filter: { environment: e(0).environment, outcome: "no-such-outcome" } },
    ]) {
      expect(expectedScope(episodes, FILES, scope).files).toEqual([]);
      const res = await download(body(scope));
      await expectRefused(res, 400, "invalid_body", before);
      expect(res.json.error.message).toMatch(/matches no files/);
    }
  });

  it("answers an unlicensed version of a visible dataset with 403 version_not_licensed naming both", async () => {
    const before = (await ourEntries()).length;
    const res = await download(body({}, "2.0.0"));
    await expectRefused(res, 403, "version_not_licensed", before);
    expect(res.json.error.message).toContain("2.0.0");
    expect(res.json.error.message).toContain(datasetId);
  });

  it("answers an unknown version of a visible dataset with 404", async () => {
    const before = (await ourEntries()).length;
    for (const version of ["9.9.9", "1.0", "latest"]) {
      const res = await download(body({}, version));
      await expectRefused(res, 404, "not_found", before);
    }
  });

  describe("more than 10,000 files", () => {
    let bigId: string;
    const bigEpisodes = randomEpisodes(100, 305).map((ep) => ({ ...ep, streams: ["cam"] }));
    beforeAll(async () => {
      // 10,000 episode files and one version-level file: 10,001 in all.
      const files: FileLine[] = bigEpisodes.flatMap((ep) =>
        Array.from({ length: 100 }, (_, i) => ({
          path: `${ep.episode_id}/${i}.mp4`,
          episode_id: ep.episode_id,
          stream: "cam",
          size_bytes: 1,
          sha256: sha(`${ep.episode_id}${i}`),
        })),
      );
      files.push({ path: "index.json", size_bytes: 2, sha256: sha("index") });
      expect(files).toHaveLength(10_001);
      bigId = await importTestDataset([{ version: "1.0.0", episodes: bigEpisodes, files }]);
      await grant(org.id, bigId, "1.0.0");
    });

    it("refuses 10,001 files with 422 scope_too_large asking the client to split", async () => {
      const before = (await ourEntries()).length;
      const res = await download({ dataset_id: bigId, version: "1.0.0" });
      await expectRefused(res, 422, "scope_too_large", before);
      expect(res.json.error.message).toContain("10001");
      expect(res.json.error.message).toContain("10000");
      expect(res.json.error.message).toMatch(/split/i);
    });

    it("serves exactly 10,000 files", async () => {
      const res = await download({ dataset_id: bigId, version: "1.0.0", streams: ["cam"] });
      expectOk(res, 201);
      expect(res.json.file_count).toBe(10_000);
      expect(res.json.files).toHaveLength(10_000);
      expect(new Set(res.json.files.map((f: { url: string }) => f.url)).size).toBe(10_000);
      const [entry] = await disclosureRows({ id: res.json.download_id });
      expect(entry).toMatchObject({ file_count: 10_000, episode_count: 100, total_bytes: "10000" });
      expectSignedUrls(res.json, entry!.occurred_at);
    });
  });
});

describe("POST /api/v1/downloads: Idempotency-Key conflicts", () => {
  it("answers another body under the same key with 409 idempotency_conflict", async () => {
    const idempotencyKey = uniqueId("idem");
    const first = await download(body({ streams: ["cam"] }), { "idempotency-key": idempotencyKey });
    expectOk(first, 201);
    const before = (await ourEntries()).length;
    for (const other of [
      body({ streams: ["joints"] }),
      body(),
      body({ streams: ["cam"] }, "2.0.0"),
      { ...body({ streams: ["cam"] }), dataset_id: hiddenId },
    ]) {
      const res = await download(other, { "idempotency-key": idempotencyKey });
      expectError(res, 409, "idempotency_conflict");
      expect(res.text).not.toContain("http");
    }
    expect((await ourEntries()).length).toBe(before);
    // The original is still what the key returns.
    const retry = await download(body({ streams: ["cam"] }), { "idempotency-key": idempotencyKey });
    expectOk(retry, 200);
    expect(retry.json.download_id).toBe(first.json.download_id);
  });

  it("gives one download and one conflict to concurrent requests with the same key and different bodies", async () => {
    const idempotencyKey = uniqueId("idem");
    const [a, b] = await Promise.all([
      download(body({ streams: ["cam"] }), { "idempotency-key": idempotencyKey }),
      download(body({ streams: ["depth"] }), { "idempotency-key": idempotencyKey }),
    ]);
    expect([a!.status, b!.status].sort()).toEqual([201, 409]);
    expect((await ourEntries()).filter((r) => r.idempotency_key === idempotencyKey)).toHaveLength(1);
  });
});

describe("POST /api/v1/downloads: the disclosure log at fault", () => {
  it("answers a failure at commit with 503, no URL, and no entry", async () => {
    // A dataset of this test's own, so that the injected fault touches no other test's appends.
    const doomedEpisodes = randomEpisodes(2, 306);
    const doomed = await importTestDataset([
      {
        version: "1.0.0",
        episodes: doomedEpisodes,
        files: doomedEpisodes.map((ep) => ({
          path: `${ep.episode_id}/cam.mp4`,
          episode_id: ep.episode_id,
          stream: "cam",
          size_bytes: 7,
          sha256: sha(ep.episode_id),
        })),
      },
    ]);
    await grant(org.id, doomed, "1.0.0");
    const doomedVersion = await versionIdOf(doomed, "1.0.0");
    // Checked at commit: the request has resolved its scope and appended its entry by then.
    await failAtCommit(doomed, async () => {
      const before = (await ourEntries()).length;
      for (const scope of [{}, { episode_ids: [doomedEpisodes[1]!.episode_id] }]) {
        const res = await download({ dataset_id: doomed, version: "1.0.0", ...scope });
        expectError(res, 503, "unavailable");
        expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
        expect(res.text).not.toContain("http");
        expect(res.text).not.toContain("X-Amz-");
        expect(res.text).not.toContain("injected");
        expect(await disclosureRows({ datasetId: doomed })).toEqual([]);
        expect(await disclosureRows({ requestId: res.json.error.request_id })).toEqual([]);
        const [orphans] = await sql()<
          { n: number }[]
        >`select count(*)::int as n from disclosure_episodes where version_id = ${doomedVersion}`;
        expect(orphans!.n).toBe(0);
      }
      expect((await ourEntries()).length).toBe(before);
    });
    // Without the fault the same request succeeds: the 503 was the commit's doing.
    const res = await download({ dataset_id: doomed, version: "1.0.0" });
    expectOk(res, 201);
    expect(await disclosureRows({ datasetId: doomed })).toHaveLength(1);
    expect(await verifyChain(operatorCtx())).toMatchObject({ intact: true });
  });
});

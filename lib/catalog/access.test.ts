import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { listDatasetVersions } from "@/lib/admin/list-datasets";
import { setDatasetListing } from "@/lib/admin/listing";
import { reviewedEpisodeVersions } from "@/lib/previews/access";
import { withdrawEpisodes } from "@/lib/withdrawals/withdraw";
import { userPrincipal } from "@/lib/testing/disclosure-fixtures";
import { createTestOrg, importTestDataset, operatorCtx, randomEpisodes } from "@/lib/testing/fixtures";
import { listedDatasets, portalDataset } from "./listing";

// Every count of a version (episodes, files, bytes, facets) comes from `releasedVersions` in
// access.ts, the one place that leaves withdrawn episodes out: a withdrawal changes them all at once.

/** Columns of dataset_versions written at import, before any withdrawal: read as they are, they overcount. */
const RAW_COUNTS = /(?<![\w.])(?:v\.|dataset_versions\.)?(episode_count|file_count|total_bytes|facet_counts)\b/;

/** Who may read those columns: the one reader, and the import that writes them. */
const ALLOWED = new Set([
  "lib/catalog/access.ts",
  "lib/catalog/import/pipeline.ts",
  // The disclosure log's own columns of the same names, in a query that only checks a version exists.
  "lib/disclosures/verify-range.ts",
]);

describe("the counts of a version", () => {
  it("are read from dataset_versions nowhere but lib/catalog/access.ts", () => {
    const sources = ["lib", "app", "components"].flatMap((dir) =>
      (readdirSync(path.join(PROJECT_ROOT, dir), { recursive: true }) as string[])
        .map((file) => path.posix.join(dir, file.split(path.sep).join("/")))
        .filter((file) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file) && !file.startsWith("lib/testing/")),
    );
    const readers = sources.filter((file) =>
      [...readFileSync(path.join(PROJECT_ROOT, file), "utf8").matchAll(/`[^`]*`/gs)].some(
        ([sql]) => sql.includes("dataset_versions") && RAW_COUNTS.test(sql),
      ),
    );
    expect(readers.filter((file) => !ALLOWED.has(file))).toEqual([]);
    // The check can fail: the reader itself is found.
    expect(readers).toContain("lib/catalog/access.ts");
  });

  it("leave a withdrawn episode out wherever the portal shows them: listed datasets, the grant form, the reviewer's versions", async () => {
    const episodes = randomEpisodes(3, 383);
    const files = episodes.map((e) => ({
      path: `${e.episode_id}.bin`,
      episode_id: e.episode_id,
      size_bytes: 10,
      sha256: "b".repeat(64),
    }));
    const datasetId = await importTestDataset([{ version: "1.0.0", episodes, files }]);
    await setDatasetListing(operatorCtx(), { datasetId, listing: "listed" });
    await withdrawEpisodes(operatorCtx(), { episodeIds: [episodes[0]!.episode_id], reason: "consent withdrawn" });
    const member = {
      db: getDb(),
      principal: await userPrincipal(operatorCtx(), (await createTestOrg()).id),
      requestId: "t",
    };
    const reviewer = { db: getDb(), principal: await userPrincipal(operatorCtx(), null, "reviewer"), requestId: "t" };

    const listed = (await listedDatasets(member)).find((d) => d.dataset_id === datasetId)!;
    expect(listed.versions.map((v) => v.episode_count)).toEqual([2]);
    expect((await portalDataset(member, datasetId)).versions.map((v) => v.episode_count)).toEqual([2]);
    const granted = (await listDatasetVersions(operatorCtx())).find((d) => d.dataset_id === datasetId)!;
    expect(granted.versions.map((v) => v.episode_count)).toEqual([2]);
    const { chosen } = await reviewedEpisodeVersions(reviewer, episodes[1]!.episode_id);
    expect(chosen).toMatchObject({ episodeCount: 2, fileCount: 2, totalBytes: 20, withdrawnEpisodes: 1 });
  });
});

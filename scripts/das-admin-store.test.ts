import { CreateBucketCommand, PutBucketCorsCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { corsConfiguration } from "@/lib/catalog/store-check";
import { s3Client } from "@/lib/storage/client";
import { objectKey, storeLocation } from "@/lib/storage/config";
import { adminCli } from "@/lib/testing/admin-cli";
import { importTestDataset, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";

// `das-admin store check` against a bucket of the run's local store that has no CORS rule, as an
// object store other than the embedded one starts: the episode page could not plot from it. The
// check sends the browser's preflight from the portal's origin, says what is missing, and prints
// the rule; the rule it prints, set with PutBucketCors, is what makes the check (and the page) pass.

const bucket = `nocors-${uniqueId("b").slice(2)}`.toLowerCase();
const PORTAL = "https://portal.example";
let datasetId: string;
const client = s3Client(storeLocation());
const das = adminCli("admin-store", { env: () => ({ S3_BUCKET: bucket }) });

beforeAll(async () => {
  const episodes = randomEpisodes(2, 808).map((e) => ({ ...e, streams: ["cam", "data"] }));
  const files = [
    ...episodes.map((e) => ({
      path: `videos/${e.episode_id}.mp4`,
      episode_id: e.episode_id,
      stream: "cam",
      size_bytes: 4,
      sha256: "a".repeat(64),
    })),
    {
      path: "data/chunk-000/file-000.parquet",
      episode_ids: episodes.map((e) => e.episode_id),
      stream: "data",
      size_bytes: 4,
      sha256: "b".repeat(64),
    },
  ];
  datasetId = await importTestDataset([{ version: "1.0.0", episodes, files }]);
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  for (const file of files)
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: objectKey(datasetId, "1.0.0", file.path), Body: "data" }),
    );
});

afterAll(() => client.destroy());

const storeCheck = (...extra: string[]) => das.run(["store", "check", `${datasetId}@1.0.0`, ...extra]);

describe("das-admin store check of a store without a CORS rule", () => {
  it("sends the browser's preflight from the portal's origin, names the refusal and prints the rule that fixes it", async () => {
    const refused = await storeCheck("--origin", `${PORTAL}/some/page`);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`All 3 files of ${datasetId}@1.0.0 are in the store at their sizes.`);
    expect(refused.stderr).toContain(
      `The episode page on ${PORTAL} cannot plot this version's data: the store refused the browser's preflight from ${PORTAL} (OPTIONS answered 403: CORSResponse: CORS is not enabled for this bucket.)`,
    );
    expect(refused.stderr).toContain(
      `aws s3api put-bucket-cors --bucket ${bucket} --cors-configuration file://cors.json`,
    );
    const rule = JSON.parse(refused.stdout);
    expect(rule).toEqual(corsConfiguration(PORTAL));

    // The rule as printed, set as an operator would set it.
    await client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: rule }));
    const allowed = await storeCheck("--origin", PORTAL);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toBe("");
    expect(allowed.stderr).toContain(`A browser on ${PORTAL} may read the data tables from the store`);

    // It allows that origin only: another portal is told so.
    const elsewhere = await storeCheck("--origin", "https://elsewhere.example");
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain("refused the browser's preflight from https://elsewhere.example");
    expect(JSON.parse(elsewhere.stdout)).toEqual(corsConfiguration("https://elsewhere.example"));
  });

  it("refuses an --origin that is not an http(s) address before anything starts", async () => {
    const run = await storeCheck("--origin", "portal.example");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("'portal.example' is not the portal's address");
  });
});

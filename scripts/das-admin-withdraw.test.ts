import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { adminCli } from "@/lib/testing/admin-cli";
import { createTestOrg, grant, importTestDataset, operatorCtx, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";
import { filesOf, userPrincipal } from "@/lib/testing/disclosure-fixtures";
import { createDownload } from "@/lib/downloads/create-download";

// das-admin withdraw as an operator runs it: a dry run that writes nothing, the refusals, then the
// withdrawal, on the run's database with a contributor of this file's own.

const das = adminCli("admin-withdraw", { operator: "withdraw-test" });

const contributor = uniqueId("carol");
let datasetId: string;
let otherDatasetId: string;
let carols: string[];

beforeAll(async () => {
  const episodes = randomEpisodes(5, 3131).map((e, i) => ({
    ...e,
    contributor: i < 3 ? contributor : uniqueId("dan"),
  }));
  carols = episodes.slice(0, 3).map((e) => e.episode_id);
  datasetId = await importTestDataset([{ version: "1.0.0", episodes, files: filesOf(episodes) }]);
  const others = randomEpisodes(1, 3132);
  otherDatasetId = await importTestDataset([{ version: "1.0.0", episodes: others, files: filesOf(others) }]);
  // Two organisations received one of carol's episodes each; a third received none of them.
  for (const received of [[carols[0]!], [carols[1]!], [episodes[4]!.episode_id]]) {
    const org = await createTestOrg();
    await grant(org.id, datasetId, "1.0.0");
    const member = await userPrincipal(operatorCtx(), org.id);
    await createDownload(
      { db: getDb(), principal: member, requestId: uniqueId("req") },
      { body: { dataset_id: datasetId, version: "1.0.0", episode_ids: received } },
    );
  }
});

const withdrawals = async () =>
  (await getDb().$client`select count(*)::int as n from withdrawals where contributor = ${contributor}`)[0]!.n;

describe("das-admin withdraw", () => {
  it("--dry-run says what it would take and whom it would tell, and writes nothing", async () => {
    const reason = ["--reason", "consent withdrawn by email"];
    const [text, json] = await Promise.all([
      das.run(["withdraw", "--contributor", contributor, ...reason, "--dry-run"]),
      das.run(["withdraw", "--contributor", contributor, ...reason, "--dry-run", "--json"]),
    ]);
    expect(text, text.stderr).toMatchObject({ code: 0, stdout: "" });
    expect(text.stderr).toBe(
      `Would withdraw 3 episodes from ${datasetId}@1.0.0 (3).\n` +
        "Would notify 2 organisations that received them. Nothing was written: run it again without --dry-run.\n",
    );
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      withdrawal_id: null,
      reason: "consent withdrawn by email",
      contributor,
      episode_ids: [...carols].sort(),
      versions: [{ dataset_id: datasetId, version: "1.0.0", episodes: 3 }],
      notices: 2,
    });
    expect(await withdrawals()).toBe(0);
  });

  it("refuses a dataset without named episodes, and named episodes of another dataset", async () => {
    const [usage, elsewhere] = await Promise.all([
      das.run(["withdraw", "--contributor", contributor, "--dataset", datasetId, "--reason", "r"]),
      das.run(["withdraw", "--episodes", carols[0]!, "--dataset", otherDatasetId, "--reason", "r"]),
    ]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(
      /^das-admin: A dataset narrows named episodes only: a contributor's are taken from every dataset\.\n/,
    );
    expect(elsewhere).toMatchObject({
      code: 1,
      stderr: `das-admin: Not episodes of ${otherDatasetId}: ${carols[0]}.\n`,
    });
    expect(await withdrawals()).toBe(0);
  });

  it("withdraws, naming the versions and how many organisations were told; a second time finds nothing", async () => {
    const done = await das.run(["withdraw", "--contributor", contributor, "--reason", "consent withdrawn by email"]);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toMatch(
      new RegExp(
        `^Withdrew 3 episodes \\(wd_\\w+\\) from ${datasetId}@1\\.0\\.0 \\(3\\)\\.\\nNotified 2 organisations that received them\\.\\n$`,
      ),
    );
    expect(await withdrawals()).toBe(1);
    const again = await das.run(["withdraw", "--contributor", contributor, "--reason", "again"]);
    expect(again).toMatchObject({ code: 1 });
    expect(again.stderr).toContain(`No episode of contributor '${contributor}' is left to withdraw`);
  });
});

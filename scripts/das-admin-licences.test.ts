import { writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { adminCli } from "@/lib/testing/admin-cli";
import { getDb } from "@/lib/db/client";
import { createTestOrg, importTestDataset, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";

// das-admin's terms and licence-term commands, run as an operator would against this run's database.

const sql = () => getDb().$client;
const das = adminCli("admin-licences", { operator: "cli-test" });
const scratch = das.dataDir;

describe("das-admin terms and licence terms", () => {
  // About fifteen das-admin runs, each a node and tsx start: minutes on a busy machine.
  it("adds, lists and shows terms; grants under them for a term; ends early and extends, audited", {
    timeout: 240_000,
  }, async () => {
    const org = await createTestOrg();
    const datasetId = await importTestDataset([{ version: "1.0.0", episodes: randomEpisodes(1, 7001) }]);
    const text = `# Data-use agreement ${uniqueId("t")}\n\nResearch only. Ünïcode kept byte for byte.\n`;
    const file = path.join(scratch, "terms.md");
    writeFileSync(file, text);
    const sha = createHash("sha256").update(text, "utf8").digest("hex");

    const added = await das.run(["terms", "add", "--title", "DUA 2026", "--file", file, "--dataset", datasetId]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe(`${sha}\n`);
    expect(added.stderr).toContain("Added terms 'DUA 2026'");
    const again = await das.run(["terms", "add", "--title", "Other title", "--file", file]);
    expect(again.stderr).toContain("Already there: terms 'DUA 2026'");

    const [list, show, showJson, unknown, badSha] = await Promise.all([
      das.run(["terms", "list", "--json"]),
      das.run(["terms", "show", sha]),
      das.run(["terms", "show", sha, "--json"]),
      das.run(["terms", "show", "0".repeat(64)]),
      das.run(["terms", "show", "xyz"]),
    ]);
    expect(JSON.parse(list.stdout)).toContainEqual(
      expect.objectContaining({
        sha256: sha,
        title: "DUA 2026",
        dataset_id: datasetId,
        created_by: "cli-test (das-admin)",
      }),
    );
    expect(show.stdout).toBe(text);
    expect(JSON.parse(showJson.stdout)).toMatchObject({ sha256: sha, body: text });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no terms document with SHA-256");
    expect(badSha.code).toBe(2);

    const granted = await das.run([
      "licence",
      "grant",
      org.slug,
      datasetId,
      "1.0.0",
      "--from",
      "2026-01-01",
      "--until",
      "2099-12-31",
      "--terms",
      sha,
    ]);
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.stderr).toContain("usable from 2026-01-01T00:00:00.000Z until 2100-01-01T00:00:00.000Z");
    const [row] = await sql()`
      select l.id, l.starts_at, l.ends_at, l.terms_sha256 from licences l
      where l.organization_id = ${org.id}`;
    expect(row).toMatchObject({
      starts_at: new Date("2026-01-01T00:00:00Z"),
      ends_at: new Date("2100-01-01T00:00:00Z"),
      terms_sha256: sha,
    });

    const badEnd = await das.run(["licence", "end", org.slug, datasetId, "1.0.0", "--at", "2025-06-01"]);
    expect(badEnd.code).toBe(1);
    expect(badEnd.stderr).toContain("must end after it starts");
    const early = await das.run(["licence", "end", org.slug, datasetId, "1.0.0", "--at", "2026-03-01T12:00:00Z"]);
    expect(early.code, early.stderr).toBe(0);
    expect(early.stderr).toContain("now ends at 2026-03-01T12:00:00.000Z (it ended at 2100-01-01T00:00:00.000Z)");
    const listed = await das.run(["licence", "list", "--org", org.slug]);
    expect(listed.stdout).toMatch(/ended/);
    expect((await das.run(["licence", "list", "--org", org.slug, "--active"])).stderr).toContain("No active licences");
    const extended = await das.run(["licence", "end", org.slug, datasetId, "1.0.0", "--at", "2099-06-30"]);
    expect(extended.code, extended.stderr).toBe(0);
    expect((await das.run(["licence", "list", "--org", org.slug, "--active", "--json"])).stdout).toContain(datasetId);

    const audit = await sql()`
      select action, details from admin_audit where target_id in (${row!.id}, ${sha}) order by id`;
    expect(audit.map((a) => a.action)).toEqual(["terms.add", "licence.grant", "licence.end", "licence.end"]);
    expect(audit[2]!.details).toMatchObject({
      endsAt: "2026-03-01T12:00:00.000Z",
      previousEndsAt: "2100-01-01T00:00:00.000Z",
    });

    const [badDate, badTerms] = await Promise.all([
      das.run(["licence", "grant", org.slug, datasetId, "1.0.0", "--until", "2026-02-30"]),
      das.run(["licence", "end", org.slug, datasetId, "1.0.0"]),
    ]);
    expect(badDate.code).toBe(2);
    expect(badTerms.code).toBe(2);
  });

  it("lists and unlists a dataset, audited once per change; refuses what is not a listing or a dataset", async () => {
    const datasetId = await importTestDataset([{ version: "1.0.0", episodes: randomEpisodes(1, 7002) }]);
    const listed = await das.run(["dataset", "listing", datasetId, "listed"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toContain(`${datasetId} is now listed (it was unlisted).`);
    expect((await das.run(["dataset", "listing", datasetId, "listed"])).stderr).toContain(
      `${datasetId} was already listed.`,
    );
    const shown = JSON.parse((await das.run(["dataset", "list", "--json"])).stdout) as {
      dataset_id: string;
      listing: string;
    }[];
    expect(shown.find((d) => d.dataset_id === datasetId)?.listing).toBe("listed");
    const [bad, missing] = await Promise.all([
      das.run(["dataset", "listing", datasetId, "public"]),
      das.run(["dataset", "listing", "no-such-dataset", "listed"]),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("takes one of unlisted, listed.");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("There is no dataset 'no-such-dataset'.");
    await das.run(["dataset", "listing", datasetId, "unlisted"]);
    const audit = await sql()`
      select actor_label, details from admin_audit where action = 'dataset.listing' and target_id = ${datasetId} order by occurred_at`;
    expect(audit).toEqual([
      { actor_label: "cli-test (das-admin)", details: { listing: "listed", previous: "unlisted" } },
      { actor_label: "cli-test (das-admin)", details: { listing: "unlisted", previous: "listed" } },
    ]);
  });
});

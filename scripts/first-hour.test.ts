import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KEY_PATTERN } from "@/lib/auth/api-keys";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { freePort } from "@/lib/dev/embedded-postgres";
import { productionBuildIsCurrent } from "@/lib/dev/next-server";
import { runCli } from "@/lib/testing/cli";
import { adminCli } from "@/lib/testing/admin-cli";
import { buildLeRobotFixture } from "@/lib/testing/lerobot-fixtures";
import { describeLeRobotImport } from "./cli/lerobot-import-summary";
import { API_KEY_PATTERN, apiKey, serviceUrl } from "./cli/values";
import { UsageError } from "./cli/terminal";
import type { LeRobotImportResult } from "@/lib/catalog/import/lerobot/source";

// The first hour of a new user, as the README tells it: `npm start` on a fresh installation, the
// list commands on its demo, and the messages a newcomer's mistakes get. The service is started
// as a user starts it, so this file needs the production build to be current (`next build`).

/** das-admin on this test run's database and store, for the messages of its import and store commands. */
const cli = adminCli("first-hour", { operator: "first-hour-test" });
const scratch = cli.dataDir;
// As root, the embedded PostgreSQL runs as the `postgres` user, which must reach its data directory.
chmodSync(scratch, 0o755);

/** The environment of a newcomer's shell: nothing of this test run's database, store or secret. */
type Env = Record<string, string | undefined>;

function newcomerEnv(dataDir: string, extra: Env = {}): NodeJS.ProcessEnv {
  const env: Env = { ...process.env, DAS_DATA_DIR: dataDir, ...extra };
  for (const name of Object.keys(env))
    if (/^(S3_|DIGEST_)/.test(name) || ["DATABASE_URL", "APP_SECRET", "REDIS_URL", "NODE_ENV"].includes(name))
      delete env[name];
  return env as NodeJS.ProcessEnv;
}

type Service = { child: ChildProcess; lines: string[]; ready: Promise<{ line: string; loginStatus: number }> };

/**
 * `npm start` as the README says. The moment the URL line appears, /login is asked once, with no
 * retry: the line must mean the service already answers.
 */
function npmStart(dataDir: string, port: number): Service {
  const child = spawn("npm", ["start"], {
    cwd: PROJECT_ROOT,
    env: newcomerEnv(dataDir, { PORT: String(port) }),
    stdio: ["ignore", "pipe", "pipe"],
    // A process group of its own, as a terminal's foreground job: stop() interrupts all of it.
    detached: true,
  });
  const lines: string[] = [];
  const ready = new Promise<{ line: string; loginStatus: number }>((resolve, reject) => {
    let rest = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        if (line.includes("Dataset Access Service: http://localhost:")) {
          fetch(`http://127.0.0.1:${port}/login`, { redirect: "manual" }).then(
            (response) => resolve({ line, loginStatus: response.status }),
            (error: unknown) => resolve({ line, loginStatus: -1, ...{ error } }),
          );
        }
      }
    });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => lines.push(chunk));
    child.once("exit", (code) => reject(new Error(`npm start exited with ${code}:\n${lines.join("\n")}`)));
  });
  return { child, lines, ready };
}

/**
 * Ctrl-C in the newcomer's terminal: SIGINT to the whole process group (npm, its shell, the service
 * and the servers it started), as a terminal sends it. SIGINT to npm alone reaches none of them.
 */
function stop(service: Service): Promise<void> {
  if (service.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    service.child.once("exit", () => resolve());
    process.kill(-service.child.pid!, "SIGINT");
  });
}

describe("npm start on a fresh installation, its demo, and a newcomer's mistakes", () => {
  const dataDir = path.join(scratch, "installation");
  let port: number;
  let service: Service;
  let demoKey: string;
  const admin = (args: string[]) =>
    runCli("das-admin", args, { env: newcomerEnv(dataDir, { DAS_OPERATOR: "first-hour-test" }) });
  const das = (args: string[], env: Env = {}) =>
    runCli("das", args, {
      env: { ...newcomerEnv(dataDir), DAS_API_URL: undefined, DAS_API_KEY: undefined, ...env } as NodeJS.ProcessEnv,
    });

  beforeAll(async () => {
    // Starting would build in the shared .next otherwise, under other runs' feet.
    expect(productionBuildIsCurrent(), "the production build is older than the code: run `next build` first").toBe(
      true,
    );
    port = await freePort();
    service = npmStart(dataDir, port);
    await service.ready;
    demoKey = /^\[das\] {3}acme-robotics +(das_\S+)$/m.exec(service.lines.join("\n"))![1]!;
  }, 600_000);
  afterAll(async () => {
    if (service) await stop(service);
  });

  it("prints the URL, the demo keys and users only when /login already answers 200; a restart likewise", async () => {
    const first = await service.ready;
    expect(first.loginStatus).toBe(200);
    const output = service.lines.join("\n");
    // The accounts come with the URL, after the server answers: after Next's own lines.
    const urlAt = output.indexOf("Dataset Access Service:");
    expect(output.indexOf("Demo API keys:")).toBeGreaterThan(output.indexOf("Starting Next.js"));
    expect(output.indexOf("Demo portal users:")).toBeLessThan(urlAt);
    expect(output.indexOf("Empty database: loading the demo data")).toBeGreaterThan(-1);

    await stop(service);
    service = npmStart(dataDir, port);
    const again = await service.ready;
    expect(again.loginStatus).toBe(200);
    expect(service.lines.join("\n")).not.toContain("Empty database");
    expect(service.lines.join("\n")).toContain(demoKey);
  }, 600_000);

  it("lists organisations, users, licences, keys and datasets as tables and as JSON", async () => {
    const [orgs, orgsJson, users, usersJson, licences, licencesJson, keys, keysJson, datasets, datasetsJson] =
      await Promise.all([
        admin(["org", "list"]),
        admin(["org", "list", "--json"]),
        admin(["user", "list"]),
        admin(["user", "list", "--json"]),
        admin(["licence", "list", "--org", "acme-robotics"]),
        admin(["licence", "list", "--json"]),
        admin(["key", "list"]),
        admin(["key", "list", "--json"]),
        admin(["dataset", "list"]),
        admin(["dataset", "list", "--json"]),
      ]);
    for (const run of [
      orgs,
      orgsJson,
      users,
      usersJson,
      licences,
      licencesJson,
      keys,
      keysJson,
      datasets,
      datasetsJson,
    ])
      expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(orgs.stdout).toMatch(/^SLUG +NAME +USERS +LICENCES +KEYS +CREATED\n/);
    expect(orgs.stdout).toMatch(/^acme-robotics +Acme Robotics +1 +3 +1 /m);
    expect((JSON.parse(orgsJson.stdout) as { slug: string }[]).map((o) => o.slug)).toEqual([
      "acme-robotics",
      "globex-ai",
    ]);
    expect(users.stdout).toMatch(/^alice@acme\.example +licensee +acme-robotics +Alice Licensee +active /m);
    expect((JSON.parse(usersJson.stdout) as { email: string }[]).length).toBe(4);
    expect(licences.stdout).toMatch(/^acme-robotics +kitchen-pick-place +1\.1\.0 +active /m);
    expect(licences.stdout).not.toContain("globex-ai");
    expect((JSON.parse(licencesJson.stdout) as unknown[]).length).toBe(6);
    // A key by its prefix; its secret appears nowhere, in the table or in the JSON.
    expect(keys.stdout).toContain(`${demoKey.slice(0, 12)}…`);
    for (const run of [keys, keysJson]) expect(run.stdout + run.stderr).not.toContain(demoKey.slice(12));
    expect(JSON.parse(keysJson.stdout)).toContainEqual(
      expect.objectContaining({ prefix: demoKey.slice(0, 12), organization_slug: "acme-robotics", status: "active" }),
    );
    expect(datasets.stdout).toMatch(/^kitchen-pick-place +2\.0\.0 +\S+ +\d+ +unlisted +Kitchen pick-and-place$/m);
    expect(datasets.stdout).toMatch(/^kitchen-pick-place +1\.1\.0 /m);
    const kpp = (JSON.parse(datasetsJson.stdout) as { dataset_id: string; versions: { version: string }[] }[]).find(
      (d) => d.dataset_id === "kitchen-pick-place",
    )!;
    expect(kpp.versions.map((v) => v.version)).toEqual(["2.0.0", "1.1.0", "1.0.0"]);
  }, 300_000);

  it("refuses unknown organisations, datasets and versions naming the ones there are; the README's grant works", async () => {
    const [org, dataset, version, grant] = await Promise.all([
      admin(["licence", "grant", "acme", "kitchen-pick-place", "2.0.0"]),
      admin(["licence", "grant", "acme-robotics", "no-such", "1.0.0"]),
      admin(["licence", "grant", "acme-robotics", "kitchen-pick-place", "9.9.9"]),
      admin(["licence", "grant", "acme-robotics", "kitchen-pick-place", "2.0.0"]),
    ]);
    expect(org).toMatchObject({
      code: 1,
      stderr:
        "das-admin: No organisation 'acme'. The organisations are: acme-robotics, globex-ai (das-admin org list).\n",
    });
    expect(dataset).toMatchObject({
      code: 1,
      stderr:
        "das-admin: No dataset 'no-such'. The datasets are: kitchen-pick-place, tabletop-assembly, warehouse-bin-picking (das-admin dataset list shows their versions).\n",
    });
    expect(version).toMatchObject({
      code: 1,
      stderr:
        "das-admin: Dataset 'kitchen-pick-place' has no version '9.9.9'. Its versions are: 2.0.0, 1.1.0, 1.0.0.\n",
    });
    expect(grant.code, grant.stderr).toBe(0);
    expect(grant.stderr).toMatch(
      /^Granted licence lic_\S+ for kitchen-pick-place@2\.0\.0 to acme-robotics, usable from \S+Z, with no end\.\n$/,
    );
  }, 300_000);

  it("das: an address without a scheme on this machine is http://; elsewhere refused; a malformed key refused", async () => {
    const [loopback, remote, badKey, shortKey] = await Promise.all([
      das(["datasets", "--url", `localhost:${port}`, "--key", demoKey]),
      das(["datasets"], { DAS_API_URL: "das.example.com", DAS_API_KEY: demoKey }),
      das(["datasets", "--url", `localhost:${port}`, "--key", "acme-robotics"]),
      das(["datasets", "--url", `localhost:${port}`, "--key", demoKey.slice(0, 20)]),
    ]);
    expect(loopback, loopback.stderr).toMatchObject({ code: 0 });
    expect(loopback.stdout).toMatch(/^kitchen-pick-place /m);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(
      /^DAS_API_URL 'das\.example\.com' has no scheme: write https:\/\/das\.example\.com \(or http:\/\/das\.example\.com for a service without TLS\)\.\n/,
    );
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toMatch(
      /^--key is not an API key: a key is das_ and 43 letters and digits \(47 characters\), but it starts 'acme'\. Keys are printed once by das-admin key create/,
    );
    expect(shortKey.stderr).toMatch(/^--key is not an API key: .* but it has 20 characters\./);
    // Not sent: the message is the command line's, not the API's 401.
    for (const run of [badKey, shortKey]) expect(run.stderr).not.toContain("unauthorized");
  }, 300_000);

  it("das episodes: a filter that matches nothing names the version's values; durations to the hundredth", async () => {
    const url = `http://localhost:${port}`;
    const [failed, table] = await Promise.all([
      das(["episodes", "kitchen-pick-place@1.1.0", "--outcome", "failed", "--url", url, "--key", demoKey]),
      das(["episodes", "kitchen-pick-place@1.1.0", "--url", url, "--key", demoKey]),
    ]);
    expect(failed, failed.stderr).toMatchObject({ code: 0, stdout: "" });
    expect(failed.stderr).toMatch(
      /^0 episode\(s\)\.\nkitchen-pick-place@1\.1\.0's outcomes: (\w+, )+\w+ \(--outcome failed matches none of them exactly\)\.\n$/,
    );
    expect(failed.stderr).toContain("failure");
    expect(table.code, table.stderr).toBe(0);
    const durations = table.stdout
      .split("\n")
      .slice(1, -1)
      .map((line) => line.split(/ {2,}/)[3]!);
    expect(durations.length).toBeGreaterThan(0);
    for (const d of durations) expect(d).toMatch(/^\d+(\.\d{1,2})?$/);
  }, 300_000);
});

describe("das-admin import and store messages", () => {
  let lerobot: string;
  let incomplete: string;

  beforeAll(async () => {
    lerobot = path.join(scratch, "so100");
    await buildLeRobotFixture(lerobot, { version: "v2.1", episodes: 4 });
    incomplete = path.join(scratch, "so100-incomplete");
    const fixture = await buildLeRobotFixture(incomplete, { version: "v2.1", episodes: 4 });
    rmSync(path.join(incomplete, fixture.files.find((f) => f.stream !== "data" && f.episodes.includes(2))!.path));
  }, 300_000);

  it("names a path that does not exist, a file, and a directory without meta/info.json for what it is", async () => {
    const [none, file, plain] = await Promise.all([
      cli.run(["import", path.join(scratch, "no-such-dir"), "--dataset", "x", "--version", "1.0.0"]),
      cli.run(["import", path.join(lerobot, "meta", "info.json")]),
      cli.run(["import", path.join(lerobot, "meta"), "--dataset", "x", "--version", "1.0.0"]),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /^das-admin: \S+no-such-dir does not exist: give the directory of the version to import/,
    );
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(/^das-admin: \S+info\.json is a file: give the directory of the version to import/);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(
      /^das-admin: --dataset, --version are for LeRobot datasets, but \S+ has no meta\/info\.json, so it would be read as an import directory \(docs\/import-format\.md\)\. For a LeRobot dataset, give the directory that holds meta\/info\.json\.\n/,
    );
  }, 300_000);

  it("a refusal for missing files names --skip-incomplete-episodes; with it, the summary counts the episodes read", async () => {
    const refused = await cli.run(["import", incomplete, "--dataset", "first-hour-incomplete", "--version", "1.0.0"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("file is missing");
    expect(refused.stderr).toContain("run the same command with --skip-incomplete-episodes");
    const skipped = await cli.run([
      "import",
      incomplete,
      "--dataset",
      "first-hour-incomplete",
      "--version",
      "1.0.0",
      "--skip-incomplete-episodes",
    ]);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stderr).toContain(
      "Where each field came from, over the 4 episodes read (3 imported, 1 skipped below):",
    );
    expect(skipped.stderr).toMatch(/^ {2}outcome: 4 set to 'unknown'$/m);
  }, 300_000);

  it("a refused key and an unreachable store say what failed and what to check, with no listener warning", async () => {
    const store = inject("storeEnv");
    const closed = await freePort();
    const args = ["import", lerobot, "--dataset", "first-hour-store", "--version", "1.0.0", "--upload"];
    const [refused, dead] = await Promise.all([
      cli.run(args, { env: { ...store, S3_SECRET_ACCESS_KEY: "not-the-secret" } }),
      cli.run(args, { env: { ...store, S3_ENDPOINT: `http://127.0.0.1:${closed}` } }),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `das-admin: The object store at ${store.S3_ENDPOINT} refused this installation's key (403`,
    );
    expect(refused.stderr).toContain(
      "check that S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are a key pair of that store, with the right to read and write bucket 'das'.",
    );
    expect(dead.code).toBe(1);
    expect(dead.stderr).toContain(
      `das-admin: Cannot reach the object store at http://127.0.0.1:${closed} (ECONNREFUSED): check that it is running and that S3_ENDPOINT is its address.`,
    );
    for (const run of [refused, dead]) {
      expect(run.stderr).not.toContain("Unknown");
      expect(run.stderr).not.toContain("MaxListenersExceededWarning");
    }
  }, 300_000);
});

describe("the values a newcomer types", () => {
  it("takes an address without a scheme as http:// for this machine only", () => {
    expect(serviceUrl("localhost:3000", "--url")).toBe("http://localhost:3000");
    expect(serviceUrl("127.0.0.1:3000/api/v1", "--url")).toBe("http://127.0.0.1:3000/api/v1");
    expect(serviceUrl("[::1]:3000", "--url")).toBe("http://[::1]:3000");
    expect(serviceUrl(" https://das.example.com ", "--url")).toBe("https://das.example.com");
    for (const remote of ["das.example.com", "localhost.example.com:3000", "10.0.0.5:3000"])
      expect(() => serviceUrl(remote, "--url")).toThrow(UsageError);
  });

  it("checks a key by the service's own rule, trimmed of what a copy brings along", () => {
    expect(API_KEY_PATTERN.source).toBe(KEY_PATTERN.source);
    const key = `das_${"a".repeat(43)}`;
    expect(apiKey(` ${key}\n`, "--key")).toBe(key);
    expect(apiKey(`'${key}'`, "--key")).toBe(key);
    expect(() => apiKey(`das_${"a".repeat(42)}-`, "--key")).toThrow(/other than letters and digits/);
  });

  it("the import summary says its sources count skipped episodes too", () => {
    const tally = (fallback: number) => ({ metadata: 0, record: 0, option: 0, fallback });
    const result = {
      status: "imported",
      datasetId: "so100",
      version: "1.0.0",
      codebaseVersion: "v2.1",
      episodes: 93,
      annotations: 0,
      files: 200,
      defaults: { outcome: tally(100), environment: tally(100), contributor: tally(100), has_recovery: tally(100) },
      notices: [],
      skipped: [],
      skippedCount: 7,
      missingFiles: [],
      missingCount: 0,
      transfer: null,
    } as unknown as LeRobotImportResult;
    const lines = describeLeRobotImport(result, { uploaded: false });
    expect(lines[1]).toBe("  Where each field came from, over the 100 episodes read (93 imported, 7 skipped below):");
    expect(lines[2]).toBe("  outcome: 100 set to 'unknown'");
  });
});

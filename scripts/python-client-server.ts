// The service for the Python client's tests (clients/python/tests): an isolated installation on the
// embedded default (its own PostgreSQL, local S3 store and data directory, whatever the environment
// configures), seeded with a plain version, an unlicensed one, one too large for a single download,
// and LeRobot v2.1 and v3.0 versions with their files in the store (each also as a fingerprinted
// version, its licence's marked copies made before the server starts), served by `next start` on the
// current production build. It prints one JSON line (the URL, keys, dataset ids) and stays up until
// its standard input closes, then stops everything and removes its data. While up, a line
// `{"withdraw": ["episode-id", ...]}` on its standard input withdraws those episodes as das-admin
// withdraw does (so that a test gets a real notice for what it pulled); it answers with one JSON line.
// The Hub protocol's tests (test_hub.py, test_lerobot_hub.py) ask for a key of their own with
// `{"key": "name"}` (`"organization": "other"`: of the second organisation licensed to the
// fingerprinted v3.0 version), read what a key disclosed with `{"entries": "<key id>"}`, grant a new
// organisation a licence with `{"grant": "<dataset id>"}` (its copies then wait for
// `{"make_copies": true}`: the server runs no copy worker of its own), and run `das-admin trace
// --json` on files or directories with `{"trace": ["<path>", ...]}`. The sync vectors
// (test_sync_vectors.py) end their organisation's licence of a version with `{"end_licence": "<dataset
// id>"}` and read what a notice's acknowledgements said with `{"acknowledgements": "<notice id>"}`.
//
// `--rate-limit-per-minute N` sets every key's budget (240 by default; the API fuzzer,
// scripts/api-fuzz/run.py, sends far more requests than a person would).
//
//   npx tsx scripts/python-client-server.ts [--rate-limit-per-minute N]
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

const { values: options } = parseArgs({ options: { "rate-limit-per-minute": { type: "string", default: "240" } } });
const RATE_LIMIT_PER_MINUTE = Number(options["rate-limit-per-minute"]);
if (!Number.isSafeInteger(RATE_LIMIT_PER_MINUTE) || RATE_LIMIT_PER_MINUTE < 1) {
  process.stderr.write("--rate-limit-per-minute takes a whole number of at least 1\n");
  process.exit(2);
}

// Nothing of the caller's configuration: the installation is the embedded default's, of its own.
for (const name of Object.keys(process.env))
  if (/^(DATABASE_URL|REDIS_URL|S3_|DIGEST_|APP_SECRET|API_CACHE)/.test(name)) delete process.env[name];
const dataDir = mkdtempSync(path.join(tmpdir(), "das-py-server-"));
chmodSync(dataDir, 0o755); // as root, the embedded server runs as `postgres`, which must reach its data dir
process.env.DAS_DATA_DIR = dataDir;
const log = (line: string) => process.stderr.write(`[python-client-server] ${line}\n`);

const { startEmbeddedDefault } = await import("../lib/dev/embedded-default");
const { productionBuildIsCurrent, startNextServer } = await import("../lib/dev/next-server");
if (!productionBuildIsCurrent()) {
  log("No production build, or one older than the code: run `npx next build` first.");
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(2);
}
const runtime = await startEmbeddedDefault({ log });
Object.assign(process.env, runtime.env);
let server: Awaited<ReturnType<typeof startNextServer>> | undefined;
/**
 * The organisations the Hub's tests ask keys of (the main one, the other licensee of the
 * fingerprinted version), and the sync vectors' (whose licences a test ends on command).
 */
const organizations = { main: "", other: "", syncVectors: "" };
let closeDb: (() => Promise<void>) | undefined;
const stop = async () => {
  await server?.stop();
  await closeDb?.();
  await runtime.stop();
  rmSync(dataDir, { recursive: true, force: true });
};

try {
  const { getDb } = await import("../lib/db/client");
  const fixtures = await import("../lib/testing/fixtures");
  const { buildLeRobotFixture } = await import("../lib/testing/lerobot-fixtures");
  const { importLeRobotVersion } = await import("../lib/catalog/import/lerobot/source");
  const { s3Client, putObject } = await import("../lib/storage/client");
  const { objectKey, storeLocation } = await import("../lib/storage/config");

  const location = storeLocation();
  const client = s3Client(location);
  const org = await fixtures.createTestOrg();
  // A second licensee of the fingerprinted v3.0 version: its copies are its own.
  const otherOrg = await fixtures.createTestOrg();
  organizations.main = org.id;
  organizations.other = otherOrg.id;
  const fingerprintedLicences: Record<string, string> = {};

  // A plain version (cam and joints per episode, a README of the whole version) in the store, and a
  // second version of the same dataset the organisation holds no licence for.
  const plainId = fixtures.uniqueId("plain");
  const episodes = fixtures.randomEpisodes(12, 29);
  const files: {
    path: string;
    episode_id: string | null;
    stream: string | null;
    size_bytes: number;
    sha256: string;
  }[] = [];
  const content = new Map<string, Buffer>();
  const add = (p: string, episodeId: string | null, stream: string | null, size: number) => {
    const body = randomBytes(size);
    content.set(p, body);
    files.push({
      path: p,
      episode_id: episodeId,
      stream,
      size_bytes: size,
      sha256: createHash("sha256").update(body).digest("hex"),
    });
  };
  add("README.md", null, null, 300);
  for (const [i, e] of episodes.entries()) {
    add(`episodes/${e.episode_id}/cam.bin`, e.episode_id, "cam", 40_000 + i * 1_000);
    add(`episodes/${e.episode_id}/joints.bin`, e.episode_id, "joints", 2_000 + i);
  }
  const annotations = episodes.slice(0, 2).flatMap((e) => [
    { episode_id: e.episode_id, label: "reach", start_s: 0, end_s: 0.5 },
    { episode_id: e.episode_id, label: "grasp", start_s: 0.5, end_s: 1 },
  ]);
  await fixtures.importTestDataset(
    [
      { version: "1.0.0", episodes, files, annotations, changelog: [{ type: "added", description: "first" }] },
      { version: "2.0.0", released_at: "2026-02-01T00:00:00Z", episodes, files },
    ],
    plainId,
  );
  for (const version of ["1.0.0", "2.0.0"])
    await Promise.all(
      files.map((f) => putObject(client, location.bucket, objectKey(plainId, version, f.path), content.get(f.path)!)),
    );
  await fixtures.grant(org.id, plainId, "1.0.0");

  // More files than one download may hold (10,000): only signed, never fetched, so not in the store.
  const bigId = fixtures.uniqueId("big");
  const bigEpisodes = fixtures.randomEpisodes(2, 7).map((e) => ({ ...e, streams: ["s"] }));
  const bigFiles = bigEpisodes.flatMap((e) =>
    Array.from({ length: 5_001 }, (_, i) => ({
      path: `episodes/${e.episode_id}/${i}.bin`,
      episode_id: e.episode_id,
      stream: "s",
      size_bytes: 1,
      sha256: createHash("sha256").update(String(i)).digest("hex"),
    })),
  );
  await fixtures.importTestDataset([{ version: "1.0.0", episodes: bigEpisodes, files: bigFiles }], bigId);
  await fixtures.grant(org.id, bigId, "1.0.0");

  // LeRobot versions: six episodes, two cameras, failures 1 and 4; a v3.0 file holds two episodes.
  const lerobot: Record<string, string> = {};
  const fingerprinted: Record<string, string> = {};
  const { setFingerprinting } = await import("../lib/fingerprints/admin");
  const { startCopyWorker } = await import("../lib/fingerprints/jobs");
  const { licenceOf, plainRepo } = await import("../lib/testing/hub-fixtures");
  for (const version of ["v2.1", "v3.0"] as const) {
    const datasetId = fixtures.uniqueId(`lr${version.replace(".", "")}`);
    const root = mkdtempSync(path.join(dataDir, "lerobot-"));
    await buildLeRobotFixture(root, {
      version,
      episodes: 6,
      cameras: ["observation.images.front", "observation.images.wrist"],
      episodesPerFile: 2,
      chunksSize: 4,
      extra: (e) => ({ outcome: [1, 4].includes(e) ? "failure" : "success", contributor: `op-${e}` }),
      // Subtasks as `subtask_index`: the language columns are newer than the released LeRobot the
      // loader check opens these pulls with (0.4.4 refuses their `language` dtype).
      subtasks: { source: "subtask_index" },
    });
    await importLeRobotVersion(getDb().$client, {
      dir: root,
      datasetId,
      version: "1.0.0",
      upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, "1.0.0", p) },
    });
    await fixtures.grant(org.id, datasetId, "1.0.0");
    lerobot[version] = datasetId;
    // The same dataset again, fingerprinted: the organisation's pulls of it are its licence's own
    // marked copies (docs/leak-tracing.md), made here before the server starts.
    const fingerprintedId = fixtures.uniqueId(`fp${version.replace(".", "")}`);
    await importLeRobotVersion(getDb().$client, {
      dir: root,
      datasetId: fingerprintedId,
      version: "1.0.0",
      upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(fingerprintedId, "1.0.0", p) },
    });
    await fixtures.grant(org.id, fingerprintedId, "1.0.0");
    if (version === "v3.0") {
      await fixtures.grant(otherOrg.id, fingerprintedId, "1.0.0");
      fingerprintedLicences.main = await licenceOf(org.id, fingerprintedId, "1.0.0");
      fingerprintedLicences.other = await licenceOf(otherOrg.id, fingerprintedId, "1.0.0");
    }
    await setFingerprinting(fixtures.operatorCtx(), { datasetId: fingerprintedId, version: "1.0.0", on: true });
    fingerprinted[version] = fingerprintedId;
  }
  // The copies of the fingerprinted versions, by the job queue's worker, before anyone pulls. Its
  // info lines would go to stdout, which carries this script's one JSON line: they go to stderr.
  const stdout = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  const copyWorker = await startCopyWorker({
    url: runtime.env.DATABASE_URL!,
    db: getDb(),
    pollingIntervalSeconds: 0.5,
  });
  for (;;) {
    const [left] = await getDb().$client<{ n: number }[]>`
      select count(*)::int as n from files f join dataset_versions v on v.id = f.version_id
      join licences l on l.version_id = v.id
      where v.fingerprinted and not exists (select 1 from licence_copies c where c.licence_id = l.id and c.path = f.path)`;
    if (!left!.n) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await copyWorker.stop();
  process.stdout.write = stdout;
  // For sync: versions of their own (a withdrawal takes episodes out of every version holding them),
  // pulled by a key of an organisation of their own (its notices are no other test's), then
  // withdrawn through standard input.
  const syncOrg = await fixtures.createTestOrg();
  /** A plain version of `count` episodes (cam and joints each) in the store, licensed to `organizationId`. */
  const storedPlainVersion = async (prefix: string, organizationId: string, count: number, seed: number) => {
    const datasetId = fixtures.uniqueId(prefix);
    const versionEpisodes = fixtures.randomEpisodes(count, seed);
    const versionFiles = versionEpisodes.flatMap((e, i) =>
      ["cam", "joints"].map((stream) => {
        const body = randomBytes(1_000 + i * 10);
        const p = `episodes/${e.episode_id}/${stream}.bin`;
        content.set(p, body);
        return {
          path: p,
          episode_id: e.episode_id,
          stream,
          size_bytes: body.length,
          sha256: createHash("sha256").update(body).digest("hex"),
        };
      }),
    );
    await fixtures.importTestDataset([{ version: "1.0.0", episodes: versionEpisodes, files: versionFiles }], datasetId);
    await Promise.all(
      versionFiles.map((f) =>
        putObject(client, location.bucket, objectKey(datasetId, "1.0.0", f.path), content.get(f.path)!),
      ),
    );
    await fixtures.grant(organizationId, datasetId, "1.0.0");
    return { dataset_id: datasetId, version: "1.0.0", episodes: versionEpisodes.map((e) => e.episode_id) };
  };
  /** A LeRobot version of six episodes, two to a v3.0 file, in the store, licensed to `organizationId`. */
  const storedLeRobotVersion = async (
    prefix: string,
    organizationId: string,
    fixture: Omit<Parameters<typeof buildLeRobotFixture>[1], "episodes" | "episodesPerFile" | "chunksSize">,
  ) => {
    const datasetId = fixtures.uniqueId(prefix);
    const root = mkdtempSync(path.join(dataDir, `${prefix}-`));
    await buildLeRobotFixture(root, { ...fixture, episodes: 6, episodesPerFile: 2, chunksSize: 4 });
    await importLeRobotVersion(getDb().$client, {
      dir: root,
      datasetId,
      version: "1.0.0",
      upload: { client, bucket: location.bucket, keyOf: (p) => objectKey(datasetId, "1.0.0", p) },
    });
    await fixtures.grant(organizationId, datasetId, "1.0.0");
    return datasetId;
  };
  const syncPlain = await storedPlainVersion("syncplain", syncOrg.id, 4, 31);
  const syncLeRobotId = await storedLeRobotVersion("synclr", syncOrg.id, {
    version: "v3.0",
    cameras: ["observation.images.front"],
  });
  // For the sync vectors (test_sync_vectors.py: das sync and the Python sync on two copies of one
  // pulled directory): a version per vector, since a withdrawal takes its episodes out of every pull,
  // licensed to an organisation of their own. `refused` has its licence ended by a test, after its
  // pull, so that the service will not plan the episodes a sync leaves; `incomplete` has a file of
  // an episode left deleted from the pulled directory, so that the plan cannot be carried out.
  const syncVectorsOrg = await fixtures.createTestOrg();
  organizations.syncVectors = syncVectorsOrg.id;
  const cameras = ["observation.images.front", "observation.images.wrist"];
  const failures = (e: number) => ({ outcome: [1, 4].includes(e) ? "failure" : "success" });
  const syncVectors = {
    plain: (await storedPlainVersion("svplain", syncVectorsOrg.id, 4, 41)).dataset_id,
    "v2.1": await storedLeRobotVersion("svlr21", syncVectorsOrg.id, { version: "v2.1", cameras }),
    "v3.0": await storedLeRobotVersion("svlr30", syncVectorsOrg.id, { version: "v3.0", cameras, extra: failures }),
    "v3.0 kept": await storedLeRobotVersion("svlr30k", syncVectorsOrg.id, { version: "v3.0", cameras }),
    refused: await storedLeRobotVersion("svrefused", syncVectorsOrg.id, { version: "v2.1", cameras }),
    incomplete: await storedLeRobotVersion("svincomplete", syncVectorsOrg.id, { version: "v2.1", cameras }),
  };
  client.destroy();

  // For the Hub protocol: a dataset of our own format with 1.0.0 licensed, 2.0.0's licence ended
  // and 3.0.0's starting tomorrow, and one of its own to withdraw from.
  const hubPlain = await plainRepo(org.id, { episodes: 6 });
  const hubWithdrawn = await plainRepo(org.id, { episodes: 3 });
  // A dataset whose every licence is out of its term: 1.0.0's ended yesterday, 2.0.0's starts tomorrow.
  const gatedId = fixtures.uniqueId("gated");
  {
    const DAY = 86_400_000;
    const [episode] = fixtures.randomEpisodes(1, 37).map((e) => ({ ...e, streams: ["s"] }));
    const files = [
      { path: "a.bin", episode_id: episode!.episode_id, stream: "s", size_bytes: 1, sha256: "e".repeat(64) },
    ];
    await fixtures.importTestDataset(
      ["1.0.0", "2.0.0"].map((v) => ({ version: v, episodes: [episode!], files })),
      gatedId,
    );
    const { grantLicence } = await import("../lib/admin/licences");
    const now = Date.now();
    const terms = [
      { version: "1.0.0", startsAt: new Date(now - 3 * DAY), endsAt: new Date(now - DAY) },
      { version: "2.0.0", startsAt: new Date(now + DAY) },
    ];
    for (const term of terms)
      await grantLicence(fixtures.operatorCtx(), { organizationId: org.id, datasetId: gatedId, ...term });
  }
  // LeRobot 0.4's StreamingLeRobotDataset seeks a frame in a video file at `index / fps`, which holds
  // only where one file per camera holds every episode: a v3.0 dataset laid out so, for it.
  const streamId = fixtures.uniqueId("lrstream");
  {
    const root = mkdtempSync(path.join(dataDir, "lerobot-stream-"));
    await buildLeRobotFixture(root, { version: "v3.0", episodes: 4, episodesPerFile: 4, chunksSize: 4 });
    const store = s3Client(location);
    await importLeRobotVersion(getDb().$client, {
      dir: root,
      datasetId: streamId,
      version: "1.0.0",
      upload: { client: store, bucket: location.bucket, keyOf: (p) => objectKey(streamId, "1.0.0", p) },
    });
    store.destroy();
    await fixtures.grant(org.id, streamId, "1.0.0");
  }
  const hubFiles = (repo: typeof hubPlain) =>
    repo.files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size_bytes, episode_id: f.episode_id }));

  // A key per test that needs a rate-limit budget or a disclosure log of its own.
  const keys: Record<string, string> = {};
  for (const name of ["main", "rate", "errors", "pull", "resume", "expiry", "vectors", "node", "loader"])
    keys[name] = (await fixtures.createTestKey(org.id, { name: `python ${name}` })).secret;
  keys.sync = (await fixtures.createTestKey(syncOrg.id, { name: "python sync" })).secret;
  // The sync vectors' Python client and das each have a key (and a rate-limit budget) of their own.
  for (const name of ["sync_vectors", "sync_vectors_node"])
    keys[name] = (await fixtures.createTestKey(syncVectorsOrg.id, { name: `python ${name}` })).secret;
  // Kept open for the withdrawals a test asks for; closed when everything stops.
  closeDb = () => getDb().$client.end({ timeout: 5 });

  server = await startNextServer({
    ...process.env,
    ...runtime.env,
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
    AUTH_FAILURES_PER_MINUTE: String(Math.max(1000, RATE_LIMIT_PER_MINUTE)),
    DIGEST_INTERVAL_MINUTES: "0",
    // Copies are made before the server starts, and on a test's command: a licence granted while
    // it runs waits for them, as one waits for the job in production.
    COPY_WORKER: "off",
  });
  process.stdout.write(
    `${JSON.stringify({
      url: server.url,
      keys,
      rate_limit_per_minute: RATE_LIMIT_PER_MINUTE,
      plain: { dataset_id: plainId, version: "1.0.0", unlicensed_version: "2.0.0", episodes: episodes.length },
      big: { dataset_id: bigId, version: "1.0.0" },
      lerobot,
      lerobot_fingerprinted: fingerprinted,
      sync: {
        plain: syncPlain,
        lerobot: { dataset_id: syncLeRobotId, version: "1.0.0", codebase_version: "v3.0", episodes: 6 },
      },
      sync_vectors: syncVectors,
      hub: {
        plain: { dataset_id: hubPlain.datasetId, episodes: hubPlain.episodes, files: hubFiles(hubPlain) },
        withdrawn: {
          dataset_id: hubWithdrawn.datasetId,
          episodes: hubWithdrawn.episodes,
          files: hubFiles(hubWithdrawn),
        },
        // Licensed to the sync organisation only: to the main one, as if it did not exist.
        unlicensed: { dataset_id: syncPlain.dataset_id },
        // Licensed to the main organisation only out of term.
        gated: { dataset_id: gatedId },
        // The v3.0 version fingerprinted, licensed to the main organisation and to another.
        fingerprinted: { dataset_id: fingerprinted["v3.0"], licences: fingerprintedLicences },
        streamable: { dataset_id: streamId, episodes: 4 },
      },
    })}\n`,
  );
} catch (error) {
  log(`could not start: ${(error as Error).stack ?? String(error)}`);
  await stop();
  process.exit(1);
}

// Up until the test session closes our standard input (or ends); each line on it is a command.
const { withdrawEpisodes } = await import("../lib/withdrawals/withdraw");
const { operatorCtx, createTestKey } = await import("../lib/testing/fixtures");
const { entriesOf, licenceOf: licenceHeld } = await import("../lib/testing/hub-fixtures");
const { createTestOrg, grant } = await import("../lib/testing/fixtures");
const { makeCopy } = await import("../lib/fingerprints/copies");
const { endLicence } = await import("../lib/admin/licences");
const { runCli } = await import("../lib/testing/cli");
const { getDb: db } = await import("../lib/db/client");
let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await stop();
  process.exit(0);
};
let pending = Promise.resolve();
const commands = createInterface({ input: process.stdin });
commands.on("line", (line) => {
  pending = pending.then(async () => {
    let answer: unknown;
    try {
      const command = JSON.parse(line) as {
        withdraw?: unknown;
        key?: unknown;
        organization?: unknown;
        entries?: unknown;
        grant?: unknown;
        make_copies?: unknown;
        trace?: unknown;
        end_licence?: unknown;
        acknowledgements?: unknown;
      };
      if (typeof command.key === "string") {
        // The main organisation's (it holds every licence the Hub's tests use), or the other licensee's.
        const issued = await createTestKey(organizations[command.organization === "other" ? "other" : "main"], {
          name: `python ${command.key}`,
        });
        answer = { key: issued.secret, key_id: issued.id };
      } else if (typeof command.grant === "string") {
        const org = await createTestOrg();
        await grant(org.id, command.grant, "1.0.0");
        const issued = await createTestKey(org.id, { name: "python granted" });
        answer = {
          key: issued.secret,
          key_id: issued.id,
          licence_id: await licenceHeld(org.id, command.grant, "1.0.0"),
        };
      } else if (command.make_copies === true) {
        answer = { made: await makeDueCopies() };
      } else if (Array.isArray(command.trace)) {
        const run = await runCli("das-admin", ["trace", "--json", ...command.trace.map(String)], { env: process.env });
        if (run.code !== 0) throw new Error(`das-admin trace exited with ${run.code}: ${run.stderr.slice(-2000)}`);
        answer = JSON.parse(run.stdout);
      } else if (typeof command.end_licence === "string") {
        const ended = await endLicence(operatorCtx(), {
          organizationId: organizations.syncVectors,
          datasetId: command.end_licence,
          version: "1.0.0",
          endsAt: new Date(),
        });
        answer = { licence_id: ended.id, ends_at: ended.endsAt.toISOString() };
      } else if (typeof command.acknowledgements === "string") {
        // What each acknowledgement of a notice told the data owner (the API does not list them).
        const rows = await db().$client<{ id: string; statement: string; deleted_paths: string[] }[]>`
          select id, statement, deleted_paths from notice_acknowledgements
          where notice_id = ${command.acknowledgements} order by seq`;
        answer = { acknowledgements: rows };
      } else if (typeof command.entries === "string") {
        const entries = await entriesOf(command.entries);
        answer = { entries: entries.map((e) => ({ ...e, expires_at: e.expires_at.toISOString() })) };
      } else {
        if (!Array.isArray(command.withdraw)) throw new Error('expected {"withdraw": ["episode-id", ...]}');
        const done = await withdrawEpisodes(operatorCtx(), {
          episodeIds: command.withdraw.map(String),
          reason: "withdrawn by the Python client's tests",
        });
        answer = { withdrawal_id: done.withdrawal_id, episode_ids: done.episode_ids, notices: done.notices };
      }
    } catch (error) {
      answer = { error: (error as Error).message };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  });
});
commands.on("close", () => void pending.then(shutdown));

/** Every copy due on a fingerprinted version, made here as the copy job makes it. */
async function makeDueCopies(): Promise<number> {
  const due = await db().$client<{ licenceId: string; path: string }[]>`
    select l.id as "licenceId", f.path from licences l join dataset_versions v on v.id = l.version_id
    join files f on f.version_id = v.id
    where v.fingerprinted and l.revoked_at is null
      and not exists (select 1 from licence_copies c where c.licence_id = l.id and c.path = f.path)`;
  for (const job of due) await makeCopy(db(), job);
  return due.length;
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, shutdown);

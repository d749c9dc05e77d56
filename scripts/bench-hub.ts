// npm run bench:hub [-- --files 400 --file-mb 2 --runs 3 --head-episodes 1000000 --head-samples 2000 --snapshot-files 1000]
// The Hugging Face Hub protocol (/hub) against the service's own clients, over HTTP on the
// production build, against one local store:
// - hub_snapshot_to_pull_ratio: a whole version (--files files of --file-mb MB, in the store) taken
//   by huggingface_hub's snapshot_download (the 0.35 line LeRobot 0.4 pins) over the time `das
//   pull` takes for the same version, each run --runs times alternately with a fresh key, medians
//   compared (target: at most 1.1);
// - hub_zero_work_to_pull_ratio: the same snapshot_download, in the same rounds, against a Hub on
//   loopback that does no work (this process: the service's repository info and HEAD headers
//   replayed, a redirect to a URL of the same store signed on the spot; no key, lookup or
//   disclosure), over the same das pull: huggingface_hub's own cost with this store, the bound
//   the service's Hub cannot go under; hub_snapshot_to_zero_work_ratio is the snapshot's median over
//   the zero-work one's, the service's own part;
// - hub_head_p50_ms: HEAD on resolve of a file of a version of --head-episodes episodes (a file
//   each), back to back on one keep-alive connection (target: under 5 ms at 1,000,000);
// - the 1,000-file snapshot: every file of a --snapshot-files version disclosed, no more entries
//   than files, and the whole chain intact afterwards (the run fails otherwise).
// huggingface_hub comes from clients/python/hub-check.sh's interpreter (DAS_HUB_PYTHON, or
// clients/python/.venv-hub/hub-0.35, made here from PyPI when missing). Prints a table, then one JSON line.
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import http from "node:http";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { PROJECT_ROOT, startEmbeddedDefault } from "@/lib/dev/embedded-default";

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "400" },
    "file-mb": { type: "string", default: "2" },
    runs: { type: "string", default: "3" },
    "head-episodes": { type: "string", default: "1000000" },
    "head-samples": { type: "string", default: "2000" },
    "snapshot-files": { type: "string", default: "1000" },
    python: { type: "string" },
  },
});
const FILES = Number(values.files);
const FILE_BYTES = Math.round(Number(values["file-mb"]) * 2 ** 20);
const RUNS = Number(values.runs);
const HEAD_EPISODES = Number(values["head-episodes"]);
const HEAD_SAMPLES = Number(values["head-samples"]);
const SNAPSHOT_FILES = Number(values["snapshot-files"]);
const PYTHON =
  values.python ??
  process.env.DAS_HUB_PYTHON ??
  path.join(PROJECT_ROOT, "clients/python/.venv-hub/hub-0.35/bin/python");
if (!existsSync(PYTHON)) {
  // Made as clients/python/hub-check.sh makes it (and then reused by it): pip, from PyPI.
  const dir = path.dirname(path.dirname(PYTHON));
  process.stderr.write(`[bench] making ${dir} with huggingface_hub 0.35\n`);
  const made =
    spawnSync("python3", ["-m", "venv", dir], { stdio: "inherit" }).status === 0 &&
    spawnSync(
      PYTHON,
      ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "huggingface_hub>=0.35,<0.36"],
      {
        stdio: "inherit",
      },
    ).status === 0;
  if (!made) {
    process.stderr.write(`No interpreter with huggingface_hub at ${PYTHON}, and none could be made (pass --python).\n`);
    process.exit(2);
  }
}

process.env.DAS_DATA_DIR ??= ".data/bench";
const runtime = await startEmbeddedDefault();
Object.assign(process.env, runtime.env, { RATE_LIMIT_PER_MINUTE: "100000000" });
const { createDb } = await import("@/lib/db/client");
const { importVersion } = await import("@/lib/catalog/import/import-version");
const { writeBulkVersion } = await import("@/lib/dev/demo/generate");
const { createOrganization, organizationBySlug } = await import("@/lib/admin/organizations");
const { grantLicence } = await import("@/lib/admin/licences");
const { issueKey } = await import("@/lib/admin/keys");
const { verifyChain } = await import("@/lib/disclosures/verify");
const { putObject, s3Client } = await import("@/lib/storage/client");
const { objectKey, presigner, storeLocation, URL_TTL_SECONDS } = await import("@/lib/storage/config");
const { percentile, progress, startProductionServer, table } = await import("./bench/common");

const db = createDb(runtime.env.DATABASE_URL!, { max: 10 });
const operator = {
  db,
  requestId: "bench",
  principal: { kind: "operator" as const, name: userInfo().username, organizationId: null },
};
const org = await organizationBySlug(operator, "bench-hub").catch(() =>
  createOrganization(operator, { slug: "bench-hub" }),
);
const issued = (name: string) =>
  issueKey(operator, { organizationId: org.id, name: `bench hub ${name} ${Date.now()}` });
const newKey = async (name: string) => (await issued(name)).secret;

/**
 * A version of `episodes` episodes in our own format with one file each (`size` bytes, random,
 * put into the store when `upload`), imported once and reused by later runs; licensed to bench-hub.
 */
async function benchVersion(datasetId: string, episodes: number, size: number, upload: boolean): Promise<string> {
  const [existing] =
    await db.$client`select 1 from dataset_versions where dataset_id = ${datasetId} and version = '1.0.0'`;
  if (!existing) {
    const scratch = mkdtempSync(path.join(tmpdir(), "das-bench-hub-"));
    try {
      progress(`writing ${datasetId}: ${episodes} episodes, a file of ${size} bytes each`);
      const dir = await writeBulkVersion(scratch, datasetId, "1.0.0", episodes);
      const location = storeLocation();
      const client = s3Client(location);
      let lines = "";
      for (let i = 1; i <= episodes; i++) {
        const episodeId = `${datasetId}-${String(i).padStart(8, "0")}`;
        const file = `episodes/${episodeId}/wrist_cam.bin`;
        const body = upload ? randomBytes(size) : null;
        const sha256 = createHash("sha256")
          .update(body ?? file)
          .digest("hex");
        if (body) await putObject(client, location.bucket, objectKey(datasetId, "1.0.0", file), body);
        lines += `${JSON.stringify({ path: file, episode_id: episodeId, stream: "wrist_cam", size_bytes: size, sha256 })}\n`;
        if (lines.length > 1 << 20) {
          appendFileSync(path.join(dir, "files.jsonl"), lines);
          lines = "";
        }
      }
      appendFileSync(path.join(dir, "files.jsonl"), lines);
      client.destroy();
      progress(`importing ${datasetId}`);
      await importVersion(db.$client, dir);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  await grantLicence(operator, { organizationId: org.id, datasetId, version: "1.0.0" });
  return datasetId;
}

function run(command: string, args: string[], env: Record<string, string>): Promise<number> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0
        ? resolve(Number(process.hrtime.bigint() - started) / 1e9)
        : reject(new Error(`${path.basename(command)} ${args[0]} exited with ${code}: ${stderr}`)),
    );
  });
}

const hubEnv = (endpoint: string, key: string) => ({
  HF_ENDPOINT: `${endpoint}/hub`,
  HF_TOKEN: key,
  HF_HOME: mkdtempSync(path.join(tmpdir(), "das-bench-hf-")),
  HF_HUB_DISABLE_XET: "1",
  HF_HUB_DISABLE_TELEMETRY: "1",
  HF_HUB_DISABLE_PROGRESS_BARS: "1",
});
const snapshot = (datasetId: string, dir: string, key: string, endpoint = server.url) =>
  run(
    PYTHON,
    [
      "-c",
      `import sys; from huggingface_hub import snapshot_download; snapshot_download(sys.argv[1], repo_type="dataset", local_dir=sys.argv[2])`,
      `das/${datasetId}`,
      dir,
    ],
    hubEnv(endpoint, key),
  );
const dasPull = (datasetId: string, dir: string, key: string) =>
  run(
    process.execPath,
    [path.join(PROJECT_ROOT, "scripts/bin/das.mjs"), "pull", `${datasetId}@1.0.0`, "--dir", dir, "--json"],
    {
      DAS_API_URL: server.url,
      DAS_API_KEY: key,
    },
  );

function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== ".cache" && entry.name !== ".das") total += bytesUnder(full);
    } else if (entry.name !== "das-provenance.json") total += statSync(full).size;
  }
  return total;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * A Hub on loopback that does no work, for the version `datasetId`: the repository info and each
 * file's HEAD headers as the service answered them (read once here with `key`; HEAD discloses
 * nothing), and for a GET the same headers with a redirect to a URL of the same store signed on
 * the spot. No key is checked, nothing is looked up or disclosed: what snapshot_download takes
 * against it is its own per-file work (its requests, locks and files) with this store.
 */
async function zeroWorkHub(datasetId: string, key: string): Promise<{ url: string; close(): Promise<void> }> {
  const authorization = `Bearer ${key}`;
  const infoAnswer = await fetch(`${server.url}/hub/api/datasets/das/${datasetId}/revision/main`, {
    headers: { authorization },
  });
  if (!infoAnswer.ok) throw new Error(`repository info answered ${infoAnswer.status}`);
  const info = await infoAnswer.text();
  const replayed = ["x-repo-commit", "etag", "x-linked-etag", "x-linked-size", "accept-ranges"];
  const files = new Map<string, Record<string, string>>();
  for (const { rfilename } of (JSON.parse(info) as { siblings: { rfilename: string }[] }).siblings) {
    const head = await fetch(`${server.url}/hub/datasets/das/${datasetId}/resolve/main/${encodeURI(rfilename)}`, {
      method: "HEAD",
      headers: { authorization },
    });
    if (!head.ok) throw new Error(`HEAD on ${rfilename} answered ${head.status}`);
    files.set(rfilename, Object.fromEntries(replayed.map((name) => [name, head.headers.get(name) ?? ""])));
  }
  const resolvePath = new RegExp(`^/hub/datasets/das/${datasetId}/resolve/[^/]+/(.+)$`);
  const hub = http.createServer(async (req, res) => {
    const pathname = new URL(req.url ?? "/", "http://loopback").pathname;
    if (pathname.startsWith(`/hub/api/datasets/das/${datasetId}/revision/`)) {
      res.writeHead(200, { "content-type": "application/json" }).end(info);
      return;
    }
    const file = resolvePath.exec(pathname)?.[1];
    const headers = file === undefined ? undefined : files.get(decodeURIComponent(file));
    if (!headers) {
      res.writeHead(404, { "x-error-code": "EntryNotFound" }).end();
    } else if (req.method === "HEAD") {
      res.writeHead(200, headers).end();
    } else {
      const [location] = await presigner().presignKeys([objectKey(datasetId, "1.0.0", decodeURIComponent(file!))], {
        signingDate: new Date(),
        expiresIn: URL_TTL_SECONDS,
      });
      res.writeHead(302, { ...headers, location: location! }).end();
    }
  });
  await new Promise<void>((resolve) => hub.listen(0, "127.0.0.1", resolve));
  const { port } = hub.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => hub.close(() => resolve())),
  };
}

const transferId = await benchVersion(`bench-hub-transfer-${FILES}x${FILE_BYTES}`, FILES, FILE_BYTES, true);
const headId = await benchVersion(`bench-hub-head-${HEAD_EPISODES}`, HEAD_EPISODES, 1000, false);
const snapshotId = await benchVersion(`bench-hub-snapshot-${SNAPSHOT_FILES}`, SNAPSHOT_FILES, 1024, true);
const server = await startProductionServer({
  RATE_LIMIT_PER_MINUTE: "100000000",
  AUTH_FAILURES_PER_MINUTE: "100000000",
});

try {
  // 1. Whole-version snapshot_download against das pull, alternately, each with a fresh key.
  // Then the same snapshot against a Hub that does no work, in the same rounds: the client's bound.
  const pulls: number[] = [];
  const snapshots: number[] = [];
  const zeroWorkSnapshots: number[] = [];
  const expected = FILES * FILE_BYTES;
  const zeroWork = await zeroWorkHub(transferId, await newKey("zero-work hub"));
  try {
    for (let i = 0; i < RUNS; i++) {
      for (const [name, times, fetcher] of [
        ["das pull", pulls, dasPull],
        ["snapshot_download", snapshots, snapshot],
        [
          "snapshot_download, zero-work Hub",
          zeroWorkSnapshots,
          (datasetId: string, dir: string, key: string) => snapshot(datasetId, dir, key, zeroWork.url),
        ],
      ] as const) {
        const dir = mkdtempSync(path.join(tmpdir(), "das-bench-hub-run-"));
        try {
          const seconds = await fetcher(transferId, dir, await newKey(name));
          const received = bytesUnder(dir);
          if (received < expected) throw new Error(`${name} wrote ${received} bytes of ${expected}`);
          times.push(seconds);
          progress(`${name} run ${i + 1}: ${seconds.toFixed(2)} s`);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
  } finally {
    await zeroWork.close();
  }

  // 2. HEAD on resolve at scale: a random file each time, back to back.
  const headKey = await newKey("head");
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const head = (index: number) =>
    new Promise<number>((resolve, reject) => {
      const episodeId = `${headId}-${String(index).padStart(8, "0")}`;
      const req = http.request(
        `${server.url}/hub/datasets/das/${headId}/resolve/main/episodes/${episodeId}/wrist_cam.bin`,
        { method: "HEAD", agent, headers: { authorization: `Bearer ${headKey}` } },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end();
    });
  // The same loop over GET /api/v1/licences, the API's lightest keyed read, on the same connection
  // and the same load: what the machine gives any request now, beside the HEAD's figure.
  const licences = () =>
    new Promise<number>((resolve, reject) => {
      http
        .get(`${server.url}/api/v1/licences`, { agent, headers: { authorization: `Bearer ${headKey}` } }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        })
        .on("error", reject);
    });
  const pick = () => 1 + Math.floor(Math.random() * HEAD_EPISODES);
  for (let i = 0; i < 200; i++) if ((await head(pick())) !== 200) throw new Error("HEAD on resolve did not answer 200");
  const heads: number[] = [];
  const reference: number[] = [];
  for (let i = 0; i < HEAD_SAMPLES; i++) {
    for (const [times, request] of [
      [heads, () => head(pick())],
      [reference, licences],
    ] as const) {
      const started = process.hrtime.bigint();
      await request();
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  heads.sort((a, b) => a - b);
  reference.sort((a, b) => a - b);

  // 3. The 1,000-file snapshot: every file disclosed, no more entries than files, the chain intact.
  const snapshotKey = await issued("snapshot");
  const snapshotDir = mkdtempSync(path.join(tmpdir(), "das-bench-hub-snapshot-"));
  const snapshotSeconds = await snapshot(snapshotId, snapshotDir, snapshotKey.secret);
  rmSync(snapshotDir, { recursive: true, force: true });
  const entries = await db.$client<{ paths: string[] }[]>`
    select requested_scope->'paths' as paths from disclosures where api_key_id = ${snapshotKey.id}`;
  const disclosed = new Set(entries.flatMap((e) => e.paths));
  const chain = await verifyChain(operator, { mode: "full" });
  const everyFileDisclosed = disclosed.size === SNAPSHOT_FILES;
  const noMoreEntriesThanFiles = entries.length <= SNAPSHOT_FILES;
  const figures = {
    files: FILES,
    bytes: FILES * FILE_BYTES,
    das_pull_s: median(pulls),
    hub_snapshot_s: median(snapshots),
    hub_snapshot_to_pull_ratio: Math.round((median(snapshots) / median(pulls)) * 100) / 100,
    hub_zero_work_snapshot_s: median(zeroWorkSnapshots),
    hub_zero_work_to_pull_ratio: Math.round((median(zeroWorkSnapshots) / median(pulls)) * 100) / 100,
    // The service's own part: the same client, the same store, with and without the service's Hub.
    hub_snapshot_to_zero_work_ratio: Math.round((median(snapshots) / median(zeroWorkSnapshots)) * 100) / 100,
    episodes: HEAD_EPISODES,
    hub_head_p50_ms: percentile(heads, 50),
    hub_head_p99_ms: percentile(heads, 99),
    api_licences_p50_ms: percentile(reference, 50),
    snapshot_files: SNAPSHOT_FILES,
    hub_snapshot_1000_s: snapshotSeconds,
    snapshot_entries: entries.length,
    every_file_disclosed: everyFileDisclosed,
    no_more_entries_than_files: noMoreEntriesThanFiles,
    chain_intact: chain.intact,
  };
  process.stdout.write(
    `${table([
      {
        measure: `das pull, ${FILES} files of ${values["file-mb"]} MB (median of ${RUNS})`,
        value: figures.das_pull_s,
        unit: "s",
      },
      { measure: "snapshot_download, the same version", value: figures.hub_snapshot_s, unit: "s" },
      { measure: "snapshot_download / das pull (target <= 1.1)", value: figures.hub_snapshot_to_pull_ratio, unit: "" },
      { measure: "snapshot_download, a zero-work Hub, same store", value: figures.hub_zero_work_snapshot_s, unit: "s" },
      {
        measure: "zero-work Hub's snapshot / das pull (the bound)",
        value: figures.hub_zero_work_to_pull_ratio,
        unit: "",
      },
      {
        measure: "snapshot_download / the zero-work Hub's (the service's part)",
        value: figures.hub_snapshot_to_zero_work_ratio,
        unit: "",
      },
      {
        measure: `HEAD on resolve p50, ${HEAD_EPISODES} episodes (target < 5)`,
        value: figures.hub_head_p50_ms,
        unit: "ms",
      },
      { measure: "HEAD on resolve p99", value: figures.hub_head_p99_ms, unit: "ms" },
      { measure: "GET /api/v1/licences p50, alternating with it", value: figures.api_licences_p50_ms, unit: "ms" },
      { measure: `snapshot of ${SNAPSHOT_FILES} files: entries`, value: entries.length, unit: "" },
    ])}\n`,
  );
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  if (!everyFileDisclosed || !noMoreEntriesThanFiles || !chain.intact) {
    process.stderr.write("The 1,000-file snapshot check failed: see the figures above.\n");
    process.exitCode = 1;
  }
} finally {
  await server.stop();
  await db.$client.end({ timeout: 5 });
  await runtime.stop();
}

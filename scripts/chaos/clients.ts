// The chaos run's load: licensee clients downloading and previewing through the load balancer,
// each request retried until it is answered (a download with the same Idempotency-Key, a preview
// with the same body, which the service answers with the same preview while it is valid), and
// `das pull`s of whole versions, each verifying every file it writes.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { DEMO_ORGANIZATIONS } from "@/lib/dev/demo/credentials";

/** One request a client made, with every attempt it took. */
export type Operation = {
  client: number;
  kind: "download" | "preview";
  startedMs: number;
  /** Each attempt's status, or `network` when no answer came (a connection cut, a timeout). */
  attempts: (number | "network")[];
  /** The download's or the preview's id, once answered; its URLs. */
  id?: string;
  urls: number;
  /** No answer within the run's patience: whatever the log holds for it, the client never learnt. */
  gaveUp: boolean;
};

export type PullRun = {
  pull: number;
  target: string;
  code: number | null;
  files: number;
  verified: number;
  failed: number;
  downloads: string[];
  output: string;
};

export type Load = { operations: Operation[]; pulls: PullRun[]; done: Promise<void>; stop(): void };

type Catalog = { organization: string; target: { dataset: string; version: string }; episodes: string[] }[];

/** Every attempt a client makes for one request, a minute and a half of them at most. */
const PATIENCE_MS = 90_000;

/** Starts `clients` licensee loops and `pulls` das pull loops; `stop()` lets what is in flight finish. */
export function startLoad(options: {
  baseUrl: string;
  keys: { secret: string; organization: string }[];
  clients: number;
  pulls: number;
  catalog: Catalog;
  maxOperations: number;
  began: number;
}): Load {
  let stopped = false;
  const operations: Operation[] = [];
  const pulls: PullRun[] = [];
  const loops = [
    ...Array.from({ length: options.clients }, async (_, i) => {
      const key = options.keys[i]!;
      const mine = options.catalog.filter((c) => c.organization === key.organization && c.episodes.length);
      while (!stopped && operations.length < options.maxOperations) {
        const op = await perform(options.baseUrl, key.secret, i, mine, options.began);
        operations.push(op);
      }
    }),
    ...Array.from({ length: options.pulls }, async (_, j) => {
      const key = options.keys[options.clients + j]!;
      const target = options.catalog.find((c) => c.organization === key.organization)!.target;
      while (!stopped)
        pulls.push(await pullOnce(options.baseUrl, key.secret, j, `${target.dataset}@${target.version}`));
    }),
  ];
  return {
    operations,
    pulls,
    done: Promise.all(loops).then(() => undefined),
    stop: () => {
      stopped = true;
    },
  };
}

/** One download or preview, asked again after 5xx and lost connections until answered or out of patience. */
async function perform(
  baseUrl: string,
  secret: string,
  client: number,
  catalog: Catalog,
  began: number,
): Promise<Operation> {
  const entry = catalog[Math.floor(Math.random() * catalog.length)]!;
  const episode = () => entry.episodes[Math.floor(Math.random() * entry.episodes.length)]!;
  const kind = Math.random() < 0.6 ? "download" : "preview";
  const { dataset, version } = entry.target;
  const body =
    kind === "download"
      ? { dataset_id: dataset, version, episode_ids: [...new Set([episode(), episode()])] }
      : { episode_id: episode(), version };
  const headers: Record<string, string> = { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" };
  if (kind === "download") headers["Idempotency-Key"] = randomUUID();
  const op: Operation = { client, kind, startedMs: Date.now() - began, attempts: [], urls: 0, gaveUp: false };
  const deadline = Date.now() + PATIENCE_MS;
  for (let attempt = 1; ; attempt++) {
    const status = await send(`${baseUrl}/api/v1/${kind}s`, headers, body, op);
    op.attempts.push(status);
    if (status === 200 || status === 201) return op;
    // A 4xx other than 429 is a refusal to retry nothing for: the run counts it as unexpected.
    if (typeof status === "number" && status >= 400 && status < 500 && status !== 429) return op;
    if (Date.now() > deadline) return { ...op, gaveUp: true };
    await sleep(Math.min(2000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2));
  }
}

async function send(url: string, headers: Record<string, string>, body: object, op: Operation) {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (response.status === 200 || response.status === 201) {
      const answer = JSON.parse(text) as { download_id?: string; preview_id?: string; files?: unknown[] };
      op.id = answer.download_id ?? answer.preview_id;
      op.urls = answer.files?.length ?? 0;
    }
    return response.status;
  } catch {
    return "network" as const;
  }
}

/** One `das pull` of a whole version into a new directory, through the load balancer. */
function pullOnce(baseUrl: string, secret: string, pull: number, target: string): Promise<PullRun> {
  const dir = mkdtempSync(path.join(PROJECT_ROOT, ".data", `chaos-pull-${pull}-`));
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [path.join(PROJECT_ROOT, "scripts/bin/das.mjs"), "pull", target, "--dir", dir, "--concurrency", "4", "--json"],
      { env: { ...process.env, DAS_API_URL: baseUrl, DAS_API_KEY: secret }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c));
    child.stderr.on("data", (c: Buffer) => (stderr += c));
    child.on("close", (code) => {
      rmSync(dir, { recursive: true, force: true });
      const summary = parseSummary(stdout);
      resolve({
        pull,
        target,
        code,
        files: summary?.files ?? 0,
        verified: (summary?.downloaded ?? 0) + (summary?.already_verified ?? 0),
        failed: summary?.failed.length ?? 0,
        downloads: summary?.downloads ?? [],
        output: stderr.slice(-2000),
      });
    });
  });
}

type Summary = { files: number; downloaded: number; already_verified: number; failed: unknown[]; downloads: string[] };

function parseSummary(stdout: string): Summary | null {
  try {
    return JSON.parse(stdout) as Summary;
  } catch {
    return null;
  }
}

/**
 * What the clients ask for: every version each demo organisation holds, with its episodes (read
 * through the API before the faults begin). A `das pull` takes its organisation's first version.
 */
export async function readCatalog(baseUrl: string, keys: { secret: string; organization: string }[]): Promise<Catalog> {
  const catalog: Catalog = [];
  for (const org of DEMO_ORGANIZATIONS) {
    const key = keys.find((k) => k.organization === org.slug)!;
    for (const [dataset, version] of org.licences) {
      const response = await fetch(`${baseUrl}/api/v1/datasets/${dataset}/versions/${version}/episodes?limit=500`, {
        headers: { Authorization: `Bearer ${key.secret}` },
      });
      if (!response.ok)
        throw new Error(`episodes of ${dataset}@${version}: ${response.status} ${await response.text()}`);
      const page = (await response.json()) as { episodes: { episode_id: string }[] };
      catalog.push({
        organization: org.slug,
        target: { dataset, version },
        episodes: page.episodes.map((e) => e.episode_id),
      });
    }
  }
  return catalog;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

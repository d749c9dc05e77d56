// npm run chaos [-- --json] [--duration <s>] [--interval <s>] [--clients <n>] [--pulls <n>]
//
// The production topology on loopback (lib/testing's parts: a Debian PostgreSQL primary and its
// streaming replica, PgBouncer, Redis, the local store, three `next start` instances, HAProxy)
// under load from licensee clients and `das pull`s through the load balancer, while faults are
// injected in turn. Afterwards every signed URL must have its entry, no entry may be unknown to
// every client, every pull must have verified every file, the chain must verify on both servers,
// and nothing may have answered 500. Prints a table of faults and outcomes, then one JSON line
// (with --json, only that line). Exit 0 when every promise held, 1 when one did not, 2 when the
// machine lacks a part (apt-get install postgresql redis-server pgbouncer haproxy).
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { NEXT_BIN, productionBuildIsCurrent } from "@/lib/dev/next-server";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { hasHaproxy } from "@/lib/testing/load-balancer";
import { hasPgBouncer } from "@/lib/testing/pgbouncer";
import { hasRedis } from "@/lib/testing/redis-server";
import { readCatalog, sleep, startLoad } from "./chaos/clients";
import { injectFaults } from "./chaos/faults";
import { checkOutcome, outcomeTable, passed, unhandledErrors } from "./chaos/outcome";
import { startTopology } from "./chaos/topology";

const { values } = parseArgs({
  options: {
    json: { type: "boolean", default: false },
    duration: { type: "string", default: "240" },
    interval: { type: "string", default: "20" },
    clients: { type: "string", default: "16" },
    pulls: { type: "string", default: "2" },
    "max-requests": { type: "string", default: "50000" },
  },
});
const bounded = (name: string, text: string, min: number, max: number) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`chaos: --${name} must be a whole number from ${min} to ${max}`);
    process.exit(2);
  }
  return n;
};
const durationS = bounded("duration", values.duration, 30, 1800);
const intervalS = bounded("interval", values.interval, 5, 600);
const clients = bounded("clients", values.clients, 1, 64);
const pulls = bounded("pulls", values.pulls, 0, 8);
const maxRequests = bounded("max-requests", values["max-requests"], 1, 1_000_000);
const say = (line: string) => {
  if (!values.json) console.error(`[chaos] ${line}`);
};

const missing = [
  ["haproxy", hasHaproxy()],
  ["redis-server", hasRedis()],
  ["pgbouncer", hasPgBouncer()],
].filter(([, present]) => !present);
if (missing.length) {
  console.error(
    `chaos: needs ${missing.map(([name]) => name).join(", ")}: apt-get install postgresql redis-server pgbouncer haproxy`,
  );
  process.exit(2);
}
if (!productionBuildIsCurrent()) {
  say("no production build of this code: running `next build` first");
  const build = spawnSync(process.execPath, [NEXT_BIN, "build"], {
    cwd: PROJECT_ROOT,
    stdio: values.json ? "ignore" : "inherit",
  });
  if (build.status !== 0) process.exit(1);
}

const topology = await startTopology({ clients, pulls, say });
let code = 1;
try {
  const catalog = await readCatalog(topology.lb.url, topology.keys);
  const [head] = await topology.owner.$client<{ seq: string | null }[]>`select max(seq) as seq from disclosures`;
  const startSeq = Number(head!.seq ?? 0);
  say(
    `load: ${clients} clients and ${pulls} das pulls through ${topology.lb.url} for ${durationS} s, a fault every ${intervalS} s`,
  );
  const began = Date.now();
  const load = startLoad({
    baseUrl: topology.lb.url,
    keys: topology.keys,
    clients,
    pulls,
    catalog,
    maxOperations: maxRequests,
    began,
  });
  const faults = await injectFaults(topology, {
    began,
    durationMs: durationS * 1000,
    intervalMs: intervalS * 1000,
    say,
  });
  await sleep(Math.max(0, began + durationS * 1000 - Date.now()));
  say("stopping the load; requests in flight are answered first");
  load.stop();
  await load.done;
  const outcome = await checkOutcome(topology, load, faults, startSeq, (Date.now() - began) / 1000);
  if (!values.json) {
    console.log(`${outcomeTable(faults, load, outcome)}\n`);
    for (const [error, { count, stack }] of unhandledErrors(topology))
      console.error(`[chaos] unhandled error × ${count}: ${error}${stack ? `\n${stack}` : ""}`);
    for (const pull of load.pulls.filter((p) => p.code !== 0))
      console.error(`[chaos] das pull ${pull.pull} exited ${pull.code}:\n${pull.output}`);
  }
  console.log(JSON.stringify(outcome));
  code = passed(outcome) ? 0 : 1;
} finally {
  await topology.stop();
}
process.exit(code);

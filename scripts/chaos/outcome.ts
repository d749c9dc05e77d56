// What the chaos run checks afterwards, and how it reports it: a table of faults and outcomes for
// people, and one JSON line for machines.
import { createDb } from "@/lib/db/client";
import { verifyChainDetailed, type ChainReport } from "@/lib/disclosures/verify";
import type { Load } from "./clients";
import type { Fault } from "./faults";
import type { Topology } from "./topology";

export type Outcome = {
  faults: number;
  /** Signed URLs a client received whose entry the primary does not hold. */
  urls_without_entry: number;
  /** Entries of the run that no client ever received (a response lost and never asked again). */
  lost: number;
  /** Answers 500 a client saw, and errors the instances logged as unhandled (answered 500). */
  status_500: number;
  requests: number;
  attempts: number;
  retried: number;
  gave_up: number;
  refused: number;
  pulls: number;
  pulls_verified: number;
  entries: number;
  chain_primary: string;
  chain_replica: string;
  duration_s: number;
};

/** Compares what the clients received with the log on the primary, and walks the chain on both servers. */
export async function checkOutcome(t: Topology, load: Load, faults: Fault[], startSeq: number, durationS: number) {
  const ops = load.operations;
  const received = new Set<string>();
  for (const op of ops) if (op.id) received.add(op.id);
  for (const pull of load.pulls) for (const id of pull.downloads) received.add(id);
  const logged = await t.owner.$client<{ id: string }[]>`select id from disclosures where seq > ${startSeq}`;
  const inLog = new Set(logged.map((r) => r.id));
  const withUrls = [
    ...ops.filter((op) => op.id && op.urls > 0).map((op) => op.id!),
    ...load.pulls.flatMap((p) => p.downloads),
  ];
  const unhandled = t.instances.reduce((n, i) => n + (i.log().match(/"message":"unhandled error"/g)?.length ?? 0), 0);
  const primary = (await verifyChainDetailed(t.operator, { mode: "full", writeCheckpoint: false })).report;
  await t.replica.caughtUp(60_000);
  const replicaDb = createDb(t.replicaServiceUrl, { max: 2 });
  let replica: ChainReport;
  try {
    replica = (
      await verifyChainDetailed({ ...t.operator, replica: replicaDb }, { mode: "full", writeCheckpoint: false })
    ).report;
  } finally {
    await replicaDb.$client.end({ timeout: 5 });
  }
  const outcome: Outcome = {
    faults: faults.length,
    urls_without_entry: withUrls.filter((id) => !inLog.has(id)).length,
    lost: [...inLog].filter((id) => !received.has(id)).length,
    status_500: ops.reduce((n, op) => n + op.attempts.filter((a) => a === 500).length, 0) + unhandled,
    requests: ops.length,
    attempts: ops.reduce((n, op) => n + op.attempts.length, 0),
    retried: ops.filter((op) => op.attempts.length > 1).length,
    gave_up: ops.filter((op) => op.gaveUp).length,
    refused: ops.filter((op) => !op.gaveUp && !op.id).length,
    pulls: load.pulls.length,
    pulls_verified: load.pulls.filter((p) => p.code === 0 && p.failed === 0 && p.files > 0 && p.verified === p.files)
      .length,
    entries: inLog.size,
    chain_primary: describeChain(primary),
    chain_replica: describeChain(replica),
    duration_s: Math.round(durationS),
  };
  return outcome;
}

const describeChain = (r: ChainReport) =>
  r.intact ? `intact, ${r.count} entries, head ${r.headHash.slice(0, 12)}` : `BROKEN at ${r.firstBadSeq}: ${r.reason}`;

/**
 * The errors the instances logged as unhandled (each answered 500), as the log line's `error`
 * field, with how many times each and the first one's stack (its frames, as lib/log.ts keeps
 * them): what to look at when status_500 is not 0, since the instances' logs go with the run.
 */
export function unhandledErrors(t: Topology): Map<string, { count: number; stack: string | undefined }> {
  const found = new Map<string, { count: number; stack: string | undefined }>();
  for (const instance of t.instances)
    for (const line of instance.log().split("\n")) {
      if (!line.includes('"message":"unhandled error"')) continue;
      let error = line;
      let stack: string | undefined;
      try {
        const parsed = JSON.parse(line) as { error?: unknown; stack?: unknown };
        error = String(parsed.error ?? line);
        stack = parsed.stack === undefined ? undefined : String(parsed.stack);
      } catch {}
      const seen = found.get(error);
      found.set(error, { count: (seen?.count ?? 0) + 1, stack: seen?.stack ?? stack });
    }
  return found;
}

/** Whether the run holds every promise it checks. */
export function passed(o: Outcome): boolean {
  return (
    o.urls_without_entry === 0 &&
    o.lost === 0 &&
    o.status_500 === 0 &&
    o.gave_up === 0 &&
    o.refused === 0 &&
    o.pulls > 0 &&
    o.pulls_verified === o.pulls &&
    o.chain_primary.startsWith("intact") &&
    o.chain_replica === o.chain_primary
  );
}

/** The table of faults and their outcomes, then what the clients saw, as Markdown. */
export function outcomeTable(faults: Fault[], load: Load, o: Outcome): string {
  const during = (f: Fault) =>
    load.operations.filter(
      (op) =>
        op.attempts.length > 1 && op.startedMs / 1000 >= f.atS - 30 && op.startedMs / 1000 <= f.atS + f.recoveredS,
    );
  const rows = faults.map((f) => {
    const retried = during(f);
    const answered = retried.filter((op) => op.id).length;
    return `| ${f.atS.toFixed(0)} s | ${f.name} (${f.detail}) | ${f.recoveredS.toFixed(1)} s | ${retried.length} requests retried, ${answered} answered |`;
  });
  const statuses = new Map<string, number>();
  for (const op of load.operations)
    for (const a of op.attempts.slice(0, -1)) statuses.set(String(a), (statuses.get(String(a)) ?? 0) + 1);
  return [
    "| at | fault | back after | requests around it |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
    "| outcome | value |",
    "| --- | --- |",
    `| requests (downloads and previews) | ${o.requests}, ${o.attempts} attempts |`,
    `| retried until answered | ${o.retried} (answers retried: ${[...statuses].map(([s, n]) => `${s} × ${n}`).join(", ") || "none"}) |`,
    `| gave up / refused | ${o.gave_up} / ${o.refused} |`,
    `| das pull runs, every file verified | ${o.pulls_verified} of ${o.pulls} |`,
    `| entries appended | ${o.entries} |`,
    `| signed URLs without their entry | ${o.urls_without_entry} |`,
    `| entries no client received (lost) | ${o.lost} |`,
    `| 500s (answered or logged) | ${o.status_500} |`,
    `| chain on the primary | ${o.chain_primary} |`,
    `| chain on the replica | ${o.chain_replica} |`,
  ].join("\n");
}

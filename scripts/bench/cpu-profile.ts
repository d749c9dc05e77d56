import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Where a `node --cpu-prof` profile of `next start` spends its time: Next (and the React it ships),
// Node's own HTTP and streams, our code (lib/, app/), the libraries we call, V8 (GC, compiled
// code without a source). Next bundles our code and most libraries into `.next/server/chunks`; the
// build's source maps say which original file each sampled line came from.

type CallFrame = { functionName: string; url: string; lineNumber: number; columnNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

export type ProfileSummary = {
  /** Milliseconds the process was busy (not idle). */
  busyMs: number;
  /**
   * Busy time inside our code, inclusive: samples with a frame of lib/ or app/ on the stack (so what
   * our code calls, Node's crypto or Headers, postgres.js, zod, counts as ours). The rest is Next,
   * Node's HTTP and GC, which run whatever our code does.
   */
  insideOursPercent: number;
  /** Busy time by part, in ms, largest first. */
  parts: { part: string; ms: number; percent: number }[];
  /** The functions with the most self time, with their part and source. */
  top: { fn: string; where: string; part: string; ms: number; percent: number }[];
};

const maps = new Map<string, SourceMap | null>();

function sourceMapOf(file: string): SourceMap | null {
  if (!maps.has(file)) {
    const mapFile = `${file}.map`;
    maps.set(file, existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, "utf8"))) : null);
  }
  return maps.get(file)!;
}

/** The original source of a sampled frame: through the build's source map for bundled code. */
function originalSource(frame: CallFrame): string {
  if (!frame.url.startsWith("file://")) return frame.url;
  const file = fileURLToPath(frame.url);
  const entry = sourceMapOf(file)?.findEntry(frame.lineNumber, frame.columnNumber) as
    | { originalSource?: string }
    | undefined;
  if (!entry?.originalSource) return file;
  return path.resolve(path.dirname(file), entry.originalSource);
}

function partOf(source: string, root: string): string {
  if (source.startsWith("node:")) return "Node.js (http, streams, net, timers)";
  const packageName = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source)?.[1];
  if (packageName === "next" || packageName === "react" || packageName === "react-dom")
    return "Next.js (router, request/response adapters, its bundled React)";
  if (packageName) return `library: ${packageName}`;
  const relative = path.relative(root, source);
  // The guard wraps Node's request event, so all of Next runs beneath its frame: a part of its own,
  // which does not make what it calls ours.
  if (relative === "lib/http/request-guard.ts" || relative === "instrumentation.ts")
    return "our request guard (its own frames)";
  if (/^(lib|app)\//.test(relative) || relative === "proxy.ts") return "our code (lib/, app/)";
  if (relative.startsWith(".next/")) return "Next.js build output (unmapped)";
  return `other: ${relative}`;
}

/**
 * Self time per part. Samples in V8 builtins (JSON.stringify, crypto, Map lookups...) have no
 * source of their own; they count for the nearest caller that has one, so `JSON.stringify` called
 * by our serialiser is ours and a stream write called by Next is Next's.
 */
export function summariseProfile(file: string, root: string, topCount = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; it is charged to the sample that ends it.
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0)));

  const special = new Map([
    ["(garbage collector)", "V8: garbage collection"],
    ["(program)", "V8: native, no JS frame"],
    ["(idle)", "idle"],
    ["(root)", "idle"],
  ]);
  const attributed = new Map<number, { part: string; where: string; fn: string }>();
  const attribute = (id: number): { part: string; where: string; fn: string } => {
    const known = attributed.get(id);
    if (known) return known;
    const frame = byId.get(id)!.callFrame;
    let result: { part: string; where: string; fn: string };
    if (special.has(frame.functionName))
      result = { part: special.get(frame.functionName)!, where: "", fn: frame.functionName };
    else if (!frame.url) {
      const up = parent.get(id);
      const caller = up === undefined ? undefined : attribute(up);
      result =
        caller && caller.part !== "idle"
          ? { ...caller, fn: `${frame.functionName || "(anonymous)"} (builtin, from ${caller.fn})` }
          : { part: "V8: builtins", where: "", fn: frame.functionName };
    } else {
      const source = originalSource(frame);
      result = {
        part: partOf(source, root),
        where: path.relative(root, source),
        fn: frame.functionName || "(anonymous)",
      };
    }
    attributed.set(id, result);
    return result;
  };

  const OURS = "our code (lib/, app/)";
  const insideOurs = new Map<number, boolean>();
  const isInsideOurs = (id: number): boolean => {
    let known = insideOurs.get(id);
    if (known === undefined) {
      const up = parent.get(id);
      known = attribute(id).part === OURS || (up !== undefined && isInsideOurs(up));
      insideOurs.set(id, known);
    }
    return known;
  };
  let oursUs = 0;
  const parts = new Map<string, number>();
  const functions = new Map<string, { fn: string; where: string; part: string; us: number }>();
  for (const [id, us] of selfUs) {
    const { part, where, fn } = attribute(id);
    if (part === "idle") continue;
    if (isInsideOurs(id)) oursUs += us;
    parts.set(part, (parts.get(part) ?? 0) + us);
    const key = `${part}|${where}|${fn}`;
    const entry = functions.get(key) ?? { fn, where, part, us: 0 };
    entry.us += us;
    functions.set(key, entry);
  }
  const busyUs = [...parts.values()].reduce((a, b) => a + b, 0);
  const percent = (us: number) => Math.round((1000 * us) / busyUs) / 10;
  return {
    busyMs: Math.round(busyUs / 1000),
    insideOursPercent: percent(oursUs),
    parts: [...parts]
      .sort((a, b) => b[1] - a[1])
      .map(([part, us]) => ({ part, ms: Math.round(us / 1000), percent: percent(us) })),
    top: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, topCount)
      .map((f) => ({ fn: f.fn, where: f.where, part: f.part, ms: Math.round(f.us / 1000), percent: percent(f.us) })),
  };
}

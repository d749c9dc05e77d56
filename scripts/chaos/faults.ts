// The faults the chaos run injects, in turn, one at a time: an app instance killed with SIGKILL
// and started again, the primary stopped as by a crash and started again, the replica stopped and
// started, Redis killed and started (empty: it keeps nothing on disk).
import { sleep } from "./clients";
import type { Topology } from "./topology";

export type Fault = {
  name: string;
  /** Seconds into the run when it was injected. */
  atS: number;
  /** Seconds until the part answered again. */
  recoveredS: number;
  detail: string;
};

export const FAULT_KINDS = [
  "kill an instance",
  "restart the primary",
  "stop and start the replica",
  "drop Redis",
] as const;

/**
 * Injects a fault every `intervalMs` until `durationMs` have passed since `began`, in the order of
 * FAULT_KINDS, each recovered before the next; resolves with what was injected.
 */
export async function injectFaults(
  topology: Topology,
  options: { began: number; durationMs: number; intervalMs: number; say: (line: string) => void },
): Promise<Fault[]> {
  const faults: Fault[] = [];
  const elapsed = () => (Date.now() - options.began) / 1000;
  for (let n = 0; ; n++) {
    const next = options.began + (n + 1) * options.intervalMs;
    if (next > options.began + options.durationMs) break;
    await sleep(Math.max(0, next - Date.now()));
    const kind = FAULT_KINDS[n % FAULT_KINDS.length]!;
    const atS = elapsed();
    const detail = await inject(topology, kind, n);
    const fault = { name: kind, atS, recoveredS: elapsed() - atS, detail };
    options.say(
      `${fault.atS.toFixed(0).padStart(4)} s  ${kind} (${detail}): back after ${fault.recoveredS.toFixed(1)} s`,
    );
    faults.push(fault);
  }
  return faults;
}

async function inject(t: Topology, kind: (typeof FAULT_KINDS)[number], n: number): Promise<string> {
  switch (kind) {
    case "kill an instance": {
      const instance = t.instances[Math.floor(n / FAULT_KINDS.length) % t.instances.length]!;
      instance.kill();
      await sleep(2000);
      await instance.start();
      return `${instance.name}, SIGKILL`;
    }
    case "restart the primary":
      // Immediate: no checkpoint, sessions cut, recovery from the WAL at start, as after a crash.
      await t.primary.stop("immediate");
      await sleep(3000);
      await t.primary.start(t.ownerUrl);
      return "immediate stop, as a crash";
    case "stop and start the replica":
      await t.replica.server.stop("fast");
      await sleep(5000);
      await t.replica.server.start(t.replica.url);
      return "fast stop";
    case "drop Redis":
      await t.redis.kill();
      await sleep(5000);
      await t.redis.start();
      return "SIGKILL, started empty";
  }
}

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { freePort } from "./embedded-postgres";
import { PROJECT_ROOT } from "./embedded-default";

/** Next's command line, run with this Node. */
export const NEXT_BIN = path.join(PROJECT_ROOT, "node_modules/next/dist/bin/next");

export const hasProductionBuild = () => existsSync(path.join(PROJECT_ROOT, ".next/BUILD_ID"));

// What the production bundle is built from: a change to any of these makes a build stale.
const BUILD_SOURCES = ["app", "components", "lib", "proxy.ts", "instrumentation.ts", "next.config.ts", "package.json"];

/**
 * Whether a production build exists and is newer than every source it is built from. `npm start`
 * and the benchmarks serve the build as it is; after a pull or an edit an old one would serve the
 * old code (and a benchmark would measure it), so they build again when this is false.
 */
export function productionBuildIsCurrent(root = PROJECT_ROOT): boolean {
  const buildId = path.join(root, ".next/BUILD_ID");
  if (!existsSync(buildId)) return false;
  const builtAt = statSync(buildId).mtimeMs;
  const newerThanBuild = (file: string): boolean => {
    const stat = statSync(file, { throwIfNoEntry: false });
    if (!stat) return false;
    // Tests and their helpers are not in the bundle: changing them leaves the build current.
    if (!stat.isDirectory()) return stat.mtimeMs > builtAt && !/\.test\.tsx?$/.test(file);
    if (file === path.join(root, "lib/testing")) return false;
    return readdirSync(file).some((name) => newerThanBuild(path.join(file, name)));
  };
  return !BUILD_SOURCES.some((source) => newerThanBuild(path.join(root, source)));
}

/** `pid` is the server's process (`next start` serves in the process it starts in), for benchmarks that read its CPU time. */
export type NextServer = { url: string; pid: number; output: () => string; stop(): Promise<void> };

/**
 * The production build served by `next start` on a free port with `env`, once it answers: what a
 * client meets over HTTP (tests and benchmarks). Its output is kept for error messages. `nodeFlags`
 * go to Node itself (`--cpu-prof`, which NODE_OPTIONS does not accept).
 */
export async function startNextServer(
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
  options: { port?: number } = {},
): Promise<NextServer> {
  // A port of its own, or the one given: an instance behind a load balancer comes back where it was.
  const port = options.port ?? (await freePort());
  // `next start` sets NODE_ENV=production itself; a caller's (vitest's "test") must not leak into it.
  const childEnv: NodeJS.ProcessEnv = { ...env };
  delete (childEnv as Record<string, unknown>).NODE_ENV;
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, NEXT_BIN, "start", "-p", String(port)], {
    cwd: PROJECT_ROOT,
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  await waitUntilServing(url, child, () => output);
  return { url, pid: child.pid!, output: () => output, stop: () => stop(child) };
}

async function waitUntilServing(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`next start exited with ${child.exitCode}:\n${output()}`);
    try {
      // A public document: a probe without a key must not count as a failed authentication,
      // which would spend the address's budget before the first real request.
      await fetch(`${url}/api/v1/openapi.json`);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  child.kill("SIGKILL");
  throw new Error(`next start did not answer within 60 s:\n${output()}`);
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 5000).unref();
  });
}

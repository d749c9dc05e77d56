import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, inject } from "vitest";
import { spawnCli, type CliRun } from "./cli";

/** What a finished run printed and how it exited (a run these tests make ends by itself, never by a signal). */
export type CliOutput = Omit<CliRun, "signal">;

/** Variables to set, or with `undefined` to unset, for one run. */
export type CliEnv = Record<string, string | undefined>;

export type AdminCli = {
  /** This file's DAS_DATA_DIR (and its scratch room), never the project's .data/; removed after the file. */
  dataDir: string;
  /** The environment an operator's shell would have for this file's runs, with `extra` over it. */
  env(extra?: CliEnv): NodeJS.ProcessEnv;
  /** `npx das-admin <args>` as an operator runs it, to its end. */
  run(args: string[], options?: { env?: CliEnv; stdin?: string }): Promise<CliOutput>;
  /** The same, started: for a long-running command (the worker) or one whose process a test watches. */
  spawn(args: string[], options?: { env?: CliEnv; stdin?: string }): ReturnType<typeof spawnCli>;
};

/**
 * The das-admin environment of one test file: a data directory of its own, the run's database
 * (or the file's own, named by `databaseUrl` once its `beforeAll` has made it), the run's
 * APP_SECRET, and the operator's name for the audit log. Call it at the top of the file: it
 * removes its directory in an `afterAll` of its own.
 */
export function adminCli(
  name: string,
  options: { databaseUrl?: () => string; operator?: string; env?: () => CliEnv } = {},
): AdminCli {
  const dataDir = mkdtempSync(path.join(tmpdir(), `das-${name}-`));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = (extra: CliEnv = {}) => {
    const merged: CliEnv = {
      ...process.env,
      DATABASE_URL: options.databaseUrl?.() ?? inject("databaseUrl"),
      APP_SECRET: inject("appSecret"),
      DAS_DATA_DIR: dataDir,
      ...(options.operator ? { DAS_OPERATOR: options.operator } : {}),
      ...options.env?.(),
      ...extra,
    };
    for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
    return merged as NodeJS.ProcessEnv;
  };
  const spawn: AdminCli["spawn"] = (args, { env: extra, stdin } = {}) =>
    spawnCli("das-admin", args, { env: env(extra), stdin });
  return {
    dataDir,
    env,
    spawn,
    run: (args, options) => spawn(args, options).done.then(({ signal: _signal, ...run }) => run),
  };
}

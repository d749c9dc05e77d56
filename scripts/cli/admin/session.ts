// What every das-admin command stands on: the verbs it works with and the rules its values are
// checked by, each loaded only when needed (so that `das-admin --help` loads neither), and a
// command's session on the database.
import { userInfo } from "node:os";
import type { Ctx } from "@/lib/context";
import type { RootDb } from "@/lib/db/client";
import type { Runtime } from "@/lib/dev/embedded-default";
import { ImportError } from "@/lib/catalog/import/problems";
import { AppError } from "@/lib/errors";
import { errorFields } from "@/lib/log";
import type * as Checks from "../admin-checks";
import type * as Verbs from "../admin-verbs";

/**
 * The verbs the commands work with (the database, the store, lib/'s verbs): loaded by `onDatabase`
 * when a command runs, so that `das-admin --help` and a usage error start without any of them.
 */
export let verbs: typeof Verbs;

/**
 * The rules some values are checked by as the command line is parsed (dataset ids, episode
 * fields, times, terms digests): loaded once the words name a command, before its options are
 * parsed (`loadChecks`, the program's preSubcommand hook), so that `das-admin --help` loads none of them.
 */
export let checks: typeof Checks;

export async function loadChecks(): Promise<void> {
  checks = await import("../admin-checks");
}

/**
 * A command's work on the database: DATABASE_URL, or the embedded default (started for it and
 * stopped after it). Only a command line that parsed gets here, so a usage error starts nothing.
 */
export function onDatabase<A extends unknown[]>(
  work: (session: { ctx: Ctx; runtime: Runtime }, ...args: A) => Promise<void>,
) {
  return async (...args: A) => {
    let runtime: Runtime | undefined;
    let db: RootDb | undefined;
    let replica: RootDb | undefined;
    try {
      verbs = await import("../admin-verbs");
      runtime = await verbs.startEmbeddedDefault();
      // From here on every module reads the same configuration, embedded parts included.
      Object.assign(process.env, runtime.env);
      db = verbs.createDb(runtime.env.DATABASE_URL!, { max: 4 });
      // The log's long reads (exports, walks) go to the read replica when there is one.
      if (process.env.DATABASE_REPLICA_URL) replica = verbs.createDb(process.env.DATABASE_REPLICA_URL, { max: 4 });
      const ctx: Ctx = {
        db,
        requestId: `cli_${Date.now()}`,
        principal: { kind: "operator", name: process.env.DAS_OPERATOR ?? userInfo().username, organizationId: null },
        ...(replica ? { replica } : {}),
      };
      await work({ ctx, runtime }, ...args);
    } finally {
      await replica?.$client.end({ timeout: 5 });
      await db?.$client.end({ timeout: 5 });
      await runtime?.stop();
    }
  };
}

/**
 * A command that changes the log's tables themselves (detach, attach): on the owner's connection,
 * DATABASE_OWNER_URL, or DATABASE_URL when one role does both (the embedded default has both).
 */
export function asOwner<A extends unknown[]>(work: (ctx: Ctx, ...args: A) => Promise<void>) {
  return onDatabase(async ({ ctx }, ...args: A) => {
    const url = process.env.DATABASE_OWNER_URL ?? process.env.DATABASE_URL!;
    const owner = verbs.createDb(url, { max: 2 });
    try {
      await work({ ...ctx, db: owner }, ...args);
    } finally {
      await owner.$client.end({ timeout: 5 });
    }
  });
}

/**
 * What went wrong: an AppError's or ImportError's message is written for operators; anything else
 * is described as the log would describe it (errorFields), since a database error's message,
 * detail and parameters may hold secrets.
 */
export function describe(error: unknown): string {
  if (error instanceof AppError || error instanceof ImportError) return error.message;
  // A store's error comes from a command's work, so from the verbs it loaded.
  if (verbs && error instanceof verbs.StoreError) return error.message;
  return errorFields(error).error || "the command failed without saying why";
}

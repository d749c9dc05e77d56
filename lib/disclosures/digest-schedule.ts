import type { Ctx } from "../context";
import { getDb } from "../db/client";
import { env } from "../env";
import { errorFields, log } from "../log";
import { AppError } from "../errors";
import { digestConfigFromEnv, writeHeadDigest, type DigestConfig, type DigestWrite } from "./digest";

/** The first attempt after a start: soon, but not in the middle of the server's own start. */
const FIRST_ATTEMPT_MS = 30_000;
/**
 * An instance writes when the last digest is at least this share of the interval old: timers
 * drift by milliseconds, and one that fires just before the interval is complete must not skip a
 * whole interval.
 */
const DUE_SHARE = 0.9;

export type DigestSchedule = { stop(): void; attempt(): Promise<DigestWrite | null> };

/**
 * Every `intervalMinutes` this instance tries to write a head digest. Several instances share the
 * work through the database: an advisory lock lets one at a time try (the others skip), and a
 * digest is written only when the last one is nearly an interval old. A failure is logged without
 * its details (an S3 or database error may quote credentials or parameters) and retried at the
 * next interval; it never reaches a request.
 */
export function startDigestSchedule(options: {
  ctx: Ctx;
  config: DigestConfig;
  intervalMinutes: number;
  firstAttemptMs?: number;
}): DigestSchedule {
  const intervalMs = options.intervalMinutes * 60_000;
  let stopped = false;
  const attempt = async (): Promise<DigestWrite | null> => {
    if (stopped) return null;
    try {
      const result = await writeHeadDigest(options.ctx, options.config, {
        ifOlderThanMs: intervalMs * DUE_SHARE,
        waitForLock: false,
      });
      if (result.written) log.info("disclosure digest written", { key: result.key, seq: result.digest.seq });
      return result;
    } catch (error) {
      log.error("disclosure digest not written; trying again at the next interval", { ...errorFields(error) });
      return null;
    }
  };
  const first = setTimeout(() => void attempt(), options.firstAttemptMs ?? FIRST_ATTEMPT_MS);
  const every = setInterval(() => void attempt(), intervalMs);
  // The schedule never keeps a process alive on its own.
  first.unref();
  every.unref();
  return {
    attempt,
    stop: () => {
      stopped = true;
      clearTimeout(first);
      clearInterval(every);
    },
  };
}

const globalForSchedule = globalThis as unknown as { dasDigestSchedule?: DigestSchedule };

/**
 * The server's schedule, from the environment (started by instrumentation.ts once per process):
 * off when DIGEST_INTERVAL_MINUTES is 0, and off with a warning when there is no signing key or
 * no store, since a service without digests cannot show that its log was not cut.
 */
export function startDigestScheduleFromEnv(): void {
  if (globalForSchedule.dasDigestSchedule) return;
  try {
    const intervalMinutes = env().DIGEST_INTERVAL_MINUTES;
    if (intervalMinutes === 0) return;
    const config = digestConfigFromEnv("sign");
    // The schedule is the service's own work, not a person's: it acts as an operator would with das-admin.
    const ctx: Ctx = {
      db: getDb(),
      requestId: "digest-schedule",
      principal: { kind: "operator", name: "digest schedule", organizationId: null },
    };
    globalForSchedule.dasDigestSchedule = startDigestSchedule({ ctx, config, intervalMinutes });
  } catch (error) {
    // Never a reason not to serve. An AppError says which variable is missing or unusable, without its value.
    log.warn("disclosure digests are off", {
      reason: error instanceof AppError ? error.message : errorFields(error).error,
    });
  }
}

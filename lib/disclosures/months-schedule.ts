import type { Ctx } from "../context";
import { getDb, sqlOf } from "../db/client";
import { env } from "../env";
import { errorFields, log } from "../log";
import { startSchedule } from "../schedule";
import { archiveStoreFromEnv, monthSigningKeyFromEnv, type ArchiveStore } from "./archive-store";
import { closeEndedMonths, ensureMonthsAhead, MONTHS_AHEAD, monthsAhead } from "./months";

/** The first look after a start: soon, but not in the middle of the server's own start. */
const FIRST_ATTEMPT_MS = 20_000;

/**
 * Every DISCLOSURE_MONTHS_INTERVAL_MINUTES each server looks after the log's months: makes the
 * current month and MONTHS_AHEAD more where missing (through the owner's function, so the service's
 * role owns nothing; one server at a time, the function's lock), warns when fewer are made ahead
 * (an append in a month without its partition fails), and closes the months that have ended (a
 * checkpoint at each one's last entry and, with DIGEST_SIGNING_KEY, its signed digest in the
 * archive bucket). Instances racing to close a month record it once. A failure is logged and
 * tried again at the next interval; it never reaches a request.
 */
export function startMonthsScheduleFromEnv(): void {
  const ctx: Ctx = {
    db: getDb(),
    requestId: "months-schedule",
    principal: { kind: "operator", name: "months schedule", organizationId: null },
  };
  startSchedule("months-schedule", env().DISCLOSURE_MONTHS_INTERVAL_MINUTES, FIRST_ATTEMPT_MS, () =>
    lookAfterMonths(ctx),
  );
}

export async function lookAfterMonths(ctx: Ctx): Promise<void> {
  try {
    const sql = sqlOf(ctx.db);
    const made = await ensureMonthsAhead(sql);
    if (made) log.info("disclosure log: months made ahead", { tables: made });
    const ahead = await monthsAhead(sql);
    if (ahead < MONTHS_AHEAD)
      log.warn("disclosure log: fewer months made ahead than wanted", { ahead, wanted: MONTHS_AHEAD });
    let store: ArchiveStore | undefined;
    try {
      store = archiveStoreFromEnv();
    } catch {
      store = undefined;
    }
    const closed = await closeEndedMonths(ctx, { store, signingKey: monthSigningKeyFromEnv() });
    for (const m of closed)
      log.info("disclosure log: month closed", { month: m.month, entries: m.entries, digest: m.digestKey });
  } catch (error) {
    log.error("disclosure log: months not looked after; trying again at the next interval", { ...errorFields(error) });
  }
}

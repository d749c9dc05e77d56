import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { AppError } from "../errors";

/** An Idempotency-Key as the log keeps it: unique per API key (or user) that sent it. */
export type Idempotency = { scope: string; key: string };

/**
 * The entry made earlier under this Idempotency-Key, or undefined when it made none: the one
 * lookup of a retried POST /downloads and POST .../plan. Another request under the same key is
 * 409 `idempotency_conflict`. The key's own table (migration 0026) is unique for ever, whatever
 * months of the log are archived; it alone is read here, since a query of the partitioned log by
 * id alone is planned over every month (a cost each keyed download would pay before its append).
 */
export async function earlierEntry(
  ctx: Ctx,
  idempotency: Idempotency,
  requestSha256: string,
  conflict = "This Idempotency-Key was used with a different request body. Use a new key for a new request.",
): Promise<{ id: string } | undefined> {
  const [earlier] = await sqlOf(ctx.db)<{ id: string; request_sha256: string }[]>`
    select disclosure_id as id, request_sha256 from disclosure_idempotency_keys
    where scope = ${idempotency.scope} and key = ${idempotency.key}`;
  if (!earlier) return undefined;
  if (earlier.request_sha256 !== requestSha256) throw new AppError("idempotency_conflict", conflict);
  return { id: earlier.id };
}

/** PostgreSQL's unique_violation: on an append, another entry with the same Idempotency-Key committed first. */
export const isDuplicateKey = (error: unknown) => (error as { code?: unknown } | null)?.code === "23505";

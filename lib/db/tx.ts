import type { Db } from "./client";

type TxCapable = { db: Db };

/**
 * Runs `fn` in a transaction, or inside the caller's transaction when there already is one, so
 * verbs compose without nesting savepoints by accident.
 */
export async function withTx<C extends TxCapable, T>(ctx: C, fn: (ctx: C) => Promise<T>): Promise<T> {
  if (isTransaction(ctx.db)) return fn(ctx);
  return ctx.db.transaction((tx) => fn({ ...ctx, db: tx as unknown as Db }));
}

export function isTransaction(db: Db): boolean {
  // drizzle transactions carry `rollback`; the root database does not.
  return typeof (db as { rollback?: unknown }).rollback === "function";
}

import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { users } from "../db/schema";

/**
 * Portal sessions are Auth.js JWTs, valid for hours and kept by the browser, so the server cannot
 * delete one. Each token instead carries the user's `session_version` from sign-in, and
 * `currentUser()` accepts it only while the row still has that number: incrementing it ends every
 * session of the user on their next request.
 */

/** The column change that ends every session of the rows an update touches; spread into `.set()`. */
export const endingSessions = { sessionVersion: sql`${users.sessionVersion} + 1` };

/**
 * Sign-out: ends every session of the user, provided the token signing out is still live (so a
 * stale copy of a cookie cannot sign anyone out).
 */
export async function endSessionsOf(db: Db, userId: string, tokenVersion: number): Promise<void> {
  await db
    .update(users)
    .set(endingSessions)
    .where(and(eq(users.id, userId), eq(users.sessionVersion, tokenVersion)));
}

import { sqlOf, type Db } from "../db/client";
import type { UserRole } from "../db/schema";
import type { UserPrincipal } from "./principal";

/**
 * Portal users as authentication reads them: an account to sign in to, and the user a live session
 * stands for. (The admin's listing and changes of users are lib/admin/users.ts.)
 */

export type AccountRow = {
  id: string;
  email: string;
  name: string | null;
  password_hash: string | null;
  disabled_at: Date | null;
  session_version: number;
};

/** The account an email signs in to, compared case-insensitively as stored. */
export async function accountByEmail(db: Db, email: string): Promise<AccountRow | undefined> {
  const [row] = await sqlOf(db)<AccountRow[]>`
    select id, email, name, password_hash, disabled_at, session_version from users where email = ${email.trim().toLowerCase()}`;
  return row;
}

type SessionRow = {
  id: string;
  email: string;
  role: UserRole;
  organization_id: string | null;
  disabled_at: Date | null;
  session_version: number;
};

/**
 * The user a session stands for, as the database has them now, or null: a disabled account, or a
 * session begun before the user's sessions were last ended (lib/auth/sessions.ts), counts at once.
 */
export async function sessionUser(
  db: Db,
  userId: string,
  sessionVersion: number | undefined,
): Promise<UserPrincipal | null> {
  const [row] = await sqlOf(db)<SessionRow[]>`
    select id, email, role, organization_id, disabled_at, session_version from users where id = ${userId}`;
  if (!row || row.disabled_at || row.session_version !== sessionVersion) return null;
  return { kind: "user", userId: row.id, email: row.email, role: row.role, organizationId: row.organization_id };
}

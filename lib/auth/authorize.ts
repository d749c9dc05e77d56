import type { Ctx } from "../context";
import type { UserRole } from "../db/schema";
import { AppError } from "../errors";
import type { OperatorPrincipal, Principal, UserPrincipal } from "./principal";

/**
 * Who may do what, in one place: every verb checks its caller itself with one of the functions
 * below, whoever calls it (a page, a route handler, a server action or das-admin), and the portal
 * decides which areas a user sees from the same table (lib/portal/access.ts).
 *
 *   review – read the disclosure log: search, entries, exports, contributors' recipients, the chain's verification
 *   admin  – organisations, users, licences, keys and their audit trail
 *
 * Operators (das-admin at the command line, with the database's own credentials) are named here
 * rather than let through elsewhere: they hold both. API keys hold neither; what a key may read
 * is its organisation's licensed data, decided by licence in lib/catalog/access.ts.
 */
const HOLDERS = {
  review: { roles: ["reviewer", "admin"], operator: true },
  admin: { roles: ["admin"], operator: true },
} as const satisfies Record<string, { roles: readonly UserRole[]; operator: boolean }>;

export type Permission = keyof typeof HOLDERS;

export type AdminPrincipal = OperatorPrincipal | (UserPrincipal & { role: "admin" });
export type ReviewerPrincipal = OperatorPrincipal | (UserPrincipal & { role: "reviewer" | "admin" });

export function holds(principal: Principal, permission: Permission): boolean {
  const holders = HOLDERS[permission];
  if (principal.kind === "operator") return holders.operator;
  if (principal.kind === "user") return (holders.roles as readonly UserRole[]).includes(principal.role);
  return false;
}

const REFUSAL: Record<Permission, string> = {
  review: "The disclosure log is for reviewers and admins.",
  admin: "This action needs the admin role.",
};

/** Throws 403 forbidden unless the caller holds `permission`. */
export function requirePermission(ctx: Ctx, permission: Permission): void {
  if (!holds(ctx.principal, permission)) throw new AppError("forbidden", REFUSAL[permission]);
}

/** Admin verbs: an operator at the command line or a signed-in admin, never an API key. */
export function requireAdmin(ctx: Ctx): asserts ctx is Ctx<AdminPrincipal> {
  requirePermission(ctx, "admin");
}

/** Disclosure-log verbs: an operator, a reviewer or an admin, never a licensee or an API key. */
export function requireReviewer(ctx: Ctx): asserts ctx is Ctx<ReviewerPrincipal> {
  requirePermission(ctx, "review");
}

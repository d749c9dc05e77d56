import { holds } from "../auth/authorize";
import type { UserPrincipal } from "../auth/principal";

/**
 * Who may use which part of the portal. Pages and server actions each check their area
 * themselves (the proxy only sends signed-out visitors to /login); the RBAC tests read this table.
 *   catalog  – members of a licensed organisation: datasets, episodes, their own downloads
 *   review   – who holds the review permission (lib/auth/authorize.ts): the disclosure log
 *   admin    – who holds the admin permission: organisations, users, licences, keys
 * The verbs behind each area check the same permissions again themselves.
 */
export type Area = "catalog" | "review" | "admin";

export function mayEnter(user: UserPrincipal, area: Area): boolean {
  if (area === "catalog") return user.organizationId !== null;
  return holds(user, area);
}

/** Where a user lands after signing in: a reviewer on the log's overview, where every figure leads into the log. */
export function homeOf(user: UserPrincipal): string {
  if (user.role === "admin") return "/admin/organizations";
  if (user.role === "reviewer") return "/review/overview";
  return "/datasets";
}

export function areasOf(user: UserPrincipal): Area[] {
  return (["catalog", "review", "admin"] as const).filter((area) => mayEnter(user, area));
}

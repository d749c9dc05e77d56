import { adminAudit } from "../db/schema";
import type { Ctx } from "../context";
import type { AdminPrincipal } from "../auth/authorize";
import type { AuditAction } from "./audit-actions";

export async function recordAdminAction(
  ctx: Ctx<AdminPrincipal>,
  action: AuditAction,
  targetId: string,
  details: Record<string, unknown> = {},
): Promise<void> {
  const p = ctx.principal;
  await ctx.db.insert(adminAudit).values({
    actorKind: p.kind,
    actorId: p.kind === "user" ? p.userId : p.name,
    actorLabel: p.kind === "user" ? p.email : `${p.name} (das-admin)`,
    action,
    targetId,
    details,
  });
}

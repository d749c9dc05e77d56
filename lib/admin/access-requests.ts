import type { Ctx } from "../context";
import { requireAdmin, type AdminPrincipal } from "../auth/authorize";
import { sqlOf } from "../db/client";
import { withTx } from "../db/tx";
import type { AccessRequestStatus } from "../db/schema";
import { AppError } from "../errors";
import { FREE_TEXT } from "../characters";
import { selectRequests, toRequestRecord, type AccessRequestRecord } from "../catalog/access-requests";
import { recordAdminAction } from "./audit";
import { REJECTION_REASON_MAX } from "./rules";
import { grantLicence } from "./licences";

export type { AccessRequestRecord };

/** Access requests, newest first: all of them, or those of one status (the queue is `pending`). */
export async function listAccessRequests(
  ctx: Ctx,
  input: { status?: AccessRequestStatus } = {},
): Promise<AccessRequestRecord[]> {
  requireAdmin(ctx);
  const sql = sqlOf(ctx.db);
  const where = input.status ? sql`r.status = ${input.status}` : sql`true`;
  return (await selectRequests(sql, where)).map(toRequestRecord);
}

function actorLabel(ctx: Ctx<AdminPrincipal>): string {
  const p = ctx.principal;
  return p.kind === "user" ? p.email : `${p.name} (das-admin)`;
}

type PendingRequest = {
  id: string;
  organizationId: string;
  datasetId: string;
  version: string;
  termsSha256: string;
  acceptanceId: string;
  status: AccessRequestStatus;
};

/** The request, locked for its decision; refused unless it is still pending. */
async function lockPending(ctx: Ctx, id: string): Promise<PendingRequest> {
  const [found] = await sqlOf(ctx.db)<PendingRequest[]>`
    select r.id, r.organization_id as "organizationId", v.dataset_id as "datasetId", v.version,
           a.terms_sha256 as "termsSha256", r.acceptance_id as "acceptanceId", r.status
    from access_requests r
    join dataset_versions v on v.id = r.version_id
    join terms_acceptances a on a.id = r.acceptance_id
    where r.id = ${id}
    for update of r`;
  if (!found) throw new AppError("not_found", `There is no access request '${id}'.`);
  if (found.status !== "pending")
    throw new AppError("invalid_parameter", `Access request ${id} was already ${found.status}; it is decided once.`);
  return found;
}

/**
 * Approves a pending request: grants the organisation the licence (its term as the admin chooses,
 * under the terms the requester accepted), links it to the request, and records both
 * (`licence.grant`, `request.approve`), all in one transaction. Refused when the organisation
 * already holds a licence for the version: that one is managed as it is.
 */
export async function approveAccessRequest(
  ctx: Ctx,
  input: { id: string; startsAt?: Date; endsAt?: Date | null },
): Promise<{ id: string; licence_id: string }> {
  requireAdmin(ctx);
  return withTx(ctx, async (tx) => {
    const request = await lockPending(tx, input.id);
    const granted = await grantLicence(tx, {
      organizationId: request.organizationId,
      datasetId: request.datasetId,
      version: request.version,
      startsAt: input.startsAt,
      endsAt: input.endsAt ?? null,
      termsSha256: request.termsSha256,
    });
    if (!granted.created)
      throw new AppError(
        "invalid_parameter",
        `The organisation already holds licence ${granted.id} for ${request.datasetId}@${request.version}; reject this request, or revoke that licence first.`,
      );
    await sqlOf(tx.db)`
      update access_requests set status = 'approved', decided_at = now(), decided_by = ${actorLabel(tx)},
             licence_id = ${granted.id}
      where id = ${request.id}`;
    await recordAdminAction(tx, "request.approve", request.id, {
      licenceId: granted.id,
      acceptanceId: request.acceptanceId,
      organizationId: request.organizationId,
      datasetId: request.datasetId,
      version: request.version,
      termsSha256: request.termsSha256,
    });
    return { id: request.id, licence_id: granted.id };
  });
}

/** Rejects a pending request with a reason the requester's organisation reads. Audited as `request.reject`. */
export async function rejectAccessRequest(ctx: Ctx, input: { id: string; reason: string }): Promise<{ id: string }> {
  requireAdmin(ctx);
  const reason = input.reason.trim();
  if (!reason || reason.length > REJECTION_REASON_MAX || !FREE_TEXT.test(reason))
    throw new AppError(
      "invalid_parameter",
      `A rejection needs a reason the requester will read: 1 to ${REJECTION_REASON_MAX} characters without control characters other than tabs and line breaks.`,
    );
  return withTx(ctx, async (tx) => {
    const request = await lockPending(tx, input.id);
    await sqlOf(tx.db)`
      update access_requests set status = 'rejected', decided_at = now(), decided_by = ${actorLabel(tx)},
             rejection_reason = ${reason}
      where id = ${request.id}`;
    await recordAdminAction(tx, "request.reject", request.id, {
      organizationId: request.organizationId,
      datasetId: request.datasetId,
      version: request.version,
      reason,
    });
    return { id: request.id };
  });
}

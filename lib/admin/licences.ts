import { and, eq, isNull } from "drizzle-orm";
import { datasetVersions, licences } from "../db/schema";
import type { Ctx } from "../context";
import { AppError } from "../errors";
import { newId } from "../ids";
import { withTx } from "../db/tx";
import { sqlOf } from "../db/client";
import { recordAdminAction } from "./audit";
import { requireAdmin } from "../auth/authorize";
import { requireOrganization } from "./organizations";
import { requireTerms } from "./terms";
import { enqueueCopies } from "../fingerprints/jobs";

export type LicenceTarget = { organizationId: string; datasetId: string; version: string };

export async function versionId(ctx: Ctx, datasetId: string, version: string): Promise<number> {
  requireAdmin(ctx);
  const [found] = await ctx.db
    .select({ id: datasetVersions.id })
    .from(datasetVersions)
    .where(and(eq(datasetVersions.datasetId, datasetId), eq(datasetVersions.version, version)));
  if (!found) throw new AppError("not_found", `Dataset '${datasetId}' has no version '${version}'.`);
  return found.id;
}

/** A licence's term and terms, as granted: from `startsAt` (default: now) until `endsAt` (default: no end). */
export type LicenceGrant = LicenceTarget & { startsAt?: Date; endsAt?: Date | null; termsSha256?: string | null };

function checkTerm(startsAt: Date, endsAt: Date | null): void {
  if (Number.isNaN(startsAt.getTime()) || (endsAt && Number.isNaN(endsAt.getTime())))
    throw new AppError("invalid_parameter", "A licence's dates must be valid dates or instants.");
  if (endsAt && endsAt.getTime() <= startsAt.getTime())
    throw new AppError(
      "invalid_parameter",
      `A licence must end after it starts: it starts on ${startsAt.toISOString()}, the end given is ${endsAt.toISOString()}.`,
    );
}

/**
 * Grants a licence; granting one the organisation already holds (not revoked, whatever its term)
 * returns it unchanged: its end is changed with `endLicence`.
 */
export async function grantLicence(ctx: Ctx, target: LicenceGrant): Promise<{ id: string; created: boolean }> {
  requireAdmin(ctx);
  return withTx(ctx, async (tx) => {
    await requireOrganization(tx, target.organizationId);
    const version = await versionId(tx, target.datasetId, target.version);
    // The database's clock, as for `granted_at`, when no start is given.
    const [clock] = await sqlOf(tx.db)<{ now: Date }[]>`select now()`;
    const startsAt = target.startsAt ?? clock!.now;
    const endsAt = target.endsAt ?? null;
    checkTerm(startsAt, endsAt);
    const terms = target.termsSha256 ? await requireTerms(tx, target.termsSha256) : null;
    if (terms?.dataset_id && terms.dataset_id !== target.datasetId)
      throw new AppError(
        "invalid_parameter",
        `Terms ${terms.sha256} ('${terms.title}') are for dataset '${terms.dataset_id}', not '${target.datasetId}'.`,
      );
    const [created] = await tx.db
      .insert(licences)
      .values({
        id: newId("lic"),
        organizationId: target.organizationId,
        versionId: version,
        startsAt,
        endsAt,
        termsSha256: terms?.sha256 ?? null,
      })
      .onConflictDoNothing()
      .returning({ id: licences.id });
    if (!created) return { id: (await activeLicence(tx, target.organizationId, version))!, created: false };
    // A fingerprinted version's new licence gets its copies made ahead of its first download.
    const [fingerprinted] = await sqlOf(tx.db)<{ id: number }[]>`
      select id from dataset_versions where id = ${version} and fingerprinted`;
    if (fingerprinted) await enqueueCopies(sqlOf(tx.db), version, [created.id]);
    await recordAdminAction(tx, "licence.grant", created.id, {
      organizationId: target.organizationId,
      datasetId: target.datasetId,
      version: target.version,
      startsAt: startsAt.toISOString(),
      endsAt: endsAt?.toISOString() ?? null,
      termsSha256: terms?.sha256 ?? null,
    });
    return { id: created.id, created: true };
  });
}

/**
 * Moves the end of the organisation's licence (not revoked): earlier to end it early, later to
 * extend it, even once it has ended. Audited with the end it had before.
 */
export async function endLicence(
  ctx: Ctx,
  target: LicenceTarget & { endsAt: Date },
): Promise<{ id: string; startsAt: Date; endsAt: Date; previousEndsAt: Date | null }> {
  requireAdmin(ctx);
  return withTx(ctx, async (tx) => {
    const version = await versionId(tx, target.datasetId, target.version);
    const sql = sqlOf(tx.db);
    const [held] = await sql<{ id: string; startsAt: Date; endsAt: Date | null }[]>`
      select id, starts_at as "startsAt", ends_at as "endsAt" from licences
      where organization_id = ${target.organizationId} and version_id = ${version} and revoked_at is null
      for update`;
    if (!held)
      throw new AppError(
        "not_found",
        `The organisation holds no active licence for ${target.datasetId}@${target.version}.`,
      );
    checkTerm(held.startsAt, target.endsAt);
    await sql`update licences set ends_at = ${target.endsAt} where id = ${held.id}`;
    await recordAdminAction(tx, "licence.end", held.id, {
      organizationId: target.organizationId,
      datasetId: target.datasetId,
      version: target.version,
      endsAt: target.endsAt.toISOString(),
      previousEndsAt: held.endsAt?.toISOString() ?? null,
    });
    return { id: held.id, startsAt: held.startsAt, endsAt: target.endsAt, previousEndsAt: held.endsAt };
  });
}

/** Revokes the organisation's active licence; the row stays, since disclosures refer to it. */
export async function revokeLicence(ctx: Ctx, target: LicenceTarget): Promise<{ id: string }> {
  requireAdmin(ctx);
  return withTx(ctx, async (tx) => {
    const version = await versionId(tx, target.datasetId, target.version);
    const [revoked] = await tx.db
      .update(licences)
      .set({ revokedAt: new Date() })
      .where(
        and(
          eq(licences.organizationId, target.organizationId),
          eq(licences.versionId, version),
          isNull(licences.revokedAt),
        ),
      )
      .returning({ id: licences.id });
    if (!revoked)
      throw new AppError(
        "not_found",
        `The organisation holds no active licence for ${target.datasetId}@${target.version}.`,
      );
    await recordAdminAction(tx, "licence.revoke", revoked.id, { ...target });
    return revoked;
  });
}

async function activeLicence(ctx: Ctx, organizationId: string, version: number): Promise<string | undefined> {
  const [found] = await ctx.db
    .select({ id: licences.id })
    .from(licences)
    .where(
      and(eq(licences.organizationId, organizationId), eq(licences.versionId, version), isNull(licences.revokedAt)),
    );
  return found?.id;
}

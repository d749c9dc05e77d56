import { and, eq, isNull } from "drizzle-orm";
import { datasetVersions, licences } from "../db/schema";
import type { Ctx } from "../context";
import { AppError } from "../errors";
import { newId } from "../ids";
import { withTx } from "../db/tx";
import { recordAdminAction } from "./audit";
import { requireAdmin } from "../auth/authorize";
import { requireOrganization } from "./organizations";

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

/** Grants a licence; granting one the organisation already holds returns it unchanged. */
export async function grantLicence(ctx: Ctx, target: LicenceTarget): Promise<{ id: string; created: boolean }> {
  requireAdmin(ctx);
  return withTx(ctx, async (tx) => {
    await requireOrganization(tx, target.organizationId);
    const version = await versionId(tx, target.datasetId, target.version);
    const [created] = await tx.db
      .insert(licences)
      .values({ id: newId("lic"), organizationId: target.organizationId, versionId: version })
      .onConflictDoNothing()
      .returning({ id: licences.id });
    if (!created) return { id: (await activeLicence(tx, target.organizationId, version))!, created: false };
    await recordAdminAction(tx, "licence.grant", created.id, { ...target });
    return { id: created.id, created: true };
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

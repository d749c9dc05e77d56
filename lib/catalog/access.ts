import type { PendingQuery, Row } from "postgres";
import type { Ctx } from "../context";
import type { Principal } from "../auth/principal";
import { sqlOf, type Sql } from "../db/client";
import type { FacetCounts, LeRobotFormatInfo, SourceFormat } from "../db/schema";
import { AppError, NOT_VISIBLE } from "../errors";
import { cachedRead } from "../cache/read-cache";
import { DATASET_ID_PATTERN } from "./identifiers";
import { versionFormat, type VersionFormat } from "./version-format";

/**
 * The one place that says which licences a principal may use, as a condition on `licences l`:
 * the organisation's active licences, intersected with the key's narrowing when it has one.
 * Every catalog read and every download goes through it (as `usableLicences` below), so nothing
 * outside the caller's licences is ever selected.
 */
export function usableLicence(sql: Sql, principal: Principal): PendingQuery<Row[]> {
  if (!principal.organizationId) return sql`false`;
  if (principal.kind === "api_key" && principal.narrowed) {
    return sql`(l.organization_id = ${principal.organizationId} and l.revoked_at is null
      and exists (select 1 from api_key_scopes s where s.key_id = ${principal.keyId} and s.version_id = l.version_id))`;
  }
  return sql`(l.organization_id = ${principal.organizationId} and l.revoked_at is null)`;
}

/** Whose licences a principal uses: its organisation's, or, for a narrowed key, the key's own share of them. */
function licenceHolder(principal: Principal): readonly unknown[] {
  return principal.kind === "api_key" && principal.narrowed
    ? ["key", principal.keyId]
    : ["org", principal.organizationId];
}

/**
 * The licences the caller may use, by version id: `usableLicence` applied to all of them at once.
 * The API keeps this per organisation (or narrowed key) in memory; any change to licences, keys or
 * their scopes flushes it (lib/cache).
 */
export function usableLicences(ctx: Ctx): Promise<ReadonlyMap<number, string>> {
  return cachedRead(ctx, "licences", licenceHolder(ctx.principal), async () => {
    const sql = sqlOf(ctx.db);
    const rows = await sql<{ versionId: number; licenceId: string }[]>`
      select l.version_id as "versionId", l.id as "licenceId" from licences l where ${usableLicence(sql, ctx.principal)}`;
    return new Map(rows.map((row) => [row.versionId, row.licenceId]));
  });
}

export type ReleasedVersion = {
  versionId: number;
  version: string;
  releasedAt: Date;
  episodeCount: number;
  fileCount: number;
  totalBytes: number;
  streams: string[];
  facetCounts: FacetCounts;
  /** A version imported from a LeRobot dataset: its facts; null for our own import format. */
  format: VersionFormat | null;
};

/** A dataset's released versions, newest first: the same for every caller, and changed only by an import. */
export function releasedVersions(ctx: Ctx, datasetId: string): Promise<ReleasedVersion[]> {
  return cachedRead(ctx, "datasets", [datasetId], async () => {
    const sql = sqlOf(ctx.db);
    const rows = await sql<
      (Omit<ReleasedVersion, "format"> & { sourceFormat: SourceFormat; formatInfo: LeRobotFormatInfo | null })[]
    >`
      select id as "versionId", version, released_at as "releasedAt", episode_count as "episodeCount", file_count as "fileCount",
             total_bytes::float8 as "totalBytes", streams, facet_counts as "facetCounts", source_format as "sourceFormat", format_info as "formatInfo"
      from dataset_versions
      where dataset_id = ${datasetId}
      order by major desc, minor desc, patch desc`;
    return rows.map(({ sourceFormat, formatInfo, ...v }) => ({
      ...v,
      format: versionFormat(sourceFormat, formatInfo),
    }));
  });
}

export type VersionAccess = ReleasedVersion & { licenceId: string | null };

export type LicensedVersion = ReleasedVersion & { licenceId: string };

/** Every version of a dataset with the caller's licence for it (if any), newest first. */
export async function datasetVersionAccess(ctx: Ctx, datasetId: string): Promise<VersionAccess[]> {
  const [versions, usable] = await Promise.all([releasedVersions(ctx, datasetId), usableLicences(ctx)]);
  return versions.map((v) => ({ ...v, licenceId: usable.get(v.versionId) ?? null }));
}

/** The dataset's versions if at least one is licensed to the caller; otherwise the same 404 as a missing dataset. */
export async function requireVisibleDataset(ctx: Ctx, datasetId: string): Promise<VersionAccess[]> {
  const versions = DATASET_ID_PATTERN.test(datasetId) ? await datasetVersionAccess(ctx, datasetId) : [];
  if (!versions.some((v) => v.licenceId)) throw new AppError("not_found", NOT_VISIBLE.dataset);
  return versions;
}

/** 404 for an invisible dataset or unknown version, 403 for a visible dataset's unlicensed version. */
export async function requireLicensedVersion(ctx: Ctx, datasetId: string, version: string): Promise<LicensedVersion> {
  const versions = await requireVisibleDataset(ctx, datasetId);
  const found = versions.find((v) => v.version === version);
  if (!found) throw new AppError("not_found", `Dataset '${datasetId}' has no version '${version}'.`);
  return assertLicensed(found, datasetId);
}

export function assertLicensed<V extends VersionAccess>(found: V, datasetId: string): V & { licenceId: string } {
  if (!found.licenceId) {
    throw new AppError(
      "version_not_licensed",
      `Version ${found.version} of dataset '${datasetId}' is not licensed to you. Ask your administrator for a licence to it.`,
    );
  }
  return found as V & { licenceId: string };
}

import type { PendingQuery, Row } from "postgres";
import type { Ctx } from "../context";
import type { Principal } from "../auth/principal";
import { sqlOf, type Sql } from "../db/client";
import { countOf, type FacetCounts, type LeRobotFormatInfo, type SourceFormat } from "../db/schema";
import { AppError, NOT_VISIBLE } from "../errors";
import { cachedRead } from "../cache/read-cache";
import { DATASET_ID_PATTERN } from "./identifiers";
import { versionFormat, type VersionFormat } from "./version-format";

/**
 * Which licences a principal holds, as a condition on `licences l`: the organisation's licences not
 * revoked, intersected with the key's narrowing when it has one. Whether a held licence may be used
 * now is its term (`inTerm`), judged at each request. Every catalog read and every download goes
 * through both (as `usableLicences` below), so nothing outside the caller's licences is ever selected.
 */
export function heldLicence(sql: Sql, principal: Principal): PendingQuery<Row[]> {
  if (!principal.organizationId) return sql`false`;
  if (principal.kind === "api_key" && principal.narrowed) {
    return sql`(l.organization_id = ${principal.organizationId} and l.revoked_at is null
      and exists (select 1 from api_key_scopes s where s.key_id = ${principal.keyId} and s.version_id = l.version_id))`;
  }
  return sql`(l.organization_id = ${principal.organizationId} and l.revoked_at is null)`;
}

/**
 * A held licence and its term: usable from `startsAt` (included) until `endsAt` (excluded; null: no
 * end). `termsSha256` is the terms document it was granted under (null: none), fixed at its grant,
 * which every disclosure made under it records.
 */
export type HeldLicence = { licenceId: string; startsAt: Date; endsAt: Date | null; termsSha256: string | null };

/**
 * The one rule of a licence's term, applied at every request to what the database or the
 * instance's cache holds: no process has to run when a term begins or ends, and a cached licence
 * stops being usable at its end on every instance at once (decision 0088).
 */
export function inTerm(term: Pick<HeldLicence, "startsAt" | "endsAt">, now: Date): boolean {
  const at = now.getTime();
  return term.startsAt.getTime() <= at && (term.endsAt === null || at < term.endsAt.getTime());
}

/** Whose licences a principal uses: its organisation's, or, for a narrowed key, the key's own share of them. */
function licenceHolder(principal: Principal): readonly unknown[] {
  return principal.kind === "api_key" && principal.narrowed
    ? ["key", principal.keyId]
    : ["org", principal.organizationId];
}

/**
 * The licences the caller holds, by version id, each with its term, whether usable now or not. The
 * API keeps this per organisation (or narrowed key) in memory; any change to licences, keys or their
 * scopes flushes it (lib/cache). The terms are compared with the clock by the readers below, never here.
 */
export function heldLicences(ctx: Ctx): Promise<ReadonlyMap<number, HeldLicence>> {
  return cachedRead(ctx, "licences", licenceHolder(ctx.principal), async () => {
    const sql = sqlOf(ctx.db);
    const rows = await sql<({ versionId: number } & HeldLicence)[]>`
      select l.version_id as "versionId", l.id as "licenceId", l.starts_at as "startsAt", l.ends_at as "endsAt",
             l.terms_sha256 as "termsSha256"
      from licences l where ${heldLicence(sql, ctx.principal)}`;
    return new Map(rows.map(({ versionId, ...held }) => [versionId, held]));
  });
}

/** The licences the caller may use at `now`, by version id: the held ones within their term. */
export async function usableLicences(ctx: Ctx, now = new Date()): Promise<ReadonlyMap<number, string>> {
  const usable = new Map<number, string>();
  for (const [versionId, held] of await heldLicences(ctx)) if (inTerm(held, now)) usable.set(versionId, held.licenceId);
  return usable;
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
  /** SHA-256 over the version's imported content (episodes, annotations, every file's path and SHA-256). */
  contentSha256: string;
  /**
   * How many of its episodes have been withdrawn (lib/catalog/withdrawn.ts). The counts above
   * already leave them and the files holding them out; a reader filters rows only when this is not 0.
   */
  withdrawnEpisodes: number;
  /**
   * Whether each licence receives its own copy of every file (lib/fingerprints): downloads,
   * previews and manifests then hand the caller's licence its copies. Read with the version, so a
   * version without it costs no query more.
   */
  fingerprinted: boolean;
};

/**
 * A dataset's released versions, newest first: the same for every caller, and changed only by an
 * import or a withdrawal (each flushes the cache). Counts, facets and sizes leave out withdrawn
 * episodes and every file holding one, so every total any reader shows is the withdrawn-free one.
 */
export function releasedVersions(ctx: Ctx, datasetId: string): Promise<ReleasedVersion[]> {
  return cachedRead(ctx, "datasets", [datasetId], async () => {
    const sql = sqlOf(ctx.db);
    const rows = await sql<
      (Omit<ReleasedVersion, "format"> & { sourceFormat: SourceFormat; formatInfo: LeRobotFormatInfo | null })[]
    >`
      select id as "versionId", version, released_at as "releasedAt", episode_count as "episodeCount", file_count as "fileCount",
             total_bytes::float8 as "totalBytes", streams, facet_counts as "facetCounts", source_format as "sourceFormat", format_info as "formatInfo",
             content_sha256 as "contentSha256", fingerprinted,
             (select count(*)::int from withdrawn_episodes w where w.version_id = dataset_versions.id) as "withdrawnEpisodes"
      from dataset_versions
      where dataset_id = ${datasetId}
      order by major desc, minor desc, patch desc`;
    const withdrawn = rows.some((r) => r.withdrawnEpisodes > 0) ? await withdrawnTotals(sql, rows) : new Map();
    return rows.map(({ sourceFormat, formatInfo, ...v }) => ({
      ...v,
      ...withdrawn.get(v.versionId),
      format: versionFormat(sourceFormat, formatInfo),
    }));
  });
}

type Totals = Pick<ReleasedVersion, "episodeCount" | "facetCounts" | "fileCount" | "totalBytes">;

/** The totals of the versions that have withdrawals, without the withdrawn episodes and the files that hold them. */
async function withdrawnTotals(sql: Sql, versions: (Totals & { versionId: number; withdrawnEpisodes: number })[]) {
  const ids = versions.filter((v) => v.withdrawnEpisodes > 0).map((v) => v.versionId);
  const [facets, files] = await Promise.all([
    sql<{ versionId: number; outcome: string; environment: string; n: number }[]>`
      select w.version_id as "versionId", e.outcome, e.environment, count(*)::int as n
      from withdrawn_episodes w join episodes e on e.version_id = w.version_id and e.episode_id = w.episode_id
      where w.version_id = any(${ids}::int[]) group by 1, 2, 3`,
    sql<{ versionId: number; files: number; bytes: number }[]>`
      select f.version_id as "versionId", count(*)::int as files, coalesce(sum(f.size_bytes), 0)::float8 as bytes
      from files f
      where (f.version_id, f.path) in (
        select distinct fe.version_id, fe.path from withdrawn_episodes w
        join file_episodes fe on fe.version_id = w.version_id and fe.episode_id = w.episode_id
        where w.version_id = any(${ids}::int[]))
      group by 1`,
  ]);
  const totals = new Map<number, Totals>();
  for (const v of versions) {
    if (!v.withdrawnEpisodes) continue;
    const counts: FacetCounts = structuredClone(v.facetCounts);
    for (const f of facets) {
      if (f.versionId !== v.versionId) continue;
      const less = (into: Record<string, number>, key: string) => {
        const left = countOf(into, key) - f.n;
        if (left > 0) into[key] = left;
        else delete into[key];
      };
      less(counts.outcome, f.outcome);
      less(counts.environment, f.environment);
      less(counts.pairs, JSON.stringify([f.outcome, f.environment]));
    }
    const withheld = files.find((f) => f.versionId === v.versionId);
    totals.set(v.versionId, {
      episodeCount: v.episodeCount - v.withdrawnEpisodes,
      facetCounts: counts,
      fileCount: v.fileCount - (withheld?.files ?? 0),
      totalBytes: v.totalBytes - (withheld?.bytes ?? 0),
    });
  }
  return totals;
}

/**
 * A version and the caller's licence for it: `licenceId` (and its `termsSha256`) when usable now;
 * otherwise `heldOutOfTerm` is the held licence whose term has not begun or has ended, if any, so a
 * refusal can say which.
 */
export type VersionAccess = ReleasedVersion & {
  licenceId: string | null;
  termsSha256: string | null;
  heldOutOfTerm: HeldLicence | null;
};

export type LicensedVersion = ReleasedVersion & { licenceId: string; termsSha256: string | null };

/** Every version of a dataset with the caller's licence for it (if any), newest first. */
export async function datasetVersionAccess(ctx: Ctx, datasetId: string, now = new Date()): Promise<VersionAccess[]> {
  const [versions, held] = await Promise.all([releasedVersions(ctx, datasetId), heldLicences(ctx)]);
  return versions.map((v) => accessTo(v, held.get(v.versionId), now));
}

/** A version with the caller's licence for it: usable now, held out of its term, or none. */
function accessTo(v: ReleasedVersion, licence: HeldLicence | undefined, now: Date): VersionAccess {
  // Object.assign rather than a spread: every page and download asks this, and on V8 a spread of
  // the version made an object slow to make (a twentieth of a cached page's own cost).
  if (!licence) return Object.assign({}, v, { licenceId: null, termsSha256: null, heldOutOfTerm: null });
  return inTerm(licence, now)
    ? Object.assign({}, v, { licenceId: licence.licenceId, termsSha256: licence.termsSha256, heldOutOfTerm: null })
    : Object.assign({}, v, { licenceId: null, termsSha256: null, heldOutOfTerm: licence });
}

/** The dataset's versions if at least one is licensed to the caller; otherwise the same 404 as a missing dataset. */
export async function requireVisibleDataset(ctx: Ctx, datasetId: string): Promise<VersionAccess[]> {
  const versions = DATASET_ID_PATTERN.test(datasetId) ? await datasetVersionAccess(ctx, datasetId) : [];
  if (!versions.some((v) => v.licenceId)) throw new AppError("not_found", NOT_VISIBLE.dataset);
  return versions;
}

/**
 * 404 for an invisible dataset or unknown version, 403 for a visible dataset's unlicensed version.
 * The rule of `requireVisibleDataset`, with only the version asked for made into a VersionAccess:
 * every page and download asks this, and a dataset may have many versions.
 */
export async function requireLicensedVersion(ctx: Ctx, datasetId: string, version: string): Promise<LicensedVersion> {
  if (!DATASET_ID_PATTERN.test(datasetId)) throw new AppError("not_found", NOT_VISIBLE.dataset);
  const [versions, held] = await Promise.all([releasedVersions(ctx, datasetId), heldLicences(ctx)]);
  const now = new Date();
  const usable = (v: ReleasedVersion) => {
    const licence = held.get(v.versionId);
    return licence !== undefined && inTerm(licence, now);
  };
  if (!versions.some(usable)) throw new AppError("not_found", NOT_VISIBLE.dataset);
  const found = versions.find((v) => v.version === version);
  if (!found) throw new AppError("not_found", `Dataset '${datasetId}' has no version '${version}'.`);
  return assertLicensed(accessTo(found, held.get(found.versionId), now), datasetId);
}

export function assertLicensed<V extends VersionAccess>(found: V, datasetId: string): V & { licenceId: string } {
  if (!found.licenceId) {
    const term = found.heldOutOfTerm;
    // The caller's own licence: saying when it ended or begins tells them nothing about anyone else's.
    const why = !term
      ? "is not licensed to you"
      : term.endsAt && term.endsAt.getTime() <= Date.now()
        ? `is not licensed to you: your licence ended on ${term.endsAt.toISOString()}`
        : `is not licensed to you yet: your licence starts on ${term.startsAt.toISOString()}`;
    throw new AppError(
      "version_not_licensed",
      `Version ${found.version} of dataset '${datasetId}' ${why}. Ask your administrator for a licence to it.`,
    );
  }
  return found as V & { licenceId: string };
}

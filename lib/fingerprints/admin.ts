import type { Ctx } from "../context";
import { requireAdmin } from "../auth/authorize";
import { sqlOf } from "../db/client";
import { withTx } from "../db/tx";
import { AppError } from "../errors";
import { recordAdminAction } from "../admin/audit";
import { DATASET_ID_PATTERN } from "../catalog/identifiers";
import { enqueueCopies } from "./jobs";

/**
 * Fingerprinting of a version, on or off (`das-admin dataset fingerprint <dataset> <version> on|off`),
 * and how far its copies are. Turning it on enqueues every licence's copies in the same
 * transaction; until a licence's copies are made, its downloads of the version answer 503. Turning
 * it off delivers the originals again; the copies made stay (they are what trace finds).
 */

export type FingerprintChange = { fingerprinted: boolean; previous: boolean; changed: boolean; jobs: number };

export async function setFingerprinting(
  ctx: Ctx,
  input: { datasetId: string; version: string; on: boolean },
): Promise<FingerprintChange> {
  requireAdmin(ctx);
  return withTx(ctx, async (tx) => {
    const sql = sqlOf(tx.db);
    const [row] = DATASET_ID_PATTERN.test(input.datasetId)
      ? await sql<{ id: number; fingerprinted: boolean }[]>`
          select id, fingerprinted from dataset_versions
          where dataset_id = ${input.datasetId} and version = ${input.version} for update`
      : [];
    if (!row) throw new AppError("not_found", `Dataset '${input.datasetId}' has no version '${input.version}'.`);
    // On again (or still): any copy not made yet is enqueued again, a way to mend failed jobs.
    const jobs = input.on ? (await enqueueCopies(sql, row.id)).jobs : 0;
    if (row.fingerprinted === input.on)
      return { fingerprinted: input.on, previous: row.fingerprinted, changed: false, jobs };
    await sql`update dataset_versions set fingerprinted = ${input.on} where id = ${row.id}`;
    await recordAdminAction(tx, "version.fingerprint", `${input.datasetId}@${input.version}`, {
      datasetId: input.datasetId,
      version: input.version,
      fingerprinted: input.on,
      jobs,
    });
    return { fingerprinted: input.on, previous: row.fingerprinted, changed: true, jobs };
  });
}

export type LicenceCopyStatus = {
  licence_id: string;
  organization_slug: string;
  revoked: boolean;
  copies: number;
  files: number;
  copy_bytes: number;
};

export type FingerprintStatus = {
  dataset_id: string;
  version: string;
  fingerprinted: boolean;
  files: number;
  licences: LicenceCopyStatus[];
};

/**
 * Whether a version is fingerprinted and, per licence, how many of its files have their copy. Every
 * file the version stores gets one, withdrawn or not, so the files are counted where they are stored.
 */
export async function fingerprintStatus(
  ctx: Ctx,
  input: { datasetId: string; version: string },
): Promise<FingerprintStatus> {
  requireAdmin(ctx);
  const sql = sqlOf(ctx.db);
  const [version] = DATASET_ID_PATTERN.test(input.datasetId)
    ? await sql<{ id: number; fingerprinted: boolean; files: number }[]>`
        select v.id, v.fingerprinted, (select count(*)::int from files f where f.version_id = v.id) as files
        from dataset_versions v
        where v.dataset_id = ${input.datasetId} and v.version = ${input.version}`
    : [];
  if (!version) throw new AppError("not_found", `Dataset '${input.datasetId}' has no version '${input.version}'.`);
  const licences = await sql<LicenceCopyStatus[]>`
    select l.id as licence_id, o.slug as organization_slug, l.revoked_at is not null as revoked,
           count(c.path)::int as copies, ${version.files}::int as files, coalesce(sum(c.size_bytes), 0)::float8 as copy_bytes
    from licences l join organizations o on o.id = l.organization_id
    left join licence_copies c on c.licence_id = l.id
    where l.version_id = ${version.id}
    group by l.id, o.slug order by o.slug, l.id`;
  return {
    dataset_id: input.datasetId,
    version: input.version,
    fingerprinted: version.fingerprinted,
    files: version.files,
    licences,
  };
}

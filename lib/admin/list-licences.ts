import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { requireAdmin } from "../auth/authorize";
import { releasedVersions } from "../catalog/access";

export type LicenceRecord = {
  id: string;
  organization_id: string;
  organization_slug: string;
  organization_name: string;
  dataset_id: string;
  dataset_title: string;
  version: string;
  granted_at: string;
  revoked_at: string | null;
  starts_at: string;
  ends_at: string | null;
  terms_sha256: string | null;
};

/**
 * Every licence, active and revoked, newest grant first within each organisation and dataset
 * version; optionally one organisation's. Revoked rows stay because disclosures refer to them.
 */
export async function listLicences(ctx: Ctx, input: { organizationId?: string } = {}): Promise<LicenceRecord[]> {
  requireAdmin(ctx);
  const sql = sqlOf(ctx.db);
  const org = input.organizationId ?? null;
  const rows = await sql<
    (Omit<LicenceRecord, "granted_at" | "revoked_at" | "starts_at" | "ends_at"> & {
      granted_at: Date;
      revoked_at: Date | null;
      starts_at: Date;
      ends_at: Date | null;
    })[]
  >`
    select l.id, l.organization_id, o.slug as organization_slug, o.name as organization_name,
           v.dataset_id, d.title as dataset_title, v.version, l.granted_at, l.revoked_at,
           l.starts_at, l.ends_at, l.terms_sha256
    from licences l
    join organizations o on o.id = l.organization_id
    join dataset_versions v on v.id = l.version_id
    join datasets d on d.id = v.dataset_id
    where (${org}::text is null or l.organization_id = ${org})
    order by o.slug, v.dataset_id, v.major desc, v.minor desc, v.patch desc, l.granted_at desc`;
  return rows.map((r) => ({
    ...r,
    granted_at: r.granted_at.toISOString(),
    revoked_at: r.revoked_at?.toISOString() ?? null,
    starts_at: r.starts_at.toISOString(),
    ends_at: r.ends_at?.toISOString() ?? null,
  }));
}

export type VersionChoice = {
  dataset_id: string;
  dataset_title: string;
  version: string;
  released_at: string;
  episode_count: number;
};

/** Every released dataset version, for the grant form: by dataset, newest version first; counts as every reader has them. */
export async function listVersionChoices(ctx: Ctx): Promise<VersionChoice[]> {
  requireAdmin(ctx);
  const datasets = await sqlOf(ctx.db)<{ dataset_id: string; dataset_title: string }[]>`
    select d.id as dataset_id, d.title as dataset_title from datasets d
    where exists (select 1 from dataset_versions v where v.dataset_id = d.id)
    order by d.id`;
  const versions = await Promise.all(datasets.map((d) => releasedVersions(ctx, d.dataset_id)));
  return datasets.flatMap((d, i) =>
    versions[i]!.map((v) => ({
      ...d,
      version: v.version,
      released_at: v.releasedAt.toISOString(),
      episode_count: v.episodeCount,
    })),
  );
}

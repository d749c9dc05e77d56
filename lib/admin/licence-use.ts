import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { requireAdmin } from "../auth/authorize";
import { ENDING_WARNING_DAYS } from "../catalog/licence-ending";

/** What a licence has delivered, from the log: its downloads (API and portal), previews, episodes, bytes and last use. */
export type LicenceUse = {
  id: string;
  organization_slug: string;
  organization_name: string;
  dataset_id: string;
  version: string;
  starts_at: Date;
  ends_at: Date | null;
  revoked_at: Date | null;
  terms_sha256: string | null;
  terms_title: string | null;
  downloads: number;
  previews: number;
  episodes: number;
  bytes: number;
  /** The last entry made under it; null when it was never used. */
  last_used_at: Date | null;
};

/**
 * Every licence with what it has delivered, most recently used first (never used last). The figures
 * come from `disclosure_licence_totals` (migration 0017), kept by the log's summary trigger at each
 * append: a row per licence and channel, so this reads as many rows as there are licences, whatever
 * the size of the log. Revoked licences are included: what they delivered stays theirs.
 */
export async function licenceUse(ctx: Ctx, input: { organizationId?: string } = {}): Promise<LicenceUse[]> {
  requireAdmin(ctx);
  const sql = sqlOf(ctx.db);
  const org = input.organizationId ?? null;
  return sql<LicenceUse[]>`
    select l.id, o.slug as organization_slug, o.name as organization_name, v.dataset_id, v.version,
           l.starts_at, l.ends_at, l.revoked_at, l.terms_sha256, t.title as terms_title,
           coalesce(u.downloads, 0)::float8 as downloads, coalesce(u.previews, 0)::float8 as previews,
           coalesce(u.episodes, 0)::float8 as episodes, coalesce(u.bytes, 0)::float8 as bytes, u.last_used_at
    from licences l
    join organizations o on o.id = l.organization_id
    join dataset_versions v on v.id = l.version_id
    left join terms_documents t on t.sha256 = l.terms_sha256
    left join (
      select licence_id,
             sum(entries) filter (where channel <> 'preview') as downloads,
             sum(entries) filter (where channel = 'preview') as previews,
             sum(episodes) as episodes, sum(bytes) as bytes, max(last_at) as last_used_at
      from disclosure_licence_totals group by licence_id
    ) u on u.licence_id = l.id
    where (${org}::text is null or l.organization_id = ${org})
    order by u.last_used_at desc nulls last, o.slug, v.dataset_id, v.version`;
}

/** A licence in force that ends within the warning period (30 days), soonest first. */
export type EndingLicence = Pick<
  LicenceUse,
  "id" | "organization_slug" | "organization_name" | "dataset_id" | "version" | "ends_at"
> & { ends_at: Date };

/** The licences not revoked whose end falls between now and 30 days from now, by the database's clock. */
export async function licencesEnding(ctx: Ctx): Promise<EndingLicence[]> {
  requireAdmin(ctx);
  const sql = sqlOf(ctx.db);
  return sql<EndingLicence[]>`
    select l.id, o.slug as organization_slug, o.name as organization_name, v.dataset_id, v.version, l.ends_at
    from licences l
    join organizations o on o.id = l.organization_id
    join dataset_versions v on v.id = l.version_id
    where l.revoked_at is null and l.ends_at > now() and l.ends_at <= now() + make_interval(days => ${ENDING_WARNING_DAYS})
    order by l.ends_at, o.slug`;
}

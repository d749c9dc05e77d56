import type { Sql } from "../db/client";
import { tellNotices } from "./messages";

/**
 * Tells every organisation that holds a current licence (not revoked, not ended) for an earlier
 * version of the dataset that `versionId` is released: one notice per organisation, naming the
 * earlier versions it holds, delivered like every notice (inbox, API, webhooks, email). Run in the
 * transaction that writes the version, so the notices and their delivery jobs exist exactly when
 * the version does. The unique (organisation, version) key makes running it again a no-op.
 * Returns how many notices it wrote.
 */
export async function announceNewVersion(sql: Sql, versionId: number): Promise<number> {
  const written = await sql<{ notice_id: string; organization_id: string }[]>`
    with released as (
      select id, dataset_id, version, major, minor, patch, released_at from dataset_versions where id = ${versionId}
    ), holders as (
      select l.organization_id, array_agg(v.version order by v.major, v.minor, v.patch) as licensed_versions
      from released r
      join dataset_versions v on v.dataset_id = r.dataset_id and (v.major, v.minor, v.patch) < (r.major, r.minor, r.patch)
      join licences l on l.version_id = v.id
      where l.revoked_at is null and (l.ends_at is null or l.ends_at > now())
      group by l.organization_id
    )
    insert into notices (id, organization_id, kind, version_id, details)
    select 'nt_' || left(encode(sha256(convert_to('new_version/' || r.id || '/' || h.organization_id, 'UTF8')), 'hex'), 32),
           h.organization_id, 'new_version', r.id,
           jsonb_build_object('dataset_id', r.dataset_id, 'version', r.version,
             'released_at', to_char(r.released_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'licensed_versions', to_jsonb(h.licensed_versions))
    from released r cross join holders h
    where not exists (select 1 from licences x where x.version_id = r.id and x.organization_id = h.organization_id and x.revoked_at is null)
    order by h.organization_id
    on conflict do nothing
    returning id as notice_id, organization_id`;
  await tellNotices(
    sql,
    written.map((n) => ({ noticeId: n.notice_id, organizationId: n.organization_id, kind: "new_version" })),
  );
  return written.length;
}

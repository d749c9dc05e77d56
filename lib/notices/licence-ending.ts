import type { Sql } from "../db/client";
import { tellNotices } from "./messages";

/** A licence's holder is warned this many days before its end, once at each. */
export const LICENCE_WARNING_DAYS = [30, 7] as const;

/**
 * Warns the holder of every licence (not revoked) that ends after `now` and within 30 days of it:
 * one notice per licence, warning and end date, the nearest warning that applies (a licence
 * granted 5 days before its end gets the 7-day warning only). The unique key of (licence, warning,
 * end) makes a warning exactly once however often and on however many workers this runs; a
 * licence whose end was moved is warned of its new end when that comes near, and one that ended
 * early or was revoked is not warned at all. Returns how many notices it wrote.
 */
export async function warnEndingLicences(sql: Sql, now: Date): Promise<number> {
  const [near, far] = [Math.min(...LICENCE_WARNING_DAYS), Math.max(...LICENCE_WARNING_DAYS)];
  const written = await sql<{ notice_id: string; organization_id: string }[]>`
    with due as (
      select l.id as licence_id, l.organization_id, l.version_id, l.ends_at, v.dataset_id, v.version,
             case when l.ends_at <= ${now}::timestamptz + make_interval(days => ${near}::int) then ${near}::int else ${far}::int end as days_before
      from licences l join dataset_versions v on v.id = l.version_id
      where l.revoked_at is null and l.ends_at > ${now}::timestamptz
        and l.ends_at <= ${now}::timestamptz + make_interval(days => ${far}::int)
    )
    insert into notices (id, organization_id, kind, licence_id, version_id, threshold_days, ends_at, details)
    select 'nt_' || left(encode(sha256(convert_to('licence_ending/' || licence_id || '/' || days_before || '/'
             || to_char(ends_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), 'UTF8')), 'hex'), 32),
           organization_id, 'licence_ending', licence_id, version_id, days_before, ends_at,
           jsonb_build_object('dataset_id', dataset_id, 'version', version,
             'ends_at', to_char(ends_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'days_before', days_before)
    from due
    order by licence_id
    on conflict do nothing
    returning id as notice_id, organization_id`;
  await tellNotices(
    sql,
    written.map((n) => ({ noticeId: n.notice_id, organizationId: n.organization_id, kind: "licence_ending" })),
  );
  return written.length;
}

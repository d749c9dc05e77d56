import type { PendingQuery, Row } from "postgres";
import type { Sql } from "../db/client";
import type { Refusal } from "./append";

type Fragment = PendingQuery<Row[]>;

/**
 * Whether the log entry `v` is an entry of the request still valid `marginSeconds` past `at`:
 * while there is one, an equal request is not appended again and reuses it. Only previews and
 * files fetched through the Hub protocol are reused (their request digests never meet: each
 * hashes its own kind). The one rule, for the requests' own lookups (lib/previews/create-preview.ts,
 * lib/hub/resolve.ts) and for their refusal under the chain's lock (`equalEntryValid`); a condition
 * on `disclosures v`, so that each query keeps its own plan (migration 0024's partial index).
 */
export function reusableEntry(
  sql: Sql,
  of: { requestSha256: string | Fragment; at: Fragment; marginSeconds: number },
): Fragment {
  return sql`v.channel in ('preview', 'hub') and v.request_sha256 = ${of.requestSha256}
    and v.expires_at > ${of.at} + make_interval(secs => ${of.marginSeconds})`;
}

/**
 * The refusal of an entry while an equal one (the same request) stays valid `marginSeconds` past
 * the append's time: decided under the chain's lock, so that two equal requests at once cannot
 * both append; the refused request reuses the other's entry.
 */
export function equalEntryValid(name: string, marginSeconds: number): Refusal {
  return {
    name,
    when: (sql) =>
      sql`exists (select 1 from disclosures v
        where ${reusableEntry(sql, { requestSha256: sql`i.request_sha256`, at: sql`clock.at`, marginSeconds })})`,
    readsTheLog: true,
  };
}

import type { Sql } from "../db/client";

/**
 * Writes one notice per organisation that received any episode of a withdrawal, through any
 * channel (API or portal download, preview), and returns how many organisations were told. Each
 * notice names that organisation's own withdrawn episodes, and the log entries that carried them
 * with when and through which channel: nothing about anyone else's. Read from the log's
 * per-episode summary (`disclosure_episode_entries`, migration 0014: episode, seq, organisation,
 * channel), one statement for all organisations; entries of reviewers' previews (no organisation)
 * notify nobody. The unique (organisation, withdrawal) key makes it idempotent: computing it again
 * adds only what is missing.
 */
export async function computeWithdrawalNotices(sql: Sql, withdrawalId: string): Promise<number> {
  // Its own memory for the sorts and hashes of a contributor's whole history (hundreds of thousands
  // of entries), for this transaction only; callers run it inside the withdrawal's transaction.
  await sql`set local work_mem = '256MB'`;
  const [row] = await sql<{ notices: number }[]>`
    with withdrawn as (
      select distinct episode_id from withdrawn_episodes where withdrawal_id = ${withdrawalId}
    ), received as (
      select dee.organization_id, dee.seq, dee.channel, dee.episode_id
      from withdrawn x join disclosure_episode_entries dee on dee.episode_id = x.episode_id
      where dee.organization_id is not null
    ), deliveries as (
      select r.organization_id, r.seq, min(r.channel) as channel, array_agg(r.episode_id order by r.episode_id) as episode_ids
      from received r group by r.organization_id, r.seq
    ), per_organization as (
      select dl.organization_id,
             jsonb_agg(jsonb_build_object(
               'download_id', d.id, 'seq', d.seq, 'occurred_at', to_char(d.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'channel', dl.channel, 'dataset_id', d.dataset_id, 'version', d.version, 'episode_ids', to_jsonb(dl.episode_ids))
               order by d.seq) as deliveries
      from deliveries dl join disclosures d on d.seq = dl.seq
      group by dl.organization_id
    ), own_episodes as (
      select organization_id, array_agg(distinct episode_id order by episode_id) as episode_ids
      from received group by organization_id
    ), inserted as (
      insert into notices (id, organization_id, kind, withdrawal_id, episode_ids, deliveries)
      select 'nt_' || left(encode(sha256(convert_to(${withdrawalId} || '/' || p.organization_id, 'UTF8')), 'hex'), 32),
             p.organization_id, 'withdrawal', ${withdrawalId}, e.episode_ids, p.deliveries
      from per_organization p join own_episodes e using (organization_id)
      order by p.organization_id
      on conflict (organization_id, withdrawal_id) do nothing
      returning 1
    )
    select (select count(*)::int from notices where withdrawal_id = ${withdrawalId}) + (select count(*)::int from inserted) as notices`;
  return row!.notices;
}

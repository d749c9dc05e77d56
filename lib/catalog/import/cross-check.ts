import type postgres from "postgres";
import type { ProblemList } from "./problems";

const REPORTED = 200;

type Finding = { src: number; line: number; message: string; total: number };

export type CrossCheckContext = {
  datasetId: string | undefined;
  /** The file name of each staging `src` number. */
  names: string[];
  /** How messages name the version's list of episodes: "episodes.jsonl". */
  episodesName: string;
};

/**
 * The rules that span records, checked over the staging tables once every record has been read.
 * Each query returns the first offending records and, through count(*) over (), how many there are.
 */
export async function crossCheck(
  tx: postgres.TransactionSql,
  problems: ProblemList,
  context: CrossCheckContext,
): Promise<void> {
  const { names, episodesName } = context;
  const report = (rows: Finding[]) =>
    problems.addCounted(
      rows.map((r) => ({ file: names[r.src]!, line: r.line, message: r.message })),
      rows[0]?.total ?? 0,
    );
  // Where an earlier record is: "line 2" in the same file, "meta/episodes.jsonl:2" in another.
  type Fragment = postgres.PendingQuery<postgres.Row[]>;
  const firstAt = (src: Fragment, firstSrc: Fragment, first: Fragment) =>
    tx`case when ${src} = ${firstSrc} then format('line %s', ${first}) else format('%s:%s', (${names}::text[])[${firstSrc} + 1], ${first}) end`;
  const notAnEpisode = `is not in ${episodesName}`;

  report(
    await tx<Finding[]>`
      select src, line, format('duplicate episode_id ''%s'' (first on %s)', episode_id, ${firstAt(tx`src`, tx`first_src`, tx`first_line`)}) as message,
             count(*) over ()::int as total
      from (select src, line, episode_id,
                   first_value(src) over w as first_src, first_value(line) over w as first_line, row_number() over w as n
            from stage_episodes window w as (partition by episode_id order by src, line)) s
      where n > 1 order by src, line limit ${REPORTED}`,
  );

  if (context.datasetId) {
    report(
      await tx<Finding[]>`
        select s.src, s.line, format('episode_id ''%s'' already belongs to dataset ''%s''; episode ids are unique across datasets', s.episode_id, v.dataset_id) as message,
               count(*) over ()::int as total
        from stage_episodes s
        join lateral (select e.version_id from episodes e where e.episode_id = s.episode_id limit 1) e on true
        join dataset_versions v on v.id = e.version_id
        where v.dataset_id <> ${context.datasetId} order by s.src, s.line limit ${REPORTED}`,
    );
  }

  report(
    await tx<Finding[]>`
      select a.src, a.line,
             case when e.episode_id is null then format('episode_id ''%s'' %s', a.episode_id, ${notAnEpisode}::text)
                  else format('span ends at %s s, after the end of episode ''%s'' (duration_s %s)', a.end_s, a.episode_id, e.duration_s) end as message,
             count(*) over ()::int as total
      from stage_annotations a
      left join lateral (select episode_id, duration_s from stage_episodes e where e.episode_id = a.episode_id limit 1) e on true
      where e.episode_id is null or a.end_s > e.duration_s
      order by a.src, a.line limit ${REPORTED}`,
  );

  report(
    await tx<Finding[]>`
      select src, line, message, count(*) over ()::int as total from (
        select f.src, f.line, format('duplicate path ''%s'' (first on %s)', f.path, ${firstAt(tx`f.src`, tx`f.first_src`, tx`f.first_line`)}) as message
        from (select src, line, path, first_value(src) over w as first_src, first_value(line) over w as first_line, row_number() over w as n
              from stage_files window w as (partition by path order by src, line)) f
        where f.n > 1
        union all
        -- A file's episodes, whether its own line named them or a list of its own did.
        select fe.src, fe.line, format('episode_id ''%s'' %s', fe.episode_id, ${notAnEpisode}::text)
        from stage_file_episodes fe where not exists (select 1 from stage_episodes e where e.episode_id = fe.episode_id)
        union all
        select fe.src, fe.line, format('stream ''%s'' is not one of the streams of episode ''%s''', f.stream, fe.episode_id)
        from stage_file_episodes fe
        join lateral (select stream from stage_files f where f.path = fe.path limit 1) f on true
        join lateral (select streams from stage_episodes e where e.episode_id = fe.episode_id limit 1) e on true
        where f.stream is not null and not (f.stream = any (e.streams))
        union all
        select fe.src, fe.line, format('file ''%s'' lists episode ''%s'' twice', fe.path, fe.episode_id)
        from (select src, line, path, episode_id, row_number() over (partition by path, episode_id order by src, line) as n from stage_file_episodes) fe
        where fe.n > 1
        union all
        select fe.src, fe.line, format('path ''%s'' is not a file of this version', fe.path)
        from stage_file_episodes fe where not exists (select 1 from stage_files f where f.path = fe.path)
      ) problems order by src, line limit ${REPORTED}`,
  );
}

import type { PendingQuery, Row } from "postgres";
import type { Sql } from "../db/client";
import type { RequestedScope } from "../db/schema";
import { fileColumns, type FileRecord } from "../catalog/get-manifest";
import { AppError } from "../errors";
import { MAX_FILES_PER_DOWNLOAD } from "./scope";
import { episodeConditions } from "../catalog/episode-filter";
import { episodeNotWithdrawn, refuseFilesHolding, withdrawnAmong } from "../catalog/withdrawn";
import { byteOrder } from "../byte-order";

export type ResolvedScope = {
  files: FileRecord[];
  /** Every episode of every delivered file, in byte order: what the disclosure records. */
  episodeIds: string[];
  /** Those of `episodeIds` beyond the ones asked for (listed, or matching the filter), in byte order. */
  coDelivered: string[];
  totalBytes: number;
};

const NAMED = 20;
const named = (values: string[]) =>
  values.slice(0, NAMED).join(", ") + (values.length > NAMED ? ` (and ${values.length - NAMED} more)` : "");

/**
 * The files a requested scope covers in one version: every file holding one of the listed
 * episodes or of the episodes matching the filter, or the whole version (including version-level
 * files, which belong to no episode), each narrowed to `streams` when given, plus the
 * version-level files when `include_version_files` asks for them. A file shared by several
 * episodes delivers all of them: the resolved episodes are every episode of every delivered file.
 * Unknown streams or episode ids are named in a 400; more than 10,000 files is a 422 asking the
 * client to split.
 */
export async function resolveScope(
  sql: Sql,
  version: { versionId: number; datasetId: string; version: string; withdrawnEpisodes: number; streams: string[] },
  scope: RequestedScope,
): Promise<ResolvedScope> {
  const withdrawals = version.withdrawnEpisodes > 0;
  const where = `${version.datasetId}@${version.version}`;
  if (scope.streams) {
    const unknown = scope.streams.filter((s) => !version.streams.includes(s));
    if (unknown.length) {
      throw new AppError(
        "invalid_body",
        `Unknown streams for ${where}: ${named(unknown)}. Its streams are: ${version.streams.join(", ")}.`,
      );
    }
  }
  if (scope.episode_ids) {
    const found = await sql<{ episode_id: string }[]>`
      select episode_id from episodes where version_id = ${version.versionId} and episode_id = any(${scope.episode_ids}::text[])`;
    if (found.length !== scope.episode_ids.length) {
      const present = new Set(found.map((r) => r.episode_id));
      throw new AppError(
        "invalid_body",
        `These episode_ids are not in ${where}: ${named(scope.episode_ids.filter((id) => !present.has(id)))}.`,
      );
    }
  }

  const matching = filesInScope(sql, version.versionId, scope, { withdrawals });
  const files = await sql<FileRecord[]>`
    select ${fileColumns(sql)}
    from files f where ${matching} order by f.path limit ${MAX_FILES_PER_DOWNLOAD + 1}`;
  // The withdrawals the scope meets, in one query: among the episodes listed (410) and those of the
  // files selected (422). The listed ones are refused first, as if nothing else had been looked at.
  const withdrawn = withdrawals
    ? await withdrawnAmong(sql, version.versionId, [
        ...new Set([...(scope.episode_ids ?? []), ...files.flatMap((f) => f.episode_ids)]),
      ])
    : [];
  const listed = new Set(scope.episode_ids);
  const listedWithdrawn = withdrawn.filter((id) => listed.has(id));
  if (listedWithdrawn.length)
    throw new AppError(
      "episode_withdrawn",
      `These episodes were withdrawn and are no longer available in any version: ${named(listedWithdrawn)}.`,
    );
  if (files.length > MAX_FILES_PER_DOWNLOAD) {
    const [count] = await sql<{ n: number }[]>`select count(*)::int as n from files f where ${matching}`;
    throw new AppError(
      "scope_too_large",
      `This scope covers ${count!.n} files; a download holds at most ${MAX_FILES_PER_DOWNLOAD}. Split it into several requests by episode_ids, filter or streams.`,
    );
  }
  if (!files.length)
    throw new AppError("invalid_body", `The scope matches no files in ${where}; nothing would be downloaded.`);
  refuseFilesHolding(files, new Set(withdrawn));
  const episodeIds = [...new Set(files.flatMap((f) => f.episode_ids))].sort(byteOrder);
  return {
    files: [...files],
    episodeIds,
    coDelivered: await coDeliveredEpisodes(sql, version.versionId, scope, episodeIds),
    totalBytes: files.reduce((sum, f) => sum + f.size_bytes, 0),
  };
}

/** The delivered episodes that were not asked for: not listed, or not matching the filter. A whole version asks for every episode. */
export async function coDeliveredEpisodes(
  sql: Sql,
  versionId: number,
  scope: RequestedScope,
  delivered: readonly string[],
): Promise<string[]> {
  if (scope.episode_ids) {
    const asked = new Set(scope.episode_ids);
    return delivered.filter((id) => !asked.has(id));
  }
  if (!scope.filter || !delivered.length) return [];
  const rows = await sql<{ episode_id: string }[]>`
    select e.episode_id from episodes e
    where e.version_id = ${versionId} and e.episode_id = any(${delivered as string[]}::text[]) and not (${episodeFilter(sql, scope.filter)})
    order by e.episode_id`;
  return rows.map((r) => r.episode_id);
}

/** The filter as a condition on `episodes e` (its columns are never null). */
function episodeFilter(sql: Sql, filter: NonNullable<RequestedScope["filter"]>): PendingQuery<Row[]> {
  return sql`true ${episodeConditions(sql, filter)}`;
}

/**
 * The condition on `files f` for a scope. Released versions never change, so a recorded scope
 * always resolves to the same files: replaying a download uses this same condition. With
 * `withdrawals` (a new download of a version that has withdrawn episodes), a filter or the whole
 * version selects files through the episodes not withdrawn only; a file shared with a withdrawn
 * episode is still selected, for the caller to refuse by name.
 */
export function filesInScope(
  sql: Sql,
  versionId: number,
  scope: RequestedScope,
  options: { withdrawals?: boolean } = {},
): PendingQuery<Row[]> {
  const streams = scope.streams ? sql`and f.stream = any(${scope.streams}::text[])` : sql``;
  // Files of the whole version are those that hold no episode.
  const versionFiles = scope.include_version_files
    ? sql`or not exists (select 1 from file_episodes fe where fe.version_id = ${versionId} and fe.path = f.path)`
    : sql``;
  let episodeFiles: PendingQuery<Row[]>;
  if (scope.episode_ids) {
    episodeFiles = sql`f.path in (select fe.path from file_episodes fe where fe.version_id = ${versionId} and fe.episode_id = any(${scope.episode_ids}::text[]))`;
  } else if (scope.filter) {
    episodeFiles = sql`f.path in (select fe.path from file_episodes fe join episodes e on e.version_id = fe.version_id and e.episode_id = fe.episode_id
      where fe.version_id = ${versionId} and ${episodeFilter(sql, scope.filter)}
        ${options.withdrawals ? sql`and ${episodeNotWithdrawn(sql, versionId)}` : sql``})`;
  } else if (options.withdrawals) {
    // The whole version without the files that hold withdrawn episodes only.
    episodeFiles = sql`(not exists (select 1 from file_episodes fe where fe.version_id = ${versionId} and fe.path = f.path)
      or exists (select 1 from file_episodes fe where fe.version_id = ${versionId} and fe.path = f.path
        and not exists (select 1 from withdrawn_episodes w where w.version_id = ${versionId} and w.episode_id = fe.episode_id)))`;
  } else episodeFiles = sql`true`;
  return sql`f.version_id = ${versionId} and ((${episodeFiles} ${streams}) ${versionFiles})`;
}

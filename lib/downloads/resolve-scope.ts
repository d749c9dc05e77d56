import type { PendingQuery, Row } from "postgres";
import type { Sql } from "../db/client";
import type { RequestedScope } from "../db/schema";
import { fileColumns, type FileRecord } from "../catalog/get-manifest";
import { AppError } from "../errors";
import { MAX_FILES_PER_DOWNLOAD } from "./scope";

export type ResolvedScope = {
  files: FileRecord[];
  /** Distinct episodes whose files are in the download, in byte order. */
  episodeIds: string[];
  totalBytes: number;
};

const NAMED = 20;
const named = (values: string[]) => values.slice(0, NAMED).join(", ") + (values.length > NAMED ? ` (and ${values.length - NAMED} more)` : "");

/**
 * The files a requested scope covers in one version: the listed episodes, the episodes matching
 * the filter, or the whole version (including version-level files, which belong to no episode),
 * each narrowed to `streams` when given. Unknown streams or episode ids are named in a 400;
 * more than 10,000 files is a 422 asking the client to split.
 */
export async function resolveScope(
  sql: Sql,
  version: { versionId: number; datasetId: string; version: string },
  scope: RequestedScope,
): Promise<ResolvedScope> {
  const where = `${version.datasetId}@${version.version}`;
  if (scope.streams) {
    const [row] = await sql<{ streams: string[] }[]>`select streams from dataset_versions where id = ${version.versionId}`;
    const unknown = scope.streams.filter((s) => !row!.streams.includes(s));
    if (unknown.length) {
      throw new AppError("invalid_body", `Unknown streams for ${where}: ${named(unknown)}. Its streams are: ${row!.streams.join(", ")}.`);
    }
  }
  if (scope.episode_ids) {
    const found = await sql<{ episode_id: string }[]>`
      select episode_id from episodes where version_id = ${version.versionId} and episode_id = any(${scope.episode_ids}::text[])`;
    if (found.length !== scope.episode_ids.length) {
      const present = new Set(found.map((r) => r.episode_id));
      throw new AppError("invalid_body", `These episode_ids are not in ${where}: ${named(scope.episode_ids.filter((id) => !present.has(id)))}.`);
    }
  }

  const matching = filesInScope(sql, version.versionId, scope);
  const files = await sql<FileRecord[]>`
    select ${fileColumns(sql)}
    from files f where ${matching} order by f.path limit ${MAX_FILES_PER_DOWNLOAD + 1}`;
  if (files.length > MAX_FILES_PER_DOWNLOAD) {
    const [count] = await sql<{ n: number }[]>`select count(*)::int as n from files f where ${matching}`;
    throw new AppError(
      "scope_too_large",
      `This scope covers ${count!.n} files; a download holds at most ${MAX_FILES_PER_DOWNLOAD}. Split it into several requests by episode_ids, filter or streams.`,
    );
  }
  if (!files.length) throw new AppError("invalid_body", `The scope matches no files in ${where}; nothing would be downloaded.`);
  const episodeIds = [...new Set(files.map((f) => f.episode_id).filter((id): id is string => id !== null))].sort((a, b) =>
    Buffer.compare(Buffer.from(a), Buffer.from(b)),
  );
  return { files: [...files], episodeIds, totalBytes: files.reduce((sum, f) => sum + f.size_bytes, 0) };
}

/**
 * The condition on `files f` for a scope. Released versions never change, so a recorded scope
 * always resolves to the same files: replaying a download uses this same condition.
 */
export function filesInScope(sql: Sql, versionId: number, scope: RequestedScope): PendingQuery<Row[]> {
  const streams = scope.streams ? sql`and f.stream = any(${scope.streams}::text[])` : sql``;
  if (scope.episode_ids) return sql`f.version_id = ${versionId} and f.episode_id = any(${scope.episode_ids}::text[]) ${streams}`;
  if (scope.filter) {
    const { outcome, environment } = scope.filter;
    return sql`f.version_id = ${versionId} and f.episode_id in (
      select episode_id from episodes where version_id = ${versionId}
        ${outcome === undefined ? sql`` : sql`and outcome = ${outcome}`}
        ${environment === undefined ? sql`` : sql`and environment = ${environment}`}) ${streams}`;
  }
  return sql`f.version_id = ${versionId} ${streams}`;
}

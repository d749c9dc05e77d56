import type { PendingQuery, Row } from "postgres";
import type { Sql } from "../db/client";
import { AppError } from "../errors";
import type { Refusal } from "../disclosures/append";

/**
 * Withdrawn episodes (lib/withdrawals) leave every read at the commit of their withdrawal. The
 * rules, each applied where a read decides what it selects:
 * - lists, totals and manifests leave withdrawn episodes and every file holding one out (the
 *   totals in lib/catalog/access.ts's `releasedVersions`, the rows with the conditions below);
 * - a licensed caller naming a withdrawn episode gets 410 `episode_withdrawn` (others still 404);
 * - a download or preview that would deliver a file shared with a withdrawn episode is refused
 *   with 422 `withdrawn_content`, naming the files and the episodes.
 * - an entry of the disclosure log whose episode was withdrawn after its request resolved its
 *   scope is not appended (`withdrawnMeanwhile`), and the request is made again.
 * Each condition is added only for a version that has withdrawals, so the reads of every other
 * version keep their plans.
 */

/**
 * The log's refusal of an entry disclosing an episode withdrawn since its request resolved its
 * scope. A withdrawal computes its notices under the chain's lock, where the append evaluates
 * this, so an entry the withdrawal did not see never leaves: every entry that discloses episodes
 * names it. Asked again, the request sees the withdrawal (410 or 422).
 */
export const withdrawnMeanwhile: Refusal = {
  name: "an episode withdrawn meanwhile",
  when: (sql) => sql`exists (
    select 1 from disclosed d join withdrawn_episodes w on w.version_id = d.version_id and w.episode_id = d.episode_id
    where d.ord = i.ord)`,
};

/** `e` (an `episodes` row of version `versionId`) is not withdrawn. */
export const episodeNotWithdrawn = (sql: Sql, versionId: number): PendingQuery<Row[]> =>
  sql`not exists (select 1 from withdrawn_episodes w where w.version_id = ${versionId} and w.episode_id = e.episode_id)`;

/** `f` (a `files` row) holds no withdrawn episode. */
export const fileHoldsNoWithdrawn = (sql: Sql): PendingQuery<Row[]> =>
  sql`not exists (select 1 from file_episodes fe join withdrawn_episodes w on w.version_id = fe.version_id and w.episode_id = fe.episode_id
    where fe.version_id = f.version_id and fe.path = f.path)`;

/** Which of `episodeIds` are withdrawn from the version, in byte order. */
export async function withdrawnAmong(sql: Sql, versionId: number, episodeIds: readonly string[]): Promise<string[]> {
  if (!episodeIds.length) return [];
  const rows = await sql<{ episode_id: string }[]>`
    select episode_id from withdrawn_episodes
    where version_id = ${versionId} and episode_id = any(${episodeIds as string[]}::text[]) order by episode_id`;
  return rows.map((r) => r.episode_id);
}

/** When an episode was withdrawn (from any version), for the 410's message. */
export async function withdrawnAt(sql: Sql, episodeId: string): Promise<Date | undefined> {
  const [row] = await sql<{ at: Date }[]>`
    select min(x.withdrawn_at) as at from withdrawn_episodes w join withdrawals x on x.id = w.withdrawal_id
    where w.episode_id = ${episodeId} having count(*) > 0`;
  return row?.at;
}

export function episodeWithdrawn(episodeId: string, at: Date | undefined): AppError {
  return new AppError(
    "episode_withdrawn",
    `Episode '${episodeId}' was withdrawn${at ? ` on ${at.toISOString()}` : ""} and is no longer available in any version.`,
  );
}

const NAMED = 20;
const named = (values: readonly string[]) =>
  values.slice(0, NAMED).join(", ") + (values.length > NAMED ? ` (and ${values.length - NAMED} more)` : "");

/**
 * Refuses delivering files that hold withdrawn episodes: a file packing several episodes (LeRobot
 * v3.0) cannot be cut, so a request for its other episodes is refused too, and says which files
 * and which withdrawn episodes stand in the way.
 */
export async function refuseWithdrawnContent(
  sql: Sql,
  versionId: number,
  files: readonly { path: string; episode_ids: readonly string[] }[],
): Promise<void> {
  refuseFilesHolding(
    files,
    new Set(await withdrawnAmong(sql, versionId, [...new Set(files.flatMap((f) => f.episode_ids))])),
  );
}

/** `refuseWithdrawnContent` with the withdrawn episodes already known (`withdrawn` may hold others too). */
export function refuseFilesHolding(
  files: readonly { path: string; episode_ids: readonly string[] }[],
  withdrawn: ReadonlySet<string>,
): void {
  if (!withdrawn.size) return;
  const blocked = files.filter((f) => f.episode_ids.some((id) => withdrawn.has(id))).map((f) => f.path);
  if (!blocked.length) return;
  const held = new Set(files.flatMap((f) => f.episode_ids));
  throw new AppError(
    "withdrawn_content",
    `${blocked.length} file${blocked.length === 1 ? "" : "s"} of this request also hold${blocked.length === 1 ? "s" : ""} withdrawn episodes and ${blocked.length === 1 ? "is" : "are"} not delivered: ${named(blocked)} (withdrawn: ${named([...withdrawn].filter((id) => held.has(id)))}). Leave those episodes' files out (episode_ids or filter) to download the rest.`,
  );
}

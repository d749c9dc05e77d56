import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { CacheableRead } from "../cache/cacheable";
import { requireLicensedVersion } from "./access";
import type { VersionFormat } from "./version-format";
import { fileHoldsNoWithdrawn } from "./withdrawn";
import { copiesNotReady, licenceCopiesOf } from "../fingerprints/delivered";

export type FileRecord = {
  path: string;
  /** The episode when the file holds exactly one, else null. */
  episode_id: string | null;
  /** Every episode the file holds, in byte order; [] for a file of the whole version. */
  episode_ids: string[];
  stream: string | null;
  size_bytes: number;
  sha256: string;
  media_type: string;
};

export type ManifestHead = {
  dataset_id: string;
  version: string;
  released_at: string;
  episode_count: number;
  total_bytes: number;
  streams: string[];
  /** A version imported from a LeRobot dataset: its facts (as in the versions list), so a client knows what to write. */
  format?: VersionFormat;
};

export type ManifestDocument = ManifestHead & { files: FileRecord[] };

/**
 * A file row as the API shows it, for queries over `files f`. size_bytes as float8: exact below
 * 2^53 bytes, and a JSON number. episode_ids from file_episodes, the one record of which episodes
 * a file holds; a file of one episode has it in `files.episode_id` already (the importer sets it
 * exactly then), which spares the lookup for most files: a 10,000-file download took 20-50 ms
 * longer with a lookup for every file.
 */
export const fileColumns = (sql: Sql) => sql`f.path, f.episode_id,
  case when f.episode_id is not null then array[f.episode_id]
       else array(select fe.episode_id from file_episodes fe where fe.version_id = f.version_id and fe.path = f.path order by fe.episode_id) end as episode_ids,
  f.stream, f.size_bytes::float8 as size_bytes, f.sha256, f.media_type`;

/**
 * A licensed version's manifest. Files come as an async iterable read in keyset batches by path,
 * so a version with hundreds of thousands of files is served with flat memory. A small manifest
 * (at most one batch of files) can also be had `whole`, as one document a cache may keep.
 */
export type Manifest = {
  head: ManifestHead;
  files: AsyncIterable<FileRecord>;
  whole: CacheableRead<ManifestDocument> | null;
};

const BATCH = 2000;

export async function getManifest(ctx: Ctx, input: { datasetId: string; version: string }): Promise<Manifest> {
  const version = await requireLicensedVersion(ctx, input.datasetId, input.version);
  // Withdrawn episodes leave the manifest with every file that holds one: none of them is delivered.
  const withdrawals = version.withdrawnEpisodes > 0;
  // A fingerprinted version's manifest is the caller's licence's: its copies' sha256s and sizes,
  // which `das pull` verifies against; refused (503) while any copy is still being made.
  const copies = version.fingerprinted
    ? await copiesSummary(ctx, version.versionId, version.licenceId, withdrawals)
    : null;
  const head: ManifestHead = {
    dataset_id: input.datasetId,
    version: input.version,
    released_at: version.releasedAt.toISOString(),
    episode_count: version.episodeCount,
    total_bytes: version.totalBytes + (copies?.extraBytes ?? 0),
    streams: version.streams,
    ...(version.format ? { format: version.format } : {}),
  };
  const files = () => {
    const originals = versionFiles(ctx, version.versionId, withdrawals);
    return copies ? asCopies(ctx, version.licenceId, originals) : originals;
  };
  const whole =
    version.fileCount <= BATCH
      ? new CacheableRead(
          copies ? ["manifest", version.versionId, version.licenceId] : ["manifest", version.versionId],
          async () => {
            const all: FileRecord[] = [];
            for await (const file of files()) all.push(file);
            return { ...head, files: all };
          },
        )
      : null;
  return { head, files: files(), whole };
}

/** Whether every file the manifest lists has the licence's copy, and how many bytes the copies add. */
async function copiesSummary(
  ctx: Ctx,
  versionId: number,
  licenceId: string,
  withdrawals: boolean,
): Promise<{ extraBytes: number }> {
  const sql = sqlOf(ctx.db);
  const [row] = await sql<{ files: number; missing: number; extra: number }[]>`
    select count(*)::int as files, count(*) filter (where c.path is null)::int as missing,
           coalesce(sum(c.size_bytes - f.size_bytes), 0)::float8 as extra
    from files f left join licence_copies c on c.licence_id = ${licenceId} and c.path = f.path
    where f.version_id = ${versionId} ${withdrawals ? sql`and ${fileHoldsNoWithdrawn(sql)}` : sql``}`;
  if (row!.missing) throw copiesNotReady(row!.missing, row!.files);
  return { extraBytes: row!.extra };
}

/** The files as the licence's copies, a batch at a time. */
async function* asCopies(ctx: Ctx, licenceId: string, files: AsyncIterable<FileRecord>): AsyncGenerator<FileRecord> {
  let batch: FileRecord[] = [];
  const copies = async () =>
    (await licenceCopiesOf(sqlOf(ctx.db), licenceId, batch)).map(({ objectKey: _, ...file }) => file);
  for await (const file of files) {
    batch.push(file);
    if (batch.length < BATCH) continue;
    yield* await copies();
    batch = [];
  }
  if (batch.length) yield* await copies();
}

/** Every file of a version, in path order; with `withdrawals`, those holding no withdrawn episode. */
export async function* versionFiles(ctx: Ctx, versionId: number, withdrawals = false): AsyncGenerator<FileRecord> {
  const sql = sqlOf(ctx.db);
  let after: string | null = null;
  for (;;) {
    const batch: FileRecord[] = await sql<FileRecord[]>`
      select ${fileColumns(sql)} from files f
      where f.version_id = ${versionId} and (${after}::text is null or f.path > ${after})
        ${withdrawals ? sql`and ${fileHoldsNoWithdrawn(sql)}` : sql``}
      order by f.path limit ${BATCH}`;
    yield* batch;
    if (batch.length < BATCH) return;
    after = batch.at(-1)!.path;
  }
}

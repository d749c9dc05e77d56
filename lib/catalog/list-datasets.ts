import { createHash } from "node:crypto";
import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { decodeCursor, encodeCursor, queryBinding } from "../cursor";
import { usableLicences } from "./access";
import { CacheableRead } from "../cache/cacheable";
import { AppError, NOT_VISIBLE } from "../errors";
import { DATASET_ID_PATTERN } from "./identifiers";

export type DatasetRecord = {
  dataset_id: string;
  title: string;
  description: string;
  licensed_versions: string[];
  latest_licensed_version: string;
  updated_at: string;
};

export type ListDatasetsInput = { limit: number; cursor?: string };

type DatasetRow = { id: string; title: string; description: string; updated_at: Date; versions: string[] };

const toRecord = (row: DatasetRow): DatasetRecord => ({
  dataset_id: row.id,
  title: row.title,
  description: row.description,
  licensed_versions: row.versions,
  latest_licensed_version: row.versions[0]!,
  updated_at: row.updated_at.toISOString(),
});

export type DatasetList = { datasets: DatasetRecord[]; next_cursor: string | null };

/** The caller's usable versions, in a fixed order (the same set is the same key). */
async function usableVersionIds(ctx: Ctx): Promise<number[]> {
  return [...(await usableLicences(ctx)).keys()].sort((a, b) => a - b);
}

/**
 * The datasets in which the caller holds a licence for at least one version, by dataset_id. The page
 * depends on the caller only through the set of versions it may use.
 */
export async function datasetsPage(ctx: Ctx, input: ListDatasetsInput): Promise<CacheableRead<DatasetList>> {
  const binding = queryBinding(["datasets"]);
  const after = input.cursor ? decodeCursor(input.cursor, binding, ["string"])[0] : null;
  const versionIds = await usableVersionIds(ctx);
  const holding = createHash("sha256").update(versionIds.join(",")).digest("base64url");
  return new CacheableRead(["datasets", holding, after, input.limit], async () => {
    const sql = sqlOf(ctx.db);
    const rows = await sql<DatasetRow[]>`
      select d.id, d.title, d.description, d.updated_at,
             array_agg(v.version order by v.major desc, v.minor desc, v.patch desc) as versions
      from datasets d
      join dataset_versions v on v.dataset_id = d.id
      where v.id = any(${versionIds}::int[]) and (${after}::text is null or d.id > ${after})
      group by d.id
      order by d.id
      limit ${input.limit + 1}`;
    const page = rows.slice(0, input.limit);
    const last = page.at(-1);
    return {
      datasets: page.map(toRecord),
      next_cursor: rows.length > input.limit && last ? encodeCursor(binding, [last.id]) : null,
    };
  });
}

export async function listDatasets(ctx: Ctx, input: ListDatasetsInput): Promise<DatasetList> {
  return (await datasetsPage(ctx, input)).read();
}

/** One dataset the caller holds a licence for, in the same shape as the list's records. */
export async function getDataset(ctx: Ctx, datasetId: string): Promise<DatasetRecord> {
  const sql = sqlOf(ctx.db);
  const [row] = DATASET_ID_PATTERN.test(datasetId)
    ? await sql<DatasetRow[]>`
        select d.id, d.title, d.description, d.updated_at,
               array_agg(v.version order by v.major desc, v.minor desc, v.patch desc) as versions
        from datasets d
        join dataset_versions v on v.dataset_id = d.id
        where d.id = ${datasetId} and v.id = any(${await usableVersionIds(ctx)}::int[])
        group by d.id`
    : [];
  if (!row) throw new AppError("not_found", NOT_VISIBLE.dataset);
  return toRecord(row);
}

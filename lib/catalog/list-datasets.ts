import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { decodeCursor, encodeCursor, queryBinding } from "../cursor";
import { usableLicence } from "./access";
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

const toRecord = (row: { id: string; title: string; description: string; updated_at: Date; versions: string[] }): DatasetRecord => ({
  dataset_id: row.id,
  title: row.title,
  description: row.description,
  licensed_versions: row.versions,
  latest_licensed_version: row.versions[0]!,
  updated_at: row.updated_at.toISOString(),
});

/** The datasets in which the caller holds a licence for at least one version, by dataset_id. */
export async function listDatasets(ctx: Ctx, input: ListDatasetsInput): Promise<{ datasets: DatasetRecord[]; next_cursor: string | null }> {
  const sql = sqlOf(ctx.db);
  const binding = queryBinding(["datasets"]);
  const after = input.cursor ? decodeCursor(input.cursor, binding, ["string"])[0] : null;
  const rows = await sql<{ id: string; title: string; description: string; updated_at: Date; versions: string[] }[]>`
    select d.id, d.title, d.description, d.updated_at,
           -- one active licence per organisation and version, so no version appears twice
           array_agg(v.version order by v.major desc, v.minor desc, v.patch desc) as versions
    from datasets d
    join dataset_versions v on v.dataset_id = d.id
    join licences l on l.version_id = v.id and ${usableLicence(sql, ctx.principal)}
    where (${after}::text is null or d.id > ${after})
    group by d.id
    order by d.id
    limit ${input.limit + 1}`;
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    datasets: page.map(toRecord),
    next_cursor: rows.length > input.limit && last ? encodeCursor(binding, [last.id]) : null,
  };
}


/** One dataset the caller holds a licence for, in the same shape as the list's records. */
export async function getDataset(ctx: Ctx, datasetId: string): Promise<DatasetRecord> {
  const sql = sqlOf(ctx.db);
  const [row] = DATASET_ID_PATTERN.test(datasetId)
    ? await sql<{ id: string; title: string; description: string; updated_at: Date; versions: string[] }[]>`
        select d.id, d.title, d.description, d.updated_at,
               array_agg(v.version order by v.major desc, v.minor desc, v.patch desc) as versions
        from datasets d
        join dataset_versions v on v.dataset_id = d.id
        join licences l on l.version_id = v.id and ${usableLicence(sql, ctx.principal)}
        where d.id = ${datasetId}
        group by d.id`
    : [];
  if (!row) throw new AppError("not_found", NOT_VISIBLE.dataset);
  return toRecord(row);
}

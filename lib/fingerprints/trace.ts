import { createHash } from "node:crypto";
import type { S3Client } from "@aws-sdk/client-s3";
import type { Ctx } from "../context";
import { requireReviewer } from "../auth/authorize";
import { sqlOf, type Sql } from "../db/client";
import { requireEnv } from "../env";
import { getObjectBytes, s3Client } from "../storage/client";
import { objectKey, storeLocation } from "../storage/config";
import { CellsError, csvCells, mergeCells, parquetCells, type FrameCells } from "../marks/cells";
import { markKey } from "../marks/key";
import { ParquetFormatError, parquetLayout } from "../marks/parquet-layout";
import { copyTokenOf } from "../marks/parquet-mark";
import { trailerToken } from "../marks/trailer";
import { compareCells, DEFAULT_ALPHA, testLicences, type Comparison, type Verdict } from "../marks/trace";

/**
 * Which licence a leaked file came from (`das-admin trace FILE...`), for reviewers and admins:
 *
 * 1. by its sha256: a licence's copy delivered as it was (and the downloads that delivered it), or
 *    an original (a version delivered without fingerprinting: no licence can be told);
 * 2. by the token a copy carries while its key/value metadata or its trailer survives;
 * 3. for a frame table changed in any other way (parquet or CSV): by comparing its float cells with
 *    the original's and testing every licence of the version's mark (lib/marks/trace.ts), with a
 *    p-value; "no licence" when none passes.
 */

export type TracedLicence = {
  licence_id: string;
  organization_id: string;
  organization_slug: string;
  organization_name: string;
  dataset_id: string;
  version: string;
  revoked: boolean;
  /** The downloads and previews that delivered this licence's copies of the file(s) traced. */
  deliveries: { id: string; occurred_at: string; channel: string; api_key_id: string | null; user_id: string | null }[];
};

export type MarkEvidence = {
  /** p-value, and log10 of it (p-values below 1e-300 print as 0), after multiplying by the licences tested. */
  p_value: number;
  log10_p_value: number;
  /** Moved cells the licence's key chooses, and how many moved its way. */
  chosen_cells: number;
  agreeing_cells: number;
};

export type FileTrace = {
  file: string;
  sha256: string;
  size_bytes: number;
  verdict: "copy" | "token" | "mark" | "original" | "no licence" | "not traced";
  /** What was found, in a sentence. */
  detail: string;
  /** The licences named (several: a coalition's averaged copy). */
  licences: (TracedLicence & { path: string | null; mark?: MarkEvidence })[];
  /** For a mark test: what was compared, and the strongest licences not named. */
  comparison?: {
    dataset_id: string;
    version: string;
    original_files: string[];
    rows: number;
    matched_rows: number;
    compared_cells: number;
    unchanged_cells: number;
    moved_cells: number;
    far_cells: number;
    alignment: "indices" | "values";
    licences_tested: number;
    alpha: number;
    strongest_others: ({ licence_id: string } & MarkEvidence)[];
  };
};

/** The most original bytes a trace reads to find renumbered episodes by their values. */
export const MAX_ORIGINAL_BYTES = 2 * 1024 ** 3;

/**
 * A file to trace: its bytes, or for one too large to hold (a long video), its sha256, size and
 * last bytes, which is all a verbatim copy or a trailer needs.
 */
export type TraceInput =
  | { name: string; bytes: Uint8Array }
  | { name: string; sha256: string; size: number; tail: Uint8Array };

export async function traceFile(ctx: Ctx, input: TraceInput, options: { alpha?: number } = {}): Promise<FileTrace> {
  requireReviewer(ctx);
  const sql = sqlOf(ctx.db);
  const sha256 = "bytes" in input ? createHash("sha256").update(input.bytes).digest("hex") : input.sha256;
  const base = { file: input.name, sha256, size_bytes: "bytes" in input ? input.bytes.length : input.size };
  const copy = await copiesWhere(sql, sql`c.sha256 = ${sha256}`);
  if (copy.length)
    return {
      ...base,
      verdict: "copy",
      detail: `a licence's copy, byte for byte: ${copy[0]!.path} of ${copy[0]!.dataset_id}@${copy[0]!.version}`,
      licences: copy,
    };
  const rendered = await deliveredTo(sql, sha256);
  if (rendered.length)
    return {
      ...base,
      verdict: "copy",
      detail: `a licence's copy, byte for byte: ${rendered[0]!.path} of ${rendered[0]!.dataset_id}@${rendered[0]!.version}, rendered for its view`,
      licences: rendered,
    };
  const tokened = await byToken(
    sql,
    "bytes" in input ? input.bytes : null,
    "bytes" in input ? input.bytes : input.tail,
  );
  if (tokened.length)
    return {
      ...base,
      verdict: "token",
      detail: `a changed copy that still carries its licence's token for ${tokened[0]!.path}`,
      licences: tokened,
    };
  const originals = await sql<{ dataset_id: string; version: string; path: string }[]>`
    select v.dataset_id, v.version, f.path from files f join dataset_versions v on v.id = f.version_id
    where f.sha256 = ${sha256} order by v.dataset_id, v.version, f.path limit 5`;
  if (originals.length)
    return {
      ...base,
      verdict: "original",
      detail: `the original bytes of ${originals.map((o) => `${o.path} of ${o.dataset_id}@${o.version}`).join(", ")}: delivered without fingerprinting, so no licence can be told from them`,
      licences: [],
    };
  const table = !("bytes" in input)
    ? null
    : /\.csv$/i.test(input.name)
      ? "csv"
      : isParquet(input.bytes)
        ? "parquet"
        : null;
  if (!table || !("bytes" in input))
    return {
      ...base,
      verdict: "not traced",
      detail:
        "neither a copy nor an original, and no frame table: a re-encoded video or a changed file carries no mark (per-frame video marks are a later step)",
      licences: [],
    };
  return traceTable(sql, base, input, table, options.alpha ?? DEFAULT_ALPHA);
}

const isParquet = (bytes: Uint8Array) =>
  bytes.length > 12 && Buffer.from(bytes.subarray(0, 4)).toString("latin1") === "PAR1";

async function copiesWhere(sql: Sql, condition: ReturnType<Sql>): Promise<FileTrace["licences"]> {
  const rows = await sql<(Omit<TracedLicence, "deliveries"> & { path: string; sha256: string })[]>`
    select c.licence_id, o.id as organization_id, o.slug as organization_slug, o.name as organization_name,
           v.dataset_id, v.version, l.revoked_at is not null as revoked, c.path, c.sha256
    from licence_copies c join licences l on l.id = c.licence_id join organizations o on o.id = l.organization_id
    join dataset_versions v on v.id = c.version_id
    where ${condition} order by c.licence_id, c.path limit 20`;
  const out: FileTrace["licences"] = [];
  for (const { sha256, ...row } of rows) out.push({ ...row, deliveries: await deliveriesOf(sql, [sha256]) });
  return out;
}

/**
 * The licences the log says received these bytes, for a copy made for a delivery rather than kept
 * in licence_copies: a fingerprinted view's meta/, rendered with the licence's tokens
 * (lib/views/render.ts). Every delivery of a copy names its sha256 (decision 0133).
 */
async function deliveredTo(sql: Sql, sha256: string): Promise<FileTrace["licences"]> {
  const rows = await sql<(Omit<TracedLicence, "deliveries"> & { path: string })[]>`
    select distinct on (d.licence_id) d.licence_id, o.id as organization_id, o.slug as organization_slug,
           o.name as organization_name, d.dataset_id, d.version, l.revoked_at is not null as revoked, f.path
    from disclosure_files f join disclosures d on d.id = f.disclosure_id and d.occurred_at = f.occurred_at
    join licences l on l.id = d.licence_id join organizations o on o.id = l.organization_id
    where f.sha256 = ${sha256} order by d.licence_id, d.seq limit 20`;
  // The bytes carry one licence's tokens, so every delivery of them is that licence's.
  const deliveries = rows.length ? await deliveriesOf(sql, [sha256]) : [];
  return rows.map((row) => ({ ...row, deliveries }));
}

/**
 * The entries of the log that delivered any of these copies: the online months' (a file row is in
 * its entry's month, migration 0026; an archived month's are in its archive).
 */
async function deliveriesOf(sql: Sql, sha256s: string[]): Promise<TracedLicence["deliveries"]> {
  const rows = await sql<
    { id: string; occurred_at: Date; channel: string; api_key_id: string | null; user_id: string | null }[]
  >`
    select distinct d.id, d.occurred_at, d.channel, d.api_key_id, d.user_id, d.seq
    from disclosure_files f join disclosures d on d.id = f.disclosure_id and d.occurred_at = f.occurred_at
    where f.sha256 = any(${sha256s}::text[]) order by d.seq limit 1000`;
  return rows.map((r) => ({
    id: r.id,
    occurred_at: r.occurred_at.toISOString(),
    channel: r.channel,
    api_key_id: r.api_key_id,
    user_id: r.user_id,
  }));
}

/** A copy's token, where it survived: a parquet file's key/value entry, or a trailer at the end. */
async function byToken(sql: Sql, bytes: Uint8Array | null, end: Uint8Array): Promise<FileTrace["licences"]> {
  let token: string | null = null;
  if (bytes && isParquet(bytes)) {
    try {
      token = copyTokenOf(parquetLayout(bytes));
    } catch (error) {
      if (!(error instanceof ParquetFormatError)) throw error;
    }
  } else token = trailerToken(end.subarray(Math.max(0, end.length - 4096)))?.toString("hex") ?? null;
  if (!token || !/^[0-9a-f]{32}$/.test(token)) return [];
  return copiesWhere(sql, sql`c.token = ${token}`);
}

type Base = Pick<FileTrace, "file" | "sha256" | "size_bytes">;

/** The mark test of a frame table against each fingerprinted version its rows could come from. */
async function traceTable(
  sql: Sql,
  base: Base,
  input: { name: string; bytes: Uint8Array },
  kind: "csv" | "parquet",
  alpha: number,
): Promise<FileTrace> {
  const text = kind === "csv" ? new TextDecoder().decode(input.bytes) : "";
  let leaked: FrameCells;
  try {
    leaked = kind === "csv" ? csvCells(text, []) : await parquetCells(input.bytes);
  } catch (error) {
    if (!(error instanceof CellsError || error instanceof ParquetFormatError)) throw error;
    return {
      ...base,
      verdict: "not traced",
      detail: `not a frame table that can be traced: ${error.message}`,
      licences: [],
    };
  }
  const episodes = [...new Set(leaked.episodes)].filter((e) => !Number.isNaN(e)).slice(0, 100_000);
  const versions = await sql<{ id: number; dataset_id: string; version: string }[]>`
    select v.id, v.dataset_id, v.version from dataset_versions v
    where v.source_format = 'lerobot' and exists (select 1 from licence_copies c where c.version_id = v.id)
    order by v.imported_at desc`;
  const client = s3Client(storeLocation());
  // Rows can match several versions' originals (a later version keeping earlier episodes, one
  // dataset imported twice): the first whose licences' marks pass is where they left from, so a
  // version that names no licence does not end the search. Each version's test is adjusted for its
  // own licences; over V matching versions the chance of naming an innocent one is at most V·alpha.
  let unnamed: FileTrace | null = null;
  try {
    for (const version of versions) {
      const original = await originalsFor(sql, client, version, episodes, false);
      if (!original) continue;
      const load = (cells: FrameCells) => (kind === "csv" ? csvCells(text, cells.columns.keys()) : leaked);
      let comparison = compareCells(original.cells, load(original.cells));
      let files = original.files;
      if (!matches(comparison)) {
        // Renumbered episodes (a das pull of a LeRobot v3.0 subset): every data file, found by values.
        const all = await originalsFor(sql, client, version, episodes, true);
        if (!all) continue;
        comparison = compareCells(all.cells, load(all.cells));
        files = all.files;
      }
      if (!matches(comparison)) continue;
      const verdict = await markVerdict(sql, base, version, files, comparison, alpha);
      if (verdict.licences.length) return verdict;
      unnamed ??= verdict;
    }
  } finally {
    client.destroy();
  }
  if (unnamed) return unnamed;
  return {
    ...base,
    verdict: "no licence",
    detail:
      "its rows match no fingerprinted version's data files: not from a fingerprinted version, or too changed to tell",
    licences: [],
  };
}

/** Rows found and mostly unchanged or moved by at most the mark's reach: this is the version the rows come from. */
const matches = (c: Comparison) => c.compared > 0 && (c.unchanged + c.moved) / c.compared >= 0.5;

async function originalsFor(
  sql: Sql,
  client: S3Client,
  version: { id: number; dataset_id: string; version: string },
  episodes: number[],
  all: boolean,
): Promise<{ cells: FrameCells; files: string[] } | null> {
  const ids = episodes.map((e) => `${version.dataset_id}-${String(e).padStart(6, "0")}`);
  const files = await sql<{ path: string; size_bytes: number }[]>`
    select distinct f.path, f.size_bytes::float8 as size_bytes from files f
    ${all ? sql`` : sql`join file_episodes fe on fe.version_id = f.version_id and fe.path = f.path`}
    where f.version_id = ${version.id} and f.stream = 'data' and f.path like '%.parquet'
      ${all ? sql`` : sql`and fe.episode_id = any(${ids}::text[])`}
    order by f.path`;
  if (!files.length || files.reduce((n, f) => n + f.size_bytes, 0) > MAX_ORIGINAL_BYTES) return null;
  const { bucket } = storeLocation();
  const parts: FrameCells[] = [];
  for (const f of files) {
    const bytes = await getObjectBytes(client, bucket, objectKey(version.dataset_id, version.version, f.path));
    parts.push(await parquetCells(new Uint8Array(bytes)));
  }
  return { cells: mergeCells(parts), files: files.map((f) => f.path) };
}

async function markVerdict(
  sql: Sql,
  base: Base,
  version: { id: number; dataset_id: string; version: string },
  files: string[],
  comparison: Comparison,
  alpha: number,
): Promise<FileTrace> {
  const licences = await sql<Omit<TracedLicence, "deliveries">[]>`
    select l.id as licence_id, o.id as organization_id, o.slug as organization_slug, o.name as organization_name,
           v.dataset_id, v.version, l.revoked_at is not null as revoked
    from licences l join organizations o on o.id = l.organization_id join dataset_versions v on v.id = l.version_id
    where l.version_id = ${version.id}
    order by l.id`;
  const secret = requireEnv("APP_SECRET");
  const verdicts = testLicences(
    comparison,
    licences.map((l) => ({ licenceId: l.licence_id, key: markKey(secret, l.licence_id) })),
    alpha,
  );
  const named: FileTrace["licences"] = [];
  for (const v of verdicts.filter((x) => x.named)) {
    const copies = await sql<{ sha256: string }[]>`
      select sha256 from licence_copies where licence_id = ${v.licenceId} and path = any(${files}::text[])`;
    named.push({
      ...licences.find((l) => l.licence_id === v.licenceId)!,
      path: files.length === 1 ? files[0]! : null,
      mark: evidenceOf(v),
      deliveries: await deliveriesOf(
        sql,
        copies.map((c) => c.sha256),
      ),
    });
  }
  const where = `${version.dataset_id}@${version.version}`;
  return {
    ...base,
    verdict: named.length ? "mark" : "no licence",
    detail: named.length
      ? `rows of ${where} carrying the mark of ${named.map((l) => `${l.licence_id} (${l.organization_slug})`).join(" and ")}`
      : `rows of ${where}, but no licence's mark passes (p >= ${alpha}): the original, or changed beyond the mark's reach`,
    licences: named,
    comparison: {
      dataset_id: version.dataset_id,
      version: version.version,
      original_files: files,
      ...comparisonFigures(comparison),
      licences_tested: licences.length,
      alpha,
      strongest_others: verdicts
        .filter((v) => !v.named)
        .slice(0, 5)
        .map((v) => ({ licence_id: v.licenceId, ...evidenceOf(v) })),
    },
  };
}

const evidenceOf = (v: Verdict): MarkEvidence => ({
  p_value: 10 ** v.log10Adjusted,
  log10_p_value: v.log10Adjusted,
  chosen_cells: v.chosen,
  agreeing_cells: v.agreeing,
});

const comparisonFigures = (c: Comparison) => ({
  rows: c.leakedRows,
  matched_rows: c.matchedRows,
  compared_cells: c.compared,
  unchanged_cells: c.unchanged,
  moved_cells: c.moved,
  far_cells: c.far,
  alignment: c.alignment,
});

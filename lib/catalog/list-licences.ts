import { createHash } from "node:crypto";
import type { Ctx } from "../context";
import { CacheableRead } from "../cache/cacheable";
import { sqlOf } from "../db/client";
import { decodeCursor, encodeCursor, queryBinding } from "../cursor";
import { usableLicences } from "./access";

export type LicenceRecord = {
  dataset_id: string;
  version: string;
  starts_at: string;
  ends_at: string | null;
  terms: { title: string; sha256: string } | null;
};

export type LicenceList = { licences: LicenceRecord[]; next_cursor: string | null };

export type ListLicencesInput = { limit: number; cursor?: string };

type LicenceRow = {
  dataset_id: string;
  version: string;
  major: number;
  minor: number;
  patch: number;
  starts_at: Date;
  ends_at: Date | null;
  terms_title: string | null;
  terms_sha256: string | null;
};

/**
 * The licences the caller may use now (the same rule as every catalog read: `usableLicences`), by
 * dataset and newest version first, each with its term and the terms it was granted under. The
 * page depends on the caller only through that set: a licence's term or terms change by an update
 * of `licences`, which flushes every instance's cache, and terms documents never change.
 */
export async function licencesPage(ctx: Ctx, input: ListLicencesInput): Promise<CacheableRead<LicenceList>> {
  const binding = queryBinding(["licences"]);
  const after = input.cursor ? decodeCursor(input.cursor, binding, ["string", "number", "number", "number"]) : null;
  const licenceIds = [...(await usableLicences(ctx)).values()].sort();
  const holding = createHash("sha256").update(licenceIds.join(",")).digest("base64url");
  return new CacheableRead(["licences", holding, after, input.limit], () =>
    readLicences(ctx, licenceIds, after, input.limit),
  );
}

export async function listLicences(ctx: Ctx, input: ListLicencesInput): Promise<LicenceList> {
  return (await licencesPage(ctx, input)).read();
}

async function readLicences(
  ctx: Ctx,
  licenceIds: string[],
  after: [string, number, number, number] | null,
  limit: number,
): Promise<LicenceList> {
  const binding = queryBinding(["licences"]);
  if (!licenceIds.length) return { licences: [], next_cursor: null };
  const sql = sqlOf(ctx.db);
  // Newest version first within a dataset: the key (dataset, -major, -minor, -patch) ascends.
  const rows = await sql<LicenceRow[]>`
    select v.dataset_id, v.version, v.major, v.minor, v.patch, l.starts_at, l.ends_at,
           t.title as terms_title, t.sha256 as terms_sha256
    from licences l
    join dataset_versions v on v.id = l.version_id
    left join terms_documents t on t.sha256 = l.terms_sha256
    where l.id = any(${licenceIds}::text[])
      and (${after === null}::boolean or (v.dataset_id, -v.major, -v.minor, -v.patch) > (${after?.[0] ?? ""}::text, ${-(after?.[1] ?? 0)}::int, ${-(after?.[2] ?? 0)}::int, ${-(after?.[3] ?? 0)}::int))
    order by v.dataset_id, v.major desc, v.minor desc, v.patch desc
    limit ${limit + 1}`;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    licences: page.map((r) => ({
      dataset_id: r.dataset_id,
      version: r.version,
      starts_at: r.starts_at.toISOString(),
      ends_at: r.ends_at?.toISOString() ?? null,
      terms: r.terms_sha256 ? { title: r.terms_title!, sha256: r.terms_sha256 } : null,
    })),
    next_cursor:
      rows.length > limit && last ? encodeCursor(binding, [last.dataset_id, last.major, last.minor, last.patch]) : null,
  };
}

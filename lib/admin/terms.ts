import { createHash } from "node:crypto";
import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { withTx } from "../db/tx";
import { AppError } from "../errors";
import { requireAdmin } from "../auth/authorize";
import { FREE_TEXT, WITHOUT_CONTROL_CHARACTERS } from "../characters";
import { DATASET_ID_PATTERN } from "../catalog/identifiers";
import { recordAdminAction } from "./audit";

export const TERMS_SHA256_PATTERN = /^[0-9a-f]{64}$/;
/** A terms document is a contract someone reads, not a data file. */
export const TERMS_MAX_BYTES = 1_000_000;

export type TermsRecord = {
  sha256: string;
  title: string;
  dataset_id: string | null;
  created_at: string;
  created_by: string;
  bytes: number;
};

export type TermsDocument = TermsRecord & { body: string };

type TermsRow = Omit<TermsRecord, "created_at"> & { created_at: Date };

const toRecord = <R extends TermsRow>(r: R) => ({ ...r, created_at: r.created_at.toISOString() });

/** Who added a document, as the admin audit names its actor. */
function actorLabel(ctx: Ctx): string {
  const p = ctx.principal;
  if (p.kind === "user") return p.email;
  if (p.kind === "operator") return `${p.name} (das-admin)`;
  return p.keyId;
}

/**
 * Adds a terms document, identified by the SHA-256 of its exact UTF-8 bytes (the database checks
 * the same). Adding the same text again returns the document already there, whatever its title:
 * the text is what a licence was granted under. Documents never change (migration 0016).
 */
export async function addTerms(
  ctx: Ctx,
  input: { title: string; body: string; datasetId?: string | null },
): Promise<{ document: TermsRecord; created: boolean }> {
  requireAdmin(ctx);
  const title = input.title.trim();
  if (!title || title.length > 200 || !WITHOUT_CONTROL_CHARACTERS.test(title))
    throw new AppError("invalid_parameter", "Terms need a title of 1 to 200 characters without control characters.");
  const bytes = Buffer.byteLength(input.body, "utf8");
  if (!input.body.trim()) throw new AppError("invalid_parameter", "The terms' text is empty.");
  if (bytes > TERMS_MAX_BYTES)
    throw new AppError("invalid_parameter", `The terms' text is ${bytes} bytes; at most ${TERMS_MAX_BYTES} are taken.`);
  if (!FREE_TEXT.test(input.body))
    throw new AppError(
      "invalid_parameter",
      "The terms' text must not contain control characters other than tabs and line breaks.",
    );
  const datasetId = input.datasetId ?? null;
  const sha256 = createHash("sha256").update(input.body, "utf8").digest("hex");
  return withTx(ctx, async (tx) => {
    const sql = sqlOf(tx.db);
    if (datasetId !== null) {
      const [dataset] = DATASET_ID_PATTERN.test(datasetId)
        ? await sql`select 1 from datasets where id = ${datasetId}`
        : [];
      if (!dataset) throw new AppError("not_found", `There is no dataset '${datasetId}'.`);
    }
    const [created] = await sql<TermsRow[]>`
      insert into terms_documents (sha256, title, body, dataset_id, created_by)
      values (${sha256}, ${title}, ${input.body}, ${datasetId}, ${actorLabel(tx)})
      on conflict (sha256) do nothing
      returning sha256, title, dataset_id, created_at, created_by, octet_length(body) as bytes`;
    if (!created) return { document: (await termsDocument(tx, sha256))!, created: false };
    await recordAdminAction(tx, "terms.add", sha256, { title, dataset_id: datasetId });
    return { document: toRecord(created), created: true };
  });
}

/** Every terms document, newest first, without its text. */
export async function listTerms(ctx: Ctx): Promise<TermsRecord[]> {
  requireAdmin(ctx);
  const rows = await sqlOf(ctx.db)<TermsRow[]>`
    select sha256, title, dataset_id, created_at, created_by, octet_length(body) as bytes
    from terms_documents order by created_at desc, sha256`;
  return rows.map(toRecord);
}

/** One terms document with its text, or undefined. */
export async function termsDocument(ctx: Ctx, sha256: string): Promise<TermsDocument | undefined> {
  requireAdmin(ctx);
  if (!TERMS_SHA256_PATTERN.test(sha256)) return undefined;
  const [row] = await sqlOf(ctx.db)<(TermsRow & { body: string })[]>`
    select sha256, title, body, dataset_id, created_at, created_by, octet_length(body) as bytes
    from terms_documents where sha256 = ${sha256}`;
  return row ? toRecord(row) : undefined;
}

/** The document, or a 404 that says how to find one. */
export async function requireTerms(ctx: Ctx, sha256: string): Promise<TermsDocument> {
  const found = await termsDocument(ctx, sha256);
  if (!found)
    throw new AppError(
      "not_found",
      `There is no terms document with SHA-256 '${sha256}'. das-admin terms list shows them; das-admin terms add adds one.`,
    );
  return found;
}

import type { PendingQuery, Row } from "postgres";
import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { withTx } from "../db/tx";
import type { AccessRequestStatus } from "../db/schema";
import { AppError } from "../errors";
import { newId } from "../ids";
import { FREE_TEXT } from "../characters";
import { PURPOSE_MAX } from "../admin/rules";
import { requireListedDataset, requireListedVersion, requireMember } from "./listing";

/**
 * Access requests as a licensee makes and follows them: for one version of a listed dataset, with
 * a purpose and the acceptance of the terms that apply. Admins decide them (lib/admin/access-requests.ts).
 */

export type ApplicableTerms = { sha256: string; title: string; body: string; dataset_id: string | null };

/**
 * The terms a request for the dataset is made under: the newest document for the dataset itself,
 * or else the newest document for any dataset; none when neither exists.
 */
export async function termsFor(sql: Sql, datasetId: string): Promise<ApplicableTerms | undefined> {
  const [terms] = await sql<ApplicableTerms[]>`
    select sha256, title, body, dataset_id from terms_documents
    where dataset_id = ${datasetId} or dataset_id is null
    order by (dataset_id is null), created_at desc, sha256
    limit 1`;
  return terms;
}

/** The terms a member accepts to request a version of a listed dataset (404 when it is not listed). */
export async function applicableTerms(ctx: Ctx, datasetId: string): Promise<ApplicableTerms | undefined> {
  await requireListedDataset(ctx, datasetId);
  return termsFor(sqlOf(ctx.db), datasetId);
}

export type RequestAccessInput = { datasetId: string; version: string; purpose: string; termsSha256: string };

/**
 * Records the member's acceptance of the applicable terms (append-only) and their organisation's
 * request for the version, in one transaction. The SHA-256 sent must be that of the terms in force
 * now: what was read is what is accepted. Refused for an unlisted dataset (404), a version the
 * organisation already holds, or one it already has a pending request for.
 */
export async function requestAccess(
  ctx: Ctx,
  input: RequestAccessInput,
): Promise<{ id: string; acceptance_id: string }> {
  requireMember(ctx);
  const purpose = input.purpose.trim();
  if (!purpose || purpose.length > PURPOSE_MAX || !FREE_TEXT.test(purpose))
    throw new AppError(
      "invalid_parameter",
      `Say what the data is for: 1 to ${PURPOSE_MAX} characters, without control characters other than tabs and line breaks.`,
    );
  const organizationId = ctx.principal.organizationId;
  const userId = ctx.principal.userId;
  return withTx(ctx, async (tx) => {
    const version = await requireListedVersion(tx, input.datasetId, input.version);
    const sql = sqlOf(tx.db);
    const terms = await termsFor(sql, input.datasetId);
    if (!terms)
      throw new AppError(
        "invalid_parameter",
        `No terms apply to dataset '${input.datasetId}' yet, so it cannot be requested. Ask an administrator to add them.`,
      );
    if (terms.sha256 !== input.termsSha256)
      throw new AppError(
        "invalid_parameter",
        "The terms have changed since you read them. Read the terms now in force and accept them again.",
      );
    const [held] = await sql`
      select 1 from licences where organization_id = ${organizationId} and version_id = ${version.versionId} and revoked_at is null`;
    if (held)
      throw new AppError(
        "invalid_parameter",
        `Your organisation already holds a licence for ${input.datasetId}@${input.version}.`,
      );
    const acceptanceId = newId("acc");
    await sql`
      insert into terms_acceptances (id, user_id, organization_id, terms_sha256)
      values (${acceptanceId}, ${userId}, ${organizationId}, ${terms.sha256})`;
    const [created] = await sql<{ id: string }[]>`
      insert into access_requests (id, organization_id, user_id, version_id, purpose, acceptance_id)
      values (${newId("areq")}, ${organizationId}, ${userId}, ${version.versionId}, ${purpose}, ${acceptanceId})
      on conflict (organization_id, version_id) where status = 'pending' do nothing
      returning id`;
    if (!created)
      throw new AppError(
        "invalid_parameter",
        `Your organisation already has a pending request for ${input.datasetId}@${input.version}.`,
      );
    return { id: created.id, acceptance_id: acceptanceId };
  });
}

export type AccessRequestRecord = {
  id: string;
  organization_id: string;
  organization_slug: string;
  requested_by: string;
  dataset_id: string;
  dataset_title: string;
  version: string;
  purpose: string;
  status: AccessRequestStatus;
  created_at: string;
  terms_sha256: string;
  terms_title: string;
  accepted_at: string;
  decided_at: string | null;
  decided_by: string | null;
  rejection_reason: string | null;
  licence_id: string | null;
  licence_starts_at: string | null;
  licence_ends_at: string | null;
};

type RequestRow = {
  [K in keyof AccessRequestRecord]: K extends `${string}_at` ? Date | null : AccessRequestRecord[K];
};

const iso = (d: Date | null) => d?.toISOString() ?? null;

export const toRequestRecord = (r: RequestRow): AccessRequestRecord => ({
  ...r,
  created_at: r.created_at!.toISOString(),
  accepted_at: r.accepted_at!.toISOString(),
  decided_at: iso(r.decided_at),
  licence_starts_at: iso(r.licence_starts_at),
  licence_ends_at: iso(r.licence_ends_at),
});

/** Access requests with everything a list shows, newest first, under a condition on `r`. */
export function selectRequests(sql: Sql, where: PendingQuery<Row[]>) {
  return sql<RequestRow[]>`
    select r.id, r.organization_id, o.slug as organization_slug, u.email as requested_by,
           v.dataset_id, d.title as dataset_title, v.version, r.purpose, r.status, r.created_at,
           a.terms_sha256, t.title as terms_title, a.accepted_at,
           r.decided_at, r.decided_by, r.rejection_reason, r.licence_id,
           l.starts_at as licence_starts_at, l.ends_at as licence_ends_at
    from access_requests r
    join organizations o on o.id = r.organization_id
    join users u on u.id = r.user_id
    join dataset_versions v on v.id = r.version_id
    join datasets d on d.id = v.dataset_id
    join terms_acceptances a on a.id = r.acceptance_id
    join terms_documents t on t.sha256 = a.terms_sha256
    left join licences l on l.id = r.licence_id
    where ${where}
    order by r.created_at desc, r.id
    limit 1000`;
}

/** The requests of the member's organisation, newest first, with each decision and rejection reason. */
export async function listOwnRequests(ctx: Ctx): Promise<AccessRequestRecord[]> {
  requireMember(ctx);
  const sql = sqlOf(ctx.db);
  return (await selectRequests(sql, sql`r.organization_id = ${ctx.principal.organizationId}`)).map(toRequestRecord);
}

import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import type { DisclosureChannel, RequestedScope } from "../db/schema";
import { AppError } from "../errors";
import { newLogId } from "../ids";
import { canonicalJson } from "../canonical-json";
import { requireLicensedVersion } from "../catalog/access";
import { cachedRead } from "../cache/read-cache";
import { withdrawnMeanwhile } from "../catalog/withdrawn";
import { appendToLog, notRecorded } from "../disclosures/append";
import { earlierEntry, isDuplicateKey, type Idempotency } from "../disclosures/idempotency";
import { episodesDigest, filesDigest, sha256Hex } from "../disclosures/chain";
import { deliveredFiles, type DeliveredFile } from "../fingerprints/delivered";
import type { FileRecord } from "../catalog/get-manifest";
import { URL_TTL_SECONDS } from "../storage/config";
import { issuedDownload, reissuedDownload, signFiles, type IssuedDownload, type SignedFiles } from "./download";
import { resolveScope } from "./resolve-scope";
import type { DownloadRequest } from "./scope";

export type CreateDownloadInput = { body: DownloadRequest; idempotencyKey?: string };

/** A download made (or, `replayed`, one made earlier with the same Idempotency-Key). */
export type CreatedDownload = IssuedDownload & { readonly replayed: boolean };

/**
 * A download: resolves the scope, appends its disclosure with its episodes to the log, and answers
 * its URLs only once that entry has committed. If the append fails the client gets 503 and no URL:
 * a disclosure that never reached its recipient is acceptable, a URL without one never is.
 * With an Idempotency-Key, a retry of the same body returns the same download (same id, same
 * URLs) without a second entry; another body under the same key is 409.
 */
export async function createDownload(ctx: Ctx, input: CreateDownloadInput): Promise<CreatedDownload> {
  const recipient = recipientOf(ctx);
  const requestedScope = scopeOf(input.body);
  const requestSha256 = sha256Hex(canonicalJson(input.body));
  const idempotency = input.idempotencyKey
    ? { scope: recipient.apiKeyId ?? recipient.userId!, key: input.idempotencyKey }
    : null;
  if (idempotency) {
    const earlier = await replay(ctx, idempotency, requestSha256);
    if (earlier) return made(earlier, true);
  }

  for (let attempt = 1; ; attempt++) {
    // A second attempt follows a withdrawal this instance may not have heard of yet: resolved afresh.
    const resolve = attempt === 1 ? "cached" : "afresh";
    const outcome = await recordAndSign(
      ctx,
      input.body,
      recipient,
      requestedScope,
      requestSha256,
      idempotency,
      resolve,
    );
    if ("download" in outcome) return made(outcome.download, false);
    // The same Idempotency-Key sent twice at once: the second append met the first's unique key.
    if (outcome.notAppended === "duplicate key" && idempotency) {
      const earlier = await replay(ctx, idempotency, requestSha256);
      if (earlier) return made(earlier, true);
    }
    // An episode was withdrawn between the scope's resolution and the append: resolved again,
    // the scope leaves it out or the request is refused for it.
    if (outcome.notAppended === "withdrawn meanwhile" && attempt === 1) continue;
    throw notRecorded("The download", outcome.cause);
  }
}

/**
 * Resolves the scope, appends its entry to the log (`appendToLog`, which writes its episodes with
 * it), and answers URLs only once that entry has committed. They are signed while it is appended
 * (decision 0148): the database writes the entry's rows while this process computes the URLs, a
 * slice at a time, for the second the entry will most likely get (this one). An entry of another
 * second has them signed again at its own, so that a replay signs the same URLs; those of an entry
 * not appended are dropped. Each way the append can fail is sorted here, once: an entry the log
 * refused for an episode withdrawn meanwhile, or one that met an entry with its Idempotency-Key,
 * comes back for `createDownload` to ask again or replay; any other failure of the append or of
 * the signing is a 503. The resolution's own refusals (404, 410, 422, ...) pass as they are.
 */
async function recordAndSign(
  ctx: Ctx,
  body: DownloadRequest,
  recipient: ReturnType<typeof recipientOf>,
  requestedScope: RequestedScope,
  requestSha256: string,
  idempotency: Idempotency | null,
  resolve: "cached" | "afresh",
): Promise<{ download: IssuedDownload } | { notAppended: "withdrawn meanwhile" | "duplicate key"; cause: unknown }> {
  const licensed = await requireLicensedVersion(ctx, body.dataset_id, body.version);
  const version = { ...licensed, datasetId: body.dataset_id };
  // A released version's scope resolves to the same files until an episode of it is withdrawn
  // (which flushes the instance's cache, and changes the count in the key): one whole version's
  // 10,000 rows were a quarter of a download's time, read again for every client pulling it.
  const resolveNow = () => resolveScope(sqlOf(ctx.db), version, requestedScope);
  const resolved =
    resolve === "cached"
      ? await cachedRead(
          ctx,
          "scopes",
          ["scope", licensed.versionId, licensed.withdrawnEpisodes, requestedScope],
          resolveNow,
        )
      : await resolveNow();
  // The caller's licence's own copies on a fingerprinted version (a 503 while any is being made):
  // the entry records their sizes and sha256s, the bytes that leave.
  const files = await deliveredFiles(sqlOf(ctx.db), version, licensed.licenceId, resolved.files);
  const copies = licensed.fingerprinted ? files.map((f) => ({ path: f.path, sha256: f.sha256 })) : undefined;
  const expected = new Date(Math.floor(Date.now() / 1000) * 1000);
  const signing = signedAhead(expected, files, resolved.files);
  const chained = await appendToLog(ctx, {
    entry: {
      id: newLogId("dl"),
      ...recipient,
      datasetId: body.dataset_id,
      version: body.version,
      versionId: licensed.versionId,
      licenceId: licensed.licenceId,
      termsSha256: licensed.termsSha256,
      requestedScope,
      episodeCount: resolved.episodeIds.length,
      fileCount: files.length,
      totalBytes: copies ? files.reduce((sum, f) => sum + f.size_bytes, 0) : resolved.totalBytes,
      episodesSha256: episodesDigest(resolved.episodeIds),
      ...(copies ? { filesSha256: filesDigest(copies) } : {}),
      requestId: ctx.requestId,
      idempotencyScope: idempotency?.scope ?? null,
      idempotencyKey: idempotency?.key ?? null,
      requestSha256,
    },
    episodeIds: resolved.episodeIds,
    ...(copies ? { files: copies } : {}),
    ttlSeconds: URL_TTL_SECONDS,
    refusals: [withdrawnMeanwhile],
  }).catch((error: unknown) => {
    if (isDuplicateKey(error)) return { duplicateKey: error };
    throw notRecorded("The download", error);
  });
  const ahead = await signing;
  if ("duplicateKey" in chained) return { notAppended: "duplicate key", cause: chained.duplicateKey };
  if ("refused" in chained) return { notAppended: "withdrawn meanwhile", cause: chained };
  try {
    const issued = {
      id: chained.id,
      datasetId: chained.datasetId,
      version: chained.version,
      issuedAt: chained.occurredAt,
      expiresAt: chained.expiresAt,
    };
    const signed =
      chained.occurredAt.getTime() === expected.getTime() && "signed" in ahead
        ? ahead.signed
        : await signFiles(chained.occurredAt, files, resolved.files);
    return { download: issuedDownload(issued, signed, resolved.coDelivered) };
  } catch (error) {
    throw notRecorded("The download", error);
  }
}

/**
 * The download's files signed (and written to JSON) at `at` while its entry is appended, or the
 * signing's failure: held until the append has answered, so that a store's refusal never
 * overtakes the log's.
 */
function signedAhead(
  at: Date,
  files: readonly DeliveredFile<FileRecord>[],
  records: readonly FileRecord[],
): Promise<{ signed: SignedFiles } | { failed: unknown }> {
  return signFiles(at, files, records).then(
    (signed) => ({ signed }),
    (failed: unknown) => ({ failed }),
  );
}

/** `download` with whether it was replayed; its object form still built only when read. */
const made = (download: IssuedDownload, replayed: boolean): CreatedDownload => ({
  json: download.json,
  get download() {
    return download.download;
  },
  replayed,
});

function recipientOf(ctx: Ctx): {
  organizationId: string;
  apiKeyId: string | null;
  userId: string | null;
  reviewerRole: null;
  channel: DisclosureChannel;
} {
  const p = ctx.principal;
  if (p.kind === "api_key")
    return { organizationId: p.organizationId, apiKeyId: p.keyId, userId: null, reviewerRole: null, channel: "api" };
  if (p.kind === "user" && p.organizationId)
    return {
      organizationId: p.organizationId,
      apiKeyId: null,
      userId: p.userId,
      reviewerRole: null,
      channel: "portal",
    };
  throw new AppError("forbidden", "Downloads are made by members of a licensed organisation.");
}

function scopeOf(body: DownloadRequest): RequestedScope {
  const scope: RequestedScope = {};
  if (body.episode_ids) scope.episode_ids = body.episode_ids;
  if (body.filter) scope.filter = body.filter;
  if (body.streams) scope.streams = body.streams;
  // false is the same as leaving it out, and recorded the same.
  if (body.include_version_files) scope.include_version_files = true;
  return scope;
}

async function replay(ctx: Ctx, idempotency: Idempotency, requestSha256: string): Promise<IssuedDownload | undefined> {
  const earlier = await earlierEntry(ctx, idempotency, requestSha256);
  return earlier && reissuedDownload(ctx, earlier.id);
}

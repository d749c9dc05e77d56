import { canonicalJson } from "@/lib/canonical-json";
import { sha256Hex, type ChainedEntry } from "@/lib/disclosures/chain";

/**
 * The oracle for canonicalEntry: the canonical JSON of an entry's fields built as an object, the
 * form every stored hash was first made with (version 1 for entries under a licence, version 2 for
 * a reviewer's preview, which names its role, version 3 for an entry that names its licence's terms,
 * version 4 for one that also names the per-licence copies it delivered). canonicalEntry writes the same bytes key by key for
 * speed; the tests hold it to this.
 */
export function canonicalEntryAsObject(e: ChainedEntry): string {
  const recipient =
    e.reviewerRole === null
      ? { organization_id: e.organizationId, api_key_id: e.apiKeyId, user_id: e.userId }
      : { organization_id: e.organizationId, api_key_id: e.apiKeyId, user_id: e.userId, reviewer_role: e.reviewerRole };
  const terms = e.termsSha256 === undefined ? {} : { terms_sha256: e.termsSha256 };
  return canonicalJson({
    v: e.filesSha256 !== undefined ? 4 : e.termsSha256 !== undefined ? 3 : e.reviewerRole === null ? 1 : 2,
    ...terms,
    id: e.id,
    seq: e.seq,
    occurred_at: e.occurredAt.toISOString(),
    recipient,
    channel: e.channel,
    dataset_id: e.datasetId,
    version: e.version,
    licence_id: e.licenceId,
    requested_scope_sha256: sha256Hex(canonicalJson(e.requestedScope)),
    resolved: {
      episode_count: e.episodeCount,
      episodes_sha256: e.episodesSha256,
      file_count: e.fileCount,
      ...(e.filesSha256 === undefined ? {} : { files_sha256: e.filesSha256 }),
      total_bytes: e.totalBytes,
    },
    expires_at: e.expiresAt.toISOString(),
    request_id: e.requestId,
    prev_hash: e.prevHash,
  });
}

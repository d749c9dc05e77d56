import { createHash } from "node:crypto";
import { canonicalJson } from "../canonical-json";
import type { DisclosureChannel, RequestedScope, ReviewerRole } from "../db/schema";

export const GENESIS_HASH = "0".repeat(64);

/** Everything an entry asserts. Its hash covers all of it, the previous entry's hash included. */
export type ChainedEntry = {
  id: string;
  seq: number;
  occurredAt: Date;
  /** Null only for a reviewer's or admin's preview, which no organisation's licence covers. */
  organizationId: string | null;
  apiKeyId: string | null;
  userId: string | null;
  /** The role a reviewer or admin previewed under; null for everything disclosed under a licence. */
  reviewerRole: ReviewerRole | null;
  channel: DisclosureChannel;
  datasetId: string;
  version: string;
  licenceId: string | null;
  requestedScope: RequestedScope;
  episodeCount: number;
  fileCount: number;
  totalBytes: number;
  episodesSha256: string;
  expiresAt: Date;
  requestId: string;
  prevHash: string;
};

/** A `disclosures` row as the database returns it (bigint columns may come back as strings). */
export type DisclosureRow = {
  id: string;
  seq: number | string;
  occurred_at: Date;
  organization_id: string | null;
  api_key_id: string | null;
  user_id: string | null;
  reviewer_role: ReviewerRole | null;
  channel: DisclosureChannel;
  dataset_id: string;
  version: string;
  licence_id: string | null;
  requested_scope: RequestedScope;
  episode_count: number;
  file_count: number;
  total_bytes: number | string;
  episodes_sha256: string;
  expires_at: Date;
  request_id: string;
  prev_hash: string;
};

/** The entry a stored row asserts, for recomputing its hash. */
export function entryOfRow(row: DisclosureRow): ChainedEntry {
  return {
    id: row.id,
    seq: Number(row.seq),
    occurredAt: row.occurred_at,
    organizationId: row.organization_id,
    apiKeyId: row.api_key_id,
    userId: row.user_id,
    reviewerRole: row.reviewer_role,
    channel: row.channel,
    datasetId: row.dataset_id,
    version: row.version,
    licenceId: row.licence_id,
    requestedScope: row.requested_scope,
    episodeCount: row.episode_count,
    fileCount: row.file_count,
    totalBytes: Number(row.total_bytes),
    episodesSha256: row.episodes_sha256,
    expiresAt: row.expires_at,
    requestId: row.request_id,
    prevHash: row.prev_hash,
  };
}

/**
 * The canonical serialisation: canonical JSON (keys sorted at every level, ISO times with
 * milliseconds) of the entry's fields, versioned so it can evolve. Version 1 is every entry made
 * under a licence, as it always was: those hash exactly as before. Version 2 is a reviewer's or
 * admin's preview: the recipient also names the role it was made under, and the organisation and
 * licence are null. Which version applies follows from the entry itself (its role), so altering
 * the role of a stored entry breaks its hash either way.
 *
 * Written out key by key, already in sorted order, rather than built as an object and sorted on
 * every call: a full walk of millions of entries spends its time here, and this is about three
 * times as fast. chain.test.ts holds the object form and checks that both give the same bytes.
 */
export function canonicalEntry(e: ChainedEntry): string {
  const s = JSON.stringify;
  const recipient =
    `{"api_key_id":${s(e.apiKeyId)},"organization_id":${s(e.organizationId)}` +
    (e.reviewerRole === null ? "" : `,"reviewer_role":${s(e.reviewerRole)}`) +
    `,"user_id":${s(e.userId)}}`;
  return (
    `{"channel":${s(e.channel)},"dataset_id":${s(e.datasetId)},"expires_at":${s(e.expiresAt.toISOString())},"id":${s(e.id)}` +
    `,"licence_id":${s(e.licenceId)},"occurred_at":${s(e.occurredAt.toISOString())},"prev_hash":${s(e.prevHash)},"recipient":${recipient}` +
    // The scope by digest: an entry of 10,000 episode ids hashes as fast as one of none.
    `,"request_id":${s(e.requestId)},"requested_scope_sha256":${s(sha256Hex(canonicalJson(e.requestedScope)))}` +
    `,"resolved":{"episode_count":${s(e.episodeCount)},"episodes_sha256":${s(e.episodesSha256)},"file_count":${s(e.fileCount)},"total_bytes":${s(e.totalBytes)}}` +
    `,"seq":${s(e.seq)},"v":${e.reviewerRole === null ? 1 : 2},"version":${s(e.version)}}`
  );
}

export function entryHash(e: ChainedEntry): string {
  return sha256Hex(canonicalEntry(e));
}

export const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");

/** SHA-256 over the resolved episode ids in byte order, one per line: the chain covers the episode list through it. */
export function episodesDigest(episodeIds: readonly string[]): string {
  const sorted = [...episodeIds].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return sha256Hex(sorted.join("\n"));
}

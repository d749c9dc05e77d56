import { hash } from "node:crypto";
import { canonicalJson } from "../canonical-json";
import { byteOrder } from "../byte-order";
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
  /**
   * The SHA-256 of the terms document of the licence the entry was delivered under, null when the
   * licence has none; absent when the entry names no terms: one made before migration 0017, or a
   * reviewer's or admin's preview (no licence). Stored as `names_terms` and `terms_sha256`.
   */
  termsSha256?: string | null;
  requestedScope: RequestedScope;
  episodeCount: number;
  fileCount: number;
  totalBytes: number;
  episodesSha256: string;
  /**
   * An entry that delivered per-licence copies of a fingerprinted version: SHA-256 over its files'
   * paths and the sha256 of each copy (`filesDigest`); absent for every other entry, which hashes
   * as it always did. Stored as `files_sha256`, its files in `disclosure_files`.
   */
  filesSha256?: string;
  expiresAt: Date;
  requestId: string;
  prevHash: string;
};

/**
 * A `disclosures` row as the database returns it (bigint columns may come back as strings); its
 * instants as the driver parses them (Dates), or as the database writes them (text, in a full walk).
 */
export type DisclosureRow<Instant = Date> = {
  id: string;
  seq: number | string;
  occurred_at: Instant;
  organization_id: string | null;
  api_key_id: string | null;
  user_id: string | null;
  reviewer_role: ReviewerRole | null;
  channel: DisclosureChannel;
  dataset_id: string;
  version: string;
  licence_id: string | null;
  names_terms: boolean;
  terms_sha256: string | null;
  requested_scope: RequestedScope;
  episode_count: number;
  file_count: number;
  total_bytes: number | string;
  episodes_sha256: string;
  files_sha256: string | null;
  expires_at: Instant;
  request_id: string;
  prev_hash: string;
};

/** The hash a stored row's fields make, its instants written by `iso` as toISOString writes them: what the row's `hash` must be. */
export function hashOfRow<Instant>(row: DisclosureRow<Instant>, iso: (instant: Instant) => string): string {
  return sha256Hex(
    canonicalText({
      id: row.id,
      seq: Number(row.seq),
      occurredAt: iso(row.occurred_at),
      organizationId: row.organization_id,
      apiKeyId: row.api_key_id,
      userId: row.user_id,
      reviewerRole: row.reviewer_role,
      channel: row.channel,
      datasetId: row.dataset_id,
      version: row.version,
      licenceId: row.licence_id,
      termsSha256: row.names_terms ? row.terms_sha256 : undefined,
      requestedScopeSha256: scopeDigest(row.requested_scope),
      episodeCount: row.episode_count,
      fileCount: row.file_count,
      totalBytes: Number(row.total_bytes),
      episodesSha256: row.episodes_sha256,
      filesSha256: row.files_sha256 ?? undefined,
      expiresAt: iso(row.expires_at),
      requestId: row.request_id,
      prevHash: row.prev_hash,
    }),
  );
}

export const isoOfDate = (date: Date): string => date.toISOString();

/**
 * What the canonical serialisation writes of an entry: its fields, with its instants as ISO text
 * (toISOString's form, milliseconds and Z) and its requested scope by digest: built from a
 * `ChainedEntry` by `hashedFields`, from a stored row by `hashOfRow` (in a full walk, from
 * instants as the database writes them, never a Date in between).
 */
type HashedFields = Omit<ChainedEntry, "occurredAt" | "expiresAt" | "requestedScope"> & {
  occurredAt: string;
  expiresAt: string;
  requestedScopeSha256: string;
};

function hashedFields(e: ChainedEntry): HashedFields {
  const { occurredAt, expiresAt, requestedScope, ...rest } = e;
  return {
    ...rest,
    occurredAt: occurredAt.toISOString(),
    expiresAt: expiresAt.toISOString(),
    requestedScopeSha256: scopeDigest(requestedScope),
  };
}

/** The scope by digest: an entry of 10,000 episode ids hashes as fast as one of none. */
const scopeDigest = (scope: RequestedScope): string => sha256Hex(canonicalJson(scope));

/**
 * The canonical serialisation: canonical JSON (keys sorted at every level, ISO times with
 * milliseconds) of the entry's fields, versioned so it can evolve. Version 1 is every entry made
 * under a licence, as it always was: those hash exactly as before. Version 2 is a reviewer's or
 * admin's preview: the recipient also names the role it was made under, and the organisation and
 * licence are null. Version 3 is an entry under a licence that names the licence's terms (every
 * one since migration 0017): it also holds `terms_sha256`, the SHA-256 of the terms document or
 * null. Version 4 is such an entry that delivered per-licence copies (a fingerprinted version,
 * migration 0025): its `resolved` also holds `files_sha256`. Which version applies follows from
 * the entry itself (its role, whether it names terms, whether it names files), so altering any of
 * them in a stored entry breaks its hash.
 */
export function canonicalEntry(e: ChainedEntry): string {
  return canonicalText(hashedFields(e));
}

/**
 * `canonicalEntry` from the hashed fields. Written out key by key, already in sorted order, rather
 * than built as an object and sorted on every call: a full walk of millions of entries spends its
 * time here, and this is about three times as fast. The tests hold it to the object form
 * (lib/testing/chain-oracle.ts), byte for byte.
 */
function canonicalText(f: HashedFields, at: PositionText = positionText(f)): string {
  const s = JSON.stringify;
  const namesTerms = f.termsSha256 !== undefined;
  const namesFiles = f.filesSha256 !== undefined;
  const recipient =
    `{"api_key_id":${s(f.apiKeyId)},"organization_id":${s(f.organizationId)}` +
    (f.reviewerRole === null ? "" : `,"reviewer_role":${s(f.reviewerRole)}`) +
    `,"user_id":${s(f.userId)}}`;
  return (
    `{"channel":${s(f.channel)},"dataset_id":${s(f.datasetId)},"expires_at":${at.expiresAt},"id":${s(f.id)}` +
    `,"licence_id":${s(f.licenceId)},"occurred_at":${at.occurredAt},"prev_hash":${at.prevHash},"recipient":${recipient}` +
    `,"request_id":${s(f.requestId)},"requested_scope_sha256":${s(f.requestedScopeSha256)}` +
    `,"resolved":{"episode_count":${s(f.episodeCount)},"episodes_sha256":${s(f.episodesSha256)},"file_count":${s(f.fileCount)}` +
    `${namesFiles ? `,"files_sha256":${s(f.filesSha256)}` : ""},"total_bytes":${s(f.totalBytes)}}` +
    `,"seq":${at.seq}${namesTerms ? `,"terms_sha256":${s(f.termsSha256)}` : ""}` +
    `,"v":${namesFiles ? 4 : namesTerms ? 3 : f.reviewerRole === null ? 1 : 2},"version":${s(f.version)}}`
  );
}

/** Where an entry sits in the chain: what only the append can know, under the chain's lock. */
export type ChainPosition = Pick<ChainedEntry, "seq" | "occurredAt" | "expiresAt" | "prevHash">;

/** The position fields as the canonical text writes them (JSON values). */
type PositionText = Record<keyof ChainPosition, string>;

const positionText = (f: HashedFields): PositionText => ({
  seq: JSON.stringify(f.seq),
  occurredAt: JSON.stringify(f.occurredAt),
  expiresAt: JSON.stringify(f.expiresAt),
  prevHash: JSON.stringify(f.prevHash),
});

/**
 * An entry's canonical text with its chain position left open: `text[i]` is followed by the JSON
 * value of `slots[i]`, and the last piece of text ends it. The append hands these to the database,
 * which fills in the position it reads under the chain's lock and hashes the result in the same
 * statement, so that the serialised section needs no round trip back here (lib/disclosures/append.ts).
 * The text comes from `canonicalText` itself, so the two cannot differ in anything but the slots.
 */
export function canonicalTemplate(e: Omit<ChainedEntry, keyof ChainPosition>): {
  text: string[];
  slots: (keyof ChainPosition)[];
} {
  const unplaced = { ...e, seq: 0, occurredAt: new Date(0), expiresAt: new Date(0), prevHash: "" };
  // A control character is always escaped by JSON.stringify, so no field's value can hold a slot's mark.
  const mark = (slot: keyof ChainPosition) => `\u0001${slot}\u0001`;
  const pieces = canonicalText(hashedFields(unplaced), {
    seq: mark("seq"),
    occurredAt: mark("occurredAt"),
    expiresAt: mark("expiresAt"),
    prevHash: mark("prevHash"),
  }).split(/\u0001(\w+)\u0001/);
  return {
    text: pieces.filter((_, i) => i % 2 === 0),
    slots: pieces.filter((_, i) => i % 2 === 1) as (keyof ChainPosition)[],
  };
}

export function entryHash(e: ChainedEntry): string {
  return sha256Hex(canonicalEntry(e));
}

// One call, no Hash object: a full walk hashes two short texts per entry, and creating (and
// collecting) a Hash object for each cost it about a tenth of its time.
export const sha256Hex = (text: string): string => hash("sha256", text, "hex");

/**
 * SHA-256 over the files an entry delivered as per-licence copies: "path<TAB>sha256" lines in the
 * paths' byte order, joined by line breaks. The chain covers the bytes that left through it.
 */
export function filesDigest(files: readonly { path: string; sha256: string }[]): string {
  const sorted = [...files].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  return sha256Hex(sorted.map((f) => `${f.path}\t${f.sha256}`).join("\n"));
}

/** SHA-256 over the resolved episode ids in byte order, one per line: the chain covers the episode list through it. */
export function episodesDigest(episodeIds: readonly string[]): string {
  return sha256Hex(inByteOrder(episodeIds).join("\n"));
}

/** The ids in byte order: as they are (a download's resolved episodes come sorted), or a sorted copy. */
function inByteOrder(ids: readonly string[]): readonly string[] {
  for (let i = 1; i < ids.length; i++) if (byteOrder(ids[i - 1]!, ids[i]!) > 0) return [...ids].sort(byteOrder);
  return ids;
}

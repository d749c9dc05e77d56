import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { Ctx } from "../context";
import { canonicalJson } from "../canonical-json";
import { sqlOf, type Db } from "../db/client";
import { env } from "../env";
import { AppError } from "../errors";
import { getObjectBytes, listObjectKeys, s3Client } from "../storage/client";
import { storeLocation } from "../storage/config";
import { requireAdmin, requireReviewer } from "../auth/authorize";
import { verifyChainDetailed, type RangeChecker, type VerifyProgress } from "./verify";
import { archivedMonths } from "./archived-months";

/**
 * Signed head digests of the disclosure log, kept outside the database (the idea of CloudTrail's
 * digest files). Each says "at `time` the log's entry `seq` had hash `hash`", links to the digest
 * before it by the SHA-256 of that object's bytes, and is signed with an Ed25519 key the database
 * does not hold. Whoever can rewrite the database can then still not make the log agree with the
 * digests: removing entries from the end, rewriting history (even re-hashed consistently), or
 * removing a digest each shows up in `verifyDigests`.
 */
export const DIGEST_FORMAT_VERSION = 1;

export type HeadDigest = {
  format_version: number;
  seq: number;
  hash: string;
  /** When the digest was made (the database's clock). */
  time: string;
  /** When the entry at `seq` was appended. */
  log_time: string;
  /** SHA-256 (hex) of the previous digest object's bytes; null for the first. */
  previous_digest_sha256: string | null;
  /** SHA-256 (hex) of the signing key's public key (DER, SubjectPublicKeyInfo). */
  public_key_sha256: string;
};

/** What is stored: the digest with its signature (base64 Ed25519 over the digest's canonical JSON). */
type SignedDigest = HeadDigest & { signature: string };

export type DigestStore = { client: S3Client; bucket: string; prefix: string };

export type DigestConfig = {
  store: DigestStore;
  /** Absent for a verifier: checking digests needs only the public key. */
  signingKey?: KeyObject;
  publicKey: KeyObject;
};

// Any constant; the same for every instance that writes digests for this database.
const DIGEST_LOCK = 7_203_116;

/** A PEM given in the variable itself, or the path of a file that holds it. */
function pemOf(name: string, value: string): string {
  if (value.startsWith("-----BEGIN")) return value;
  try {
    return readFileSync(value, "utf8");
  } catch {
    throw misconfigured(`${name} is neither a PEM key nor the path of a readable file.`);
  }
}

/** A key that cannot be used, said without quoting it (the message reaches logs and terminals). */
const misconfigured = (message: string) => new AppError("unavailable", message);

function ed25519(name: string, load: () => KeyObject): KeyObject {
  let key: KeyObject;
  try {
    key = load();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw misconfigured(`${name} is not a readable PEM key.`);
  }
  if (key.asymmetricKeyType !== "ed25519")
    throw misconfigured(`${name} is not an Ed25519 key (it is ${key.asymmetricKeyType}).`);
  return key;
}

/** DIGEST_SIGNING_KEY: a PKCS#8 PEM, or the path of a file holding one. */
export const loadSigningKey = (name: string, value: string): KeyObject =>
  ed25519(name, () => createPrivateKey(pemOf(name, value)));

/** DIGEST_PUBLIC_KEY: an SPKI PEM (or a private key's PEM, whose public half is taken), or the path of a file holding one. */
export const loadPublicKey = (name: string, value: string): KeyObject =>
  ed25519(name, () => createPublicKey(pemOf(name, value)));

export const publicKeyPem = (key: KeyObject) => key.export({ type: "spki", format: "pem" }).toString();

/** The fingerprint a digest names its key by. */
export function publicKeySha256(key: KeyObject): string {
  return createHash("sha256")
    .update(key.export({ type: "spki", format: "der" }))
    .digest("hex");
}

const sha256Bytes = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

/**
 * The configuration from the environment: DIGEST_SIGNING_KEY / DIGEST_PUBLIC_KEY, DIGEST_BUCKET
 * (default S3_BUCKET) and DIGEST_PREFIX on the S3 store, with DIGEST_S3_* credentials when the
 * digest bucket has its own. `need` says which key the caller must have.
 */
export function digestConfigFromEnv(need: "sign" | "verify"): DigestConfig {
  const e = env();
  const signingKey = e.DIGEST_SIGNING_KEY ? loadSigningKey("DIGEST_SIGNING_KEY", e.DIGEST_SIGNING_KEY) : undefined;
  if (need === "sign" && !signingKey)
    throw misconfigured("DIGEST_SIGNING_KEY is not set: no key to sign digests with.");
  const publicKey = digestPublicKeyFromEnv();
  const location = storeLocation();
  const client = s3Client({
    ...location,
    accessKeyId: e.DIGEST_S3_ACCESS_KEY_ID ?? location.accessKeyId,
    secretAccessKey: e.DIGEST_S3_SECRET_ACCESS_KEY ?? location.secretAccessKey,
  });
  return {
    store: { client, bucket: e.DIGEST_BUCKET ?? location.bucket, prefix: e.DIGEST_PREFIX },
    signingKey,
    publicKey,
  };
}

/**
 * The key digests are checked with: DIGEST_PUBLIC_KEY when given (a verifier holds only that),
 * else the public half of DIGEST_SIGNING_KEY.
 */
export function digestPublicKeyFromEnv(): KeyObject {
  const e = env();
  if (e.DIGEST_PUBLIC_KEY) return loadPublicKey("DIGEST_PUBLIC_KEY", e.DIGEST_PUBLIC_KEY);
  if (e.DIGEST_SIGNING_KEY) return createPublicKey(loadSigningKey("DIGEST_SIGNING_KEY", e.DIGEST_SIGNING_KEY));
  throw misconfigured("Neither DIGEST_PUBLIC_KEY nor DIGEST_SIGNING_KEY is set: no key to check digests with.");
}

/**
 * The object key: the prefix, the UTC day as folders, then the time to the millisecond and the
 * seq. Keys sort by time (fixed-width ISO times), which is the order the links run in.
 */
export function digestKey(prefix: string, time: Date, seq: number): string {
  const iso = time.toISOString();
  return `${prefix}${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)}/${iso.replace(/:/g, "-")}_seq-${seq}.json`;
}

export type DigestWrite =
  | { written: true; key: string; bucket: string; digest: HeadDigest }
  | { written: false; reason: "empty" | "recent" | "busy"; lastKey?: string };

type DigestIndexRow = { key: string; seq: string; hash: string; digest_time: Date; sha256: string };

/**
 * Writes a signed digest of the log's head to the store, and records it in disclosure_digests.
 * Under an advisory lock, so instances never write two at once: with `ifOlderThanMs` it writes
 * only when the last digest is at least that old (the periodic schedule); with `waitForLock`
 * false it gives up when another instance holds the lock. The link to the previous digest comes
 * from the database's record of what was written, not from the store: a digest removed from the
 * store is then a gap the next one points across, which `verifyDigests` reports.
 */
export async function writeHeadDigest(
  ctx: Ctx,
  config: DigestConfig,
  options: { ifOlderThanMs?: number; waitForLock?: boolean } = {},
): Promise<DigestWrite> {
  requireAdmin(ctx);
  const signingKey = config.signingKey;
  if (!signingKey) throw misconfigured("DIGEST_SIGNING_KEY is not set: no key to sign digests with.");
  const { client, bucket, prefix } = config.store;
  return ctx.db.transaction(async (transaction) => {
    const tx = sqlOf(transaction as unknown as Db);
    if (options.waitForLock === false) {
      const [lock] = await tx<{ locked: boolean }[]>`select pg_try_advisory_xact_lock(${DIGEST_LOCK}) as locked`;
      if (!lock!.locked) return { written: false, reason: "busy" } as const;
    } else {
      await tx`select pg_advisory_xact_lock(${DIGEST_LOCK})`;
    }
    const [last] = await tx<DigestIndexRow[]>`
      select key, seq, hash, digest_time, sha256 from disclosure_digests
      where bucket = ${bucket} and starts_with(key, ${prefix}) order by digest_time desc, key desc limit 1`;
    const [clock] = await tx<{ now: Date }[]>`select clock_timestamp() as now`;
    const now = clock!.now;
    if (
      last &&
      options.ifOlderThanMs !== undefined &&
      now.getTime() - last.digest_time.getTime() < options.ifOlderThanMs
    ) {
      return { written: false, reason: "recent", lastKey: last.key } as const;
    }
    const [head] = await tx<
      { seq: string; hash: string; occurred_at: Date }[]
    >`select seq, hash, occurred_at from disclosures order by seq desc limit 1`;
    if (!head) return { written: false, reason: "empty" } as const;
    const previous = last?.sha256 ?? (await newestStoredDigestSha256(config.store));
    const digest: HeadDigest = {
      format_version: DIGEST_FORMAT_VERSION,
      seq: Number(head.seq),
      hash: head.hash,
      time: now.toISOString(),
      log_time: head.occurred_at.toISOString(),
      previous_digest_sha256: previous,
      public_key_sha256: publicKeySha256(createPublicKey(signingKey)),
    };
    const signed: SignedDigest = {
      ...digest,
      signature: sign(null, Buffer.from(canonicalJson(digest)), signingKey).toString("base64"),
    };
    const body = Buffer.from(canonicalJson(signed));
    const key = digestKey(prefix, now, digest.seq);
    // Recorded first, stored second, committed last: a failed upload leaves no record of it.
    await tx`insert into disclosure_digests (key, bucket, seq, hash, digest_time, sha256)
      values (${key}, ${bucket}, ${digest.seq}, ${digest.hash}, ${now}, ${sha256Bytes(body)})`;
    // With its MD5: S3 refuses a PUT without one into a bucket whose Object Lock retains objects by default.
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: body,
        ContentType: "application/json",
        ContentMD5: createHash("md5").update(body).digest("base64"),
      }),
    );
    return { written: true, key, bucket, digest } as const;
  });
}

/**
 * With no record in the database (a new database, or digests written elsewhere before), the
 * newest digest in the store is the one to link to. A writer whose credentials may only put
 * objects cannot list them: it starts a new chain, which the verifier reports as a gap.
 */
async function newestStoredDigestSha256(store: DigestStore): Promise<string | null> {
  let keys: string[];
  try {
    keys = await listObjectKeys(store.client, store.bucket, store.prefix);
  } catch {
    return null;
  }
  const newest = keys
    .filter((k) => k.endsWith(".json"))
    .sort()
    .at(-1);
  return newest ? sha256Bytes(await getObjectBytes(store.client, store.bucket, newest)) : null;
}

export type DigestVerification = {
  /** Each problem found, in a sentence; empty when the log agrees with every digest. */
  findings: string[];
  /** Digest objects read. */
  digests: number;
  /** The newest digest whose signature verified, if any. */
  newest: { key: string; digest: HeadDigest } | null;
  /** The log's head after the full walk (when it verified). */
  head: { count: number; headHash: string } | null;
};

/**
 * Checks every digest under the prefix and the log against them: each signature with the public
 * key (a digest signed by another key, or altered, is forged); each digest links to the one before
 * it (else the one before is missing); every digest the database recorded writing is still there;
 * the log still holds each digest's entry with its hash (else entries were removed from the end,
 * or history was rewritten); and the whole chain, from the genesis to the head and so past the
 * newest digest, verifies (a full walk, which writes a checkpoint only when nothing was found).
 */
export async function verifyDigests(
  ctx: Ctx,
  config: DigestConfig,
  options: { onProgress?: (p: VerifyProgress) => void; ranges?: RangeChecker } = {},
): Promise<DigestVerification> {
  requireReviewer(ctx);
  const sql = sqlOf(ctx.db);
  const { client, bucket, prefix } = config.store;
  const findings: string[] = [];
  const keys = (await listObjectKeys(client, bucket, prefix)).sort();
  const expectedKey = publicKeySha256(config.publicKey);

  const recorded = await sql<
    { key: string }[]
  >`select key from disclosure_digests where bucket = ${bucket} and starts_with(key, ${prefix}) order by key`;
  const listed = new Set(keys);
  for (const { key } of recorded)
    if (!listed.has(key))
      findings.push(`the digest ${key} is missing from the store (the database recorded writing it)`);
  if (keys.length === 0) findings.push(`no digest found under s3://${bucket}/${prefix}`);

  const trusted: { key: string; digest: HeadDigest }[] = [];
  // The links run through the genuine digests only: a forged one is reported as such, not as a gap after it.
  let previousSha: string | null = null;
  for (const key of keys) {
    const bytes = await getObjectBytes(client, bucket, key);
    const signed = parseDigest(bytes);
    if (!signed) {
      findings.push(`digest ${key} is not a digest of format ${DIGEST_FORMAT_VERSION} (unreadable or incomplete)`);
      continue;
    }
    const { signature, ...digest } = signed;
    if (digest.public_key_sha256 !== expectedKey) {
      findings.push(
        `digest ${key} is forged: it names another signing key (${digest.public_key_sha256}, not ${expectedKey})`,
      );
      continue;
    }
    if (!verify(null, Buffer.from(canonicalJson(digest)), config.publicKey, Buffer.from(signature, "base64"))) {
      findings.push(`digest ${key} is forged or altered: its signature does not verify with the public key`);
      continue;
    }
    if (digest.previous_digest_sha256 !== previousSha) findings.push(`the digest before ${key} is missing`);
    trusted.push({ key, digest });
    previousSha = sha256Bytes(bytes);
  }

  // The log against each signed digest: one read of the entries at the digests' seqs.
  const seqs = [...new Set(trusted.map((t) => t.digest.seq))];
  const entries = new Map<number, string>();
  for (const row of await sql<
    { seq: string; hash: string }[]
  >`select seq, hash from disclosures where seq = any (${seqs}::bigint[])`)
    entries.set(Number(row.seq), row.hash);
  const [end] = await sql<{ seq: string | null }[]>`select max(seq) as seq from disclosures`;
  const logEnd = end!.seq === null ? 0 : Number(end!.seq);
  // A digest inside an archived month is checked against the month's recorded end when it is that
  // end; any other is the archive's to hold (the walk joins the month at its checkpoints).
  const archived = await archivedMonths(sql);
  for (const { key, digest } of trusted) {
    const month = archived.find((m) => digest.seq >= m.firstSeq && digest.seq <= m.lastSeq);
    const hash = month ? (digest.seq === month.lastSeq ? month.lastHash : digest.hash) : entries.get(digest.seq);
    if (hash === undefined)
      findings.push(`entries removed from the end: digest ${key} covers seq ${digest.seq}, the log ends at ${logEnd}`);
    else if (hash !== digest.hash)
      findings.push(
        `history rewritten at or before seq ${digest.seq}: digest ${key} records hash ${digest.hash}, the log holds ${hash}`,
      );
  }

  // The chain itself, from the genesis: the digests vouch for the heads, the walk for every link.
  const walk = await verifyChainDetailed(ctx, {
    mode: "full",
    onProgress: options.onProgress,
    ranges: options.ranges,
    writeCheckpoint: findings.length === 0,
  });
  if (!walk.report.intact)
    findings.push(`the log does not verify: broken at seq ${walk.report.firstBadSeq}: ${walk.report.reason}`);
  return {
    findings,
    digests: keys.length,
    newest: trusted.at(-1) ?? null,
    head: walk.report.intact ? { count: walk.report.count, headHash: walk.report.headHash } : null,
  };
}

function parseDigest(bytes: Buffer): SignedDigest | null {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    return null;
  }
  const d = value as Partial<SignedDigest> | null;
  if (!d || typeof d !== "object") return null;
  const hex64 = (v: unknown) => typeof v === "string" && /^[0-9a-f]{64}$/.test(v);
  const ok =
    d.format_version === DIGEST_FORMAT_VERSION &&
    Number.isSafeInteger(d.seq) &&
    (d.seq as number) > 0 &&
    hex64(d.hash) &&
    typeof d.time === "string" &&
    typeof d.log_time === "string" &&
    (d.previous_digest_sha256 === null || hex64(d.previous_digest_sha256)) &&
    hex64(d.public_key_sha256) &&
    typeof d.signature === "string";
  return ok ? (d as SignedDigest) : null;
}

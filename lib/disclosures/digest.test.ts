import { createHash, createPublicKey, generateKeyPairSync, sign } from "node:crypto";
import { DeleteObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { canonicalJson } from "@/lib/canonical-json";
import { getObjectBytes, listObjectKeys, putObject, s3Client } from "@/lib/storage/client";
import { storeLocation } from "@/lib/storage/config";
import { createTestOrg, uniqueId } from "@/lib/testing/fixtures";
import { CALLERS, callers } from "@/lib/testing/admin";
import { removeEntriesFrom, withTriggersDisabled } from "@/lib/testing/isolated-db";
import {
  buildWorld,
  downloadPlan,
  makeDownload,
  makeSequentially,
  type World,
} from "@/lib/testing/disclosure-fixtures";
import {
  digestKey,
  publicKeySha256,
  verifyDigests,
  writeHeadDigest,
  type DigestConfig,
  type HeadDigest,
} from "./digest";
import { startDigestSchedule, startDigestScheduleFromEnv } from "./digest-schedule";

// Signed head digests in the run's local object store (s3rver, as the embedded default runs it),
// each test under a prefix of its own. The log is tampered with in rolled-back transactions with
// the append-only triggers off (as a superuser could); the digests are removed or forged in the
// store, as whoever could write to the bucket could.

let w: World;
const location = () => storeLocation();
const client = () => s3Client(location());
const keys = generateKeyPairSync("ed25519");

function configFor(prefix: string, signing = keys.privateKey): DigestConfig {
  return {
    store: { client: client(), bucket: location().bucket, prefix },
    signingKey: signing,
    publicKey: createPublicKey(signing),
  };
}

/** A verifier's configuration: the public key only. */
const verifierOf = (config: DigestConfig): DigestConfig => ({ store: config.store, publicKey: config.publicKey });

beforeAll(async () => {
  w = await buildWorld("digests");
});

afterAll(async () => {
  await w?.iso.drop();
});

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const headSeq = async () =>
  Number((await w.iso.sql<{ seq: string }[]>`select max(seq) as seq from disclosures`)[0]!.seq);

describe("writing digests", () => {
  it("writes nothing for an empty log, then signed digests linked to each other, under keys that sort by time", async () => {
    const config = configFor(`${uniqueId("digests")}/`);
    expect(await writeHeadDigest(w.iso.operator, config)).toEqual({ written: false, reason: "empty" });
    await makeSequentially(w, downloadPlan(w).slice(0, 3));
    const first = await writeHeadDigest(w.iso.operator, config);
    await makeSequentially(w, downloadPlan(w).slice(0, 2));
    const second = await writeHeadDigest(w.iso.operator, config);
    if (!first.written || !second.written) throw new Error("not written");
    const listed = await listObjectKeys(config.store.client, config.store.bucket, config.store.prefix);
    expect(listed).toEqual([first.key, second.key]);
    expect(first.key < second.key).toBe(true);
    expect(first.key).toBe(digestKey(config.store.prefix, new Date(first.digest.time), first.digest.seq));
    expect(first.key).toMatch(/\/\d{4}\/\d{2}\/\d{2}\/\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z_seq-3\.json$/);

    const [h3, h5] = await w.iso.sql<
      { hash: string; occurred_at: Date }[]
    >`select hash, occurred_at from disclosures where seq in (3, 5) order by seq`;
    const firstBytes = await getObjectBytes(config.store.client, config.store.bucket, first.key);
    const stored = JSON.parse(firstBytes.toString()) as HeadDigest & { signature: string };
    expect(stored).toEqual({
      format_version: 1,
      seq: 3,
      hash: h3!.hash,
      time: first.digest.time,
      log_time: h3!.occurred_at.toISOString(),
      previous_digest_sha256: null,
      public_key_sha256: publicKeySha256(config.publicKey),
      signature: expect.any(String),
    });
    expect(firstBytes.toString()).toBe(canonicalJson(stored));
    expect(second.digest).toMatchObject({ seq: 5, hash: h5!.hash, previous_digest_sha256: sha256(firstBytes) });

    const verified = await verifyDigests(w.iso.operator, verifierOf(config));
    expect(verified.findings).toEqual([]);
    expect(verified).toMatchObject({ digests: 2, newest: { key: second.key }, head: { count: 5 } });
  });

  it("the schedule writes one digest per interval however many instances try, and a failure is only logged", async () => {
    const config = configFor(`${uniqueId("digests")}/`);
    const instances = [w.iso.db, w.iso.anotherPool(2), w.iso.anotherPool(2)].map((db) =>
      startDigestSchedule({ ctx: { ...w.iso.operator, db }, config, intervalMinutes: 60, firstAttemptMs: 3_600_000 }),
    );
    try {
      const results = await Promise.all(instances.map((s) => s.attempt()));
      expect(results.filter((r) => r?.written)).toHaveLength(1);
      // The others found the lock held, or (once it was released) the digest just written.
      const skipped = results.map((r) => (r && !r.written ? r.reason : null)).filter((r) => r !== null);
      expect(skipped).toHaveLength(2);
      for (const reason of skipped) expect(["busy", "recent"]).toContain(reason);
      // Later within the interval: not due.
      expect(await instances[1]!.attempt()).toMatchObject({ written: false, reason: "recent" });
      expect(await listObjectKeys(config.store.client, config.store.bucket, config.store.prefix)).toHaveLength(1);
      // A store that refuses the write: logged, nothing thrown, nothing recorded.
      const broken = startDigestSchedule({
        ctx: w.iso.operator,
        config: {
          ...configFor(`${uniqueId("digests")}/`),
          store: { ...config.store, bucket: "no-such-bucket", prefix: `${uniqueId("digests")}/` },
        },
        intervalMinutes: 60,
        firstAttemptMs: 3_600_000,
      });
      expect(await broken.attempt()).toBeNull();
      broken.stop();
      const [recorded] = await w.iso.sql<
        { n: number }[]
      >`select count(*)::int as n from disclosure_digests where bucket = 'no-such-bucket'`;
      expect(recorded!.n).toBe(0);
    } finally {
      for (const s of instances) s.stop();
    }
  });
});

describe("who may write and check digests", () => {
  // The verbs check their caller themselves (lib/auth/authorize.ts): writing a digest is an
  // administrator's act, checking the log against them a reviewer's too. The callers are the run's
  // principals, asked on this test's database.
  it("writes for operators and admins, checks for reviewers as well, and refuses everyone else before touching the store", async () => {
    const who = await callers((await createTestOrg()).id);
    await makeSequentially(w, downloadPlan(w).slice(0, 1));
    const writers = ["operator", "admin"];
    const checkers = ["operator", "admin", "reviewer"];
    for (const caller of CALLERS) {
      const config = configFor(`${uniqueId(`roles-${caller}`)}/`);
      const ctx = { ...w.iso.operator, principal: who[caller] };
      const wrote = await writeHeadDigest(ctx, config).then(
        (result) => result.written,
        (e: unknown) => e,
      );
      if (writers.includes(caller)) expect(wrote, caller).toBe(true);
      else expect(wrote, caller).toMatchObject({ code: "forbidden", status: 403 });
      expect(await listObjectKeys(config.store.client, config.store.bucket, config.store.prefix), caller).toHaveLength(
        writers.includes(caller) ? 1 : 0,
      );
      const checked = await verifyDigests(ctx, verifierOf(config)).then(
        (result) => result.findings,
        (e: unknown) => e,
      );
      if (checkers.includes(caller)) expect(Array.isArray(checked), caller).toBe(true);
      else expect(checked, caller).toMatchObject({ code: "forbidden", status: 403 });
    }
  });
});

describe("the server's schedule from the environment", () => {
  it("is off, with a warning naming the missing variable and never its value, when there is no signing key", () => {
    expect(process.env.DIGEST_SIGNING_KEY).toBeUndefined();
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (written.push(String(chunk)), true));
    try {
      startDigestScheduleFromEnv();
    } finally {
      spy.mockRestore();
    }
    expect(written.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({
        level: "warn",
        message: "disclosure digests are off",
        reason: "DIGEST_SIGNING_KEY is not set: no key to sign digests with.",
      }),
    ]);
    expect((globalThis as { dasDigestSchedule?: unknown }).dasDigestSchedule).toBeUndefined();
  });
});

describe("verify --digests finds", () => {
  /** Three digests, at heads 3 entries apart, under a prefix of the test's own. */
  async function threeDigests() {
    const config = configFor(`${uniqueId("digests")}/`);
    const written: { key: string; seq: number; hash: string }[] = [];
    for (let i = 0; i < 3; i++) {
      await makeSequentially(w, downloadPlan(w).slice(0, 3));
      const result = await writeHeadDigest(w.iso.operator, config);
      if (!result.written) throw new Error("not written");
      written.push({ key: result.key, seq: result.digest.seq, hash: result.digest.hash });
    }
    expect((await verifyDigests(w.iso.operator, verifierOf(config))).findings).toEqual([]);
    return { config, written };
  }

  it("entries removed from the end", async () => {
    const { config, written } = await threeDigests();
    const newest = written[2]!;
    const result = await withTriggersDisabled(w.iso.db, async (tx, operator) => {
      await removeEntriesFrom(tx, newest.seq - 1);
      return verifyDigests(operator, verifierOf(config));
    });
    expect(result.findings).toEqual([
      `entries removed from the end: digest ${newest.key} covers seq ${newest.seq}, the log ends at ${newest.seq - 2}`,
      // The full walk's own view: the checkpoint the last verification wrote is beyond the end too.
      expect.stringMatching(
        new RegExp(
          `^the log does not verify: broken at seq ${newest.seq - 1}: entries after seq ${newest.seq - 2} were removed: `,
        ),
      ),
    ]);
  });

  it("a rewritten tail: entries removed, then new ones chained consistently in their place", async () => {
    const { config, written } = await threeDigests();
    const [middle, newest] = [written[1]!, written[2]!];
    const result = await withTriggersDisabled(w.iso.db, async (tx, operator) => {
      await removeEntriesFrom(tx, middle.seq);
      for (const [principal, body] of downloadPlan(w).slice(0, 4)) await makeDownload(operator.db, principal, body);
      const [now] = await tx<{ hash: string }[]>`select hash from disclosures where seq = ${middle.seq}`;
      const [later] = await tx<{ hash: string }[]>`select hash from disclosures where seq = ${newest.seq}`;
      return { verified: await verifyDigests(operator, verifierOf(config)), now: now!.hash, later: later!.hash };
    });
    // Each digest the rewrite reaches says so; the chain's links hold (it was re-hashed consistently), but not the last checkpoint.
    expect(result.verified.findings).toEqual([
      `history rewritten at or before seq ${middle.seq}: digest ${middle.key} records hash ${middle.hash}, the log holds ${result.now}`,
      `history rewritten at or before seq ${newest.seq}: digest ${newest.key} records hash ${newest.hash}, the log holds ${result.later}`,
      expect.stringMatching(/^the log does not verify: broken at seq \d+: history rewritten at or before seq /),
    ]);
  });

  it("a missing digest, in the middle (the link from the next one) or at the end (the database's record of it)", async () => {
    const { config, written } = await threeDigests();
    const { client: store, bucket } = config.store;
    const middle = await getObjectBytes(store, bucket, written[1]!.key);
    await store.send(new DeleteObjectCommand({ Bucket: bucket, Key: written[1]!.key }));
    expect((await verifyDigests(w.iso.operator, verifierOf(config))).findings).toEqual([
      `the digest ${written[1]!.key} is missing from the store (the database recorded writing it)`,
      `the digest before ${written[2]!.key} is missing`,
    ]);
    await putObject(store, bucket, written[1]!.key, middle, "application/json");
    await store.send(new DeleteObjectCommand({ Bucket: bucket, Key: written[2]!.key }));
    expect((await verifyDigests(w.iso.operator, verifierOf(config))).findings).toEqual([
      `the digest ${written[2]!.key} is missing from the store (the database recorded writing it)`,
    ]);
  });

  it("a forged digest: signed by another key, or altered after signing", async () => {
    const { config, written } = await threeDigests();
    const { client: store, bucket, prefix } = config.store;
    const newest = written[2]!;
    const newestBytes = await getObjectBytes(store, bucket, newest.key);
    const genuine = JSON.parse(newestBytes.toString()) as HeadDigest & { signature: string };
    // Someone's own key pair: a digest that would let a shorter log pass, linked correctly.
    const other = generateKeyPairSync("ed25519");
    const forged: HeadDigest = {
      ...genuine,
      seq: 1,
      time: new Date(Date.parse(genuine.time) + 1000).toISOString(),
      previous_digest_sha256: sha256(newestBytes),
      public_key_sha256: publicKeySha256(other.publicKey),
    };
    const forgedKey = digestKey(prefix, new Date(forged.time), 1);
    await putObject(
      store,
      bucket,
      forgedKey,
      Buffer.from(
        canonicalJson({
          ...forged,
          signature: sign(null, Buffer.from(canonicalJson(forged)), other.privateKey).toString("base64"),
        }),
      ),
    );
    // The genuine newest digest with its hash changed and the signature kept.
    const alteredKey = digestKey(prefix, new Date(Date.parse(genuine.time) + 2000), genuine.seq);
    await putObject(
      store,
      bucket,
      alteredKey,
      Buffer.from(canonicalJson({ ...genuine, hash: "ab".repeat(32), previous_digest_sha256: sha256(newestBytes) })),
    );
    const found = await verifyDigests(w.iso.operator, verifierOf(config));
    expect(found.findings).toEqual([
      `digest ${forgedKey} is forged: it names another signing key (${publicKeySha256(other.publicKey)}, not ${publicKeySha256(config.publicKey)})`,
      `digest ${alteredKey} is forged or altered: its signature does not verify with the public key`,
    ]);
    // A verifier holding another public key trusts none of them.
    const wrongVerifier = await verifyDigests(w.iso.operator, { store: config.store, publicKey: other.publicKey });
    expect(wrongVerifier.findings.filter((f) => f.includes("names another signing key"))).toHaveLength(4);
  });

  it("a chain broken below every digest", async () => {
    const { config } = await threeDigests();
    const result = await withTriggersDisabled(w.iso.db, async (tx, operator) => {
      await tx`update disclosures set total_bytes = total_bytes + 1 where seq = 2`;
      return verifyDigests(operator, verifierOf(config));
    });
    expect(result.findings).toEqual([
      "the log does not verify: broken at seq 2: the entry does not hash to its recorded hash (altered)",
    ]);
    expect(await headSeq()).toBeGreaterThan(2);
  });
});

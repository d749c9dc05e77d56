import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { publicKeySha256 } from "@/lib/disclosures/digest";
import { adminCli, type CliEnv, type CliOutput } from "@/lib/testing/admin-cli";
import {
  buildWorld,
  downloadPlan,
  exportOracle,
  makeSequentially,
  parseCsv,
  type Made,
  type World,
} from "@/lib/testing/disclosure-fixtures";

// `das-admin disclosures verify|digest|export` run as an operator would, against a database of their own:
// the tamper test breaks the chain for real, which must never happen to the run's shared log.

const EXPORT_USAGE = "Usage: das-admin disclosures export [options]\n";
const VERIFY_USAGE = "Usage: das-admin disclosures verify [options]\n";
const CSV_HEADER =
  "seq,id,occurred_at,organization,organization_name,api_key,user,reviewer_role,channel,dataset_id,version,licence_id,terms_sha256,episode_count,file_count,total_bytes,expires_at,request_id,requested_scope,hash";

const admin = adminCli("disclosures-cli", { databaseUrl: () => w.iso.url, operator: "cli-test" });
const scratch = admin.dataDir;

type Run = CliOutput;

let w: World;
let made: Made[];
let oracle: Record<string, unknown>[];
/** The first entry's time in each of three seconds. */
let groups: Date[];

/**
 * A walk's progress line ("verified 18 entries (to seq 18), 170 entries/s") is printed once it has
 * run for a second, which a busy machine can make any walk of these 18 entries do: not part of
 * what the runs below are compared on.
 */
const PROGRESS_LINE = /^verified [\d,]+ entries \(to seq \d+\), [\d,]+ entries\/s\n/gm;

/** A run of das-admin, with the walk's progress line taken out of what it printed. */
const das = (args: string[], env: CliEnv = {}): Promise<Run> =>
  admin.run(args, { env }).then((run) => ({ ...run, stderr: run.stderr.replace(PROGRESS_LINE, "") }));

// The digests' key pair: the signing key as a file (DIGEST_SIGNING_KEY names its path), the
// public key as PEM in the variable (a verifier holds only that); a prefix of this file's own.
const signing = generateKeyPairSync("ed25519");
const signingKeyFile = path.join(scratch, "digest-signing-key.pem");
writeFileSync(signingKeyFile, signing.privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
const publicPem = signing.publicKey.export({ type: "spki", format: "pem" }).toString();
const digestPrefix = `cli-digests-${Date.now()}/`;
// The AWS SDK warns once per process that it will need Node 22 from 2027: not this test's subject.
const quietSdk = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" };
const digestEnv = { ...quietSdk, DIGEST_SIGNING_KEY: signingKeyFile, DIGEST_PREFIX: digestPrefix };
const verifierEnv = { ...quietSdk, DIGEST_PUBLIC_KEY: publicPem, DIGEST_PREFIX: digestPrefix };
let digestKey: string;

beforeAll(async () => {
  w = await buildWorld("cli");
  const plan = downloadPlan(w);
  made = [];
  groups = [];
  // Each group in a later second than the one before: the log's clock g seconds ahead.
  for (let g = 0; g < 3; g++) {
    const group = await makeSequentially(w, plan, { clockAhead: g });
    groups.push(group[0]!.occurredAt);
    made.push(...group);
  }
  oracle = exportOracle(w, made);
});

afterAll(async () => {
  await w?.iso.drop();
});

const time = (o: Record<string, unknown>) => Date.parse(o.occurred_at as string);

describe("das-admin disclosures export", () => {
  it("streams the log as JSON Lines or CSV, filtered by every option and combinations", {
    timeout: 180_000,
  }, async () => {
    const episodeA = w.catalog.get(`${w.dsA}@1.0.0`)![0]!.episode_id;
    const contributorsOf = (i: number) => {
      const m = made[i]!;
      const held = new Set(oracle[i]!.episode_ids as string[]);
      return new Set(
        w.catalog
          .get(`${m.body.dataset_id}@${m.body.version}`)!
          .filter((e) => held.has(e.episode_id))
          .map((e) => e.contributor),
      );
    };
    const cases: [string[], (o: Record<string, unknown>, i: number) => boolean][] = [
      [[], () => true],
      [["--org", w.org1.slug], (o) => o.organization === w.org1.slug],
      [["--org", w.org2.slug], (o) => o.organization === w.org2.slug],
      [["--dataset", w.dsB], (o) => o.dataset_id === w.dsB],
      [["--from", groups[1]!.toISOString()], (o) => time(o) >= groups[1]!.getTime()],
      // --to includes its instant (a closed range, as on the portal).
      [["--to", groups[1]!.toISOString()], (o) => time(o) <= groups[1]!.getTime()],
      [
        ["--from", groups[1]!.toISOString(), "--to", groups[2]!.toISOString()],
        (o) => time(o) >= groups[1]!.getTime() && time(o) <= groups[2]!.getTime(),
      ],
      [
        ["--org", w.org1.slug, "--dataset", w.dsA, "--from", groups[1]!.toISOString()],
        (o) => o.organization === w.org1.slug && o.dataset_id === w.dsA && time(o) >= groups[1]!.getTime(),
      ],
      [["--from", "2000-01-01"], () => true],
      [["--to", "2000-01-01"], () => false],
      [
        ["--key", w.keys1[1].keyPrefix, "--version", "1.1.0"],
        (o) => o.api_key === w.keys1[1].keyPrefix && o.version === "1.1.0",
      ],
      [["--user", w.user2.email, "--channel", "portal"], (o) => o.user === w.user2.email && o.channel === "portal"],
      [["--channel", "api", "--org", w.org1.slug], (o) => o.channel === "api" && o.organization === w.org1.slug],
      [
        ["--episode", episodeA, "--from", groups[1]!.toISOString()],
        (o) => (o.episode_ids as string[]).includes(episodeA) && time(o) >= groups[1]!.getTime(),
      ],
      [["--contributor", w.contributors.z], (o, i) => contributorsOf(i).has(w.contributors.z)],
      [["--licence", String(oracle[0]!.licence_id)], (o) => o.licence_id === oracle[0]!.licence_id],
    ];
    // Each run starts node and tsx (about a second of CPU): a few at a time.
    const runs: Run[] = [];
    for (const [args] of cases) {
      runs.push(
        ...(await Promise.all([
          das(["disclosures", "export", "--format", "jsonl", ...args]),
          das(["disclosures", "export", "--format", "csv", ...args]),
        ])),
      );
    }
    for (const [i, [args, keep]] of cases.entries()) {
      const want = oracle.filter((o, i) => keep(o, i));
      const name = args.join(" ") || "no filter";
      if (args.length && args[1] !== "2000-01-01") {
        expect(want.length, `${name} selects something`).toBeGreaterThan(0);
        expect(want.length, `${name} leaves something out`).toBeLessThan(oracle.length);
      }
      const [jsonl, csv] = [runs[2 * i]!, runs[2 * i + 1]!];
      expect(jsonl.code, `${name}: ${jsonl.stderr}`).toBe(0);
      expect(jsonl.stderr, name).toBe(`Exported ${want.length} entries.\n`);
      expect(
        jsonl.stdout
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
        name,
      ).toEqual(want);
      expect(jsonl.stdout === "" || jsonl.stdout.endsWith("\n"), name).toBe(true);

      expect(csv.code, `${name}: ${csv.stderr}`).toBe(0);
      expect(csv.stderr, name).toBe(`Exported ${want.length} entries.\n`);
      const records = parseCsv(csv.stdout);
      expect(records[0]!.join(","), name).toBe(CSV_HEADER);
      expect(
        records.slice(1).map((r) => [Number(r[0]), r[1], r[3], r[9], r[2]]),
        name,
      ).toEqual(want.map((o) => [o.seq, o.id, o.organization, o.dataset_id, o.occurred_at]));
    }
  });

  it("exits 2 with the usage for a missing or bad --format, a bad --from or --to, or an unknown option", {
    timeout: 180_000,
  }, async () => {
    const runs = await Promise.all([
      das(["disclosures", "export", "--format", "xml"]),
      das(["disclosures", "export"]),
      das(["disclosures", "export", "--format", "csv", "--from", "yesterday"]),
      das(["disclosures", "export", "--format", "jsonl", "--to", "2026-13-45"]),
      das(["disclosures", "export", "--format", "csv", "--from", "1"]),
      das(["disclosures", "export", "--format", "csv", "--from", "12/01/2026"]),
      das(["disclosures", "export", "--format", "csv", "--to", "2026-02-30"]),
      das(["disclosures", "export", "--format", "csv", "--channel", "email"]),
      das(["disclosures", "export", "--format", "csv", "extra"]),
      das(["disclosures", "verify", "now"]),
    ]);
    const messages = [
      "das-admin: --format must be csv or jsonl.",
      "das-admin: --format must be csv or jsonl.",
      "das-admin: --from takes an ISO 8601 date or date-time, not 'yesterday'.",
      "das-admin: --to takes an ISO 8601 date or date-time, not '2026-13-45'.",
      "das-admin: --from takes an ISO 8601 date or date-time, not '1'.",
      "das-admin: --from takes an ISO 8601 date or date-time, not '12/01/2026'.",
      "das-admin: --to takes an ISO 8601 date or date-time, not '2026-02-30'.",
      "das-admin: --channel must be one of api, portal, preview, hub.",
      "das-admin: Expected 0 argument(s), got 1.",
      "das-admin: Expected 0 argument(s), got 1.",
    ];
    for (const [i, run] of runs.entries()) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr.startsWith(messages[i]!), run.stderr).toBe(true);
      // The usage that follows is that of the command that was wrong.
      expect(run.stderr).toContain(`\n\n${i === runs.length - 1 ? VERIFY_USAGE : EXPORT_USAGE}`);
    }
  });

  it("exits 1 for an unknown organisation, writing nothing", async () => {
    const run = await das(["disclosures", "export", "--format", "csv", "--org", "no-such-org"]);
    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toMatch(
      /^das-admin: No organisation 'no-such-org'\. The organisations are: .+ \(das-admin org list\)\.\n$/,
    );
  });
});

describe("das-admin disclosures verify and digest", () => {
  it("exits 0 with the count and head hash on an intact chain; later runs check only the entries after the last checkpoint", async () => {
    const [head] = await w.iso.sql<{ hash: string }[]>`select hash from disclosures order by seq desc limit 1`;
    expect(head!.hash).toBe(oracle.at(-1)!.hash);
    const run = await das(["disclosures", "verify"]);
    expect(run).toEqual({
      code: 0,
      stdout: "",
      stderr: `Disclosure log intact: 18 entries verified, head hash ${head!.hash}.\n`,
    });
    const [checkpoint] = await w.iso.sql<
      { verified_at: Date }[]
    >`select verified_at from disclosure_checkpoints where seq = 18`;
    const again = await das(["disclosures", "verify"]);
    expect(again).toEqual({
      code: 0,
      stdout: "",
      stderr:
        `Disclosure log intact: 18 entries, head hash ${head!.hash}; 0 new entries verified after seq 18, ` +
        `whose hash still matches its verification of ${checkpoint!.verified_at.toISOString()}. --full walks every entry.\n`,
    });
    const full = await das(["disclosures", "verify", "--full"]);
    expect(full).toEqual({
      code: 0,
      stdout: "",
      stderr: `Disclosure log intact: 18 entries verified, head hash ${head!.hash}.\n`,
    });
    const modes = await w.iso.sql<{ mode: string }[]>`select mode from disclosure_checkpoints order by id`;
    expect(modes.map((m) => m.mode)).toEqual(["incremental", "full"]);
  });

  it("writes a signed digest, prints the public key, and verifies the log against the digests with the public key alone", async () => {
    const written = await das(["disclosures", "digest"], digestEnv);
    const [head] = await w.iso.sql<{ hash: string }[]>`select hash from disclosures order by seq desc limit 1`;
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toBe("");
    expect(written.stderr).toMatch(
      new RegExp(
        `^Digest written: s3://${inject("storeEnv").S3_BUCKET}/${digestPrefix}\\d{4}/\\d{2}/\\d{2}/[^ ]+_seq-18\\.json \\(seq 18, hash ${head!.hash}\\)\\.\\n$`,
      ),
    );
    digestKey = /s3:\/\/[^/]+\/(\S+) /.exec(written.stderr)![1]!;

    const key = await das(["disclosures", "digest", "--public-key"], digestEnv);
    expect(key).toEqual({
      code: 0,
      stdout: publicPem,
      stderr: `Public key sha256 ${publicKeySha256(createPublicKey(publicPem))}.\n`,
    });

    const verified = await das(["disclosures", "verify", "--digests"], verifierEnv);
    expect(verified).toEqual({
      code: 0,
      stdout: "",
      stderr: `Disclosure log agrees with all 1 digests (newest ${digestKey}, seq 18); the chain verifies from the first entry to seq 18, head hash ${head!.hash}.\n`,
    });
    // Without any key there is nothing to check digests with: a failure, said so.
    const keyless = await das(["disclosures", "verify", "--digests"]);
    expect(keyless).toEqual({
      code: 1,
      stdout: "",
      stderr: "das-admin: Neither DIGEST_PUBLIC_KEY nor DIGEST_SIGNING_KEY is set: no key to check digests with.\n",
    });
  });

  // Last in the file: it breaks this database's chain for good (the database is dropped afterwards).
  it("exits 1 naming the break: an altered entry (--full), entries removed from the end (incremental and --digests), a missing seq", async () => {
    /** Commits an edit with the append-only triggers off, as a superuser could. */
    const superuserEdit = async (edit: (tx: typeof w.iso.sql) => Promise<unknown>) => {
      const sql = w.iso.sql;
      await sql`alter table disclosures disable trigger disclosures_append_only`;
      await sql`alter table disclosure_episodes disable trigger disclosure_episodes_append_only`;
      await sql.begin((tx) => edit(tx as unknown as typeof sql));
      await sql`alter table disclosures enable trigger disclosures_append_only`;
      await sql`alter table disclosure_episodes enable trigger disclosure_episodes_append_only`;
    };

    await superuserEdit((tx) => tx`update disclosures set total_bytes = total_bytes + 1 where seq = 12`);
    // Entry 12 lies below the checkpoint at 18: the incremental check cannot see it, the full walk does.
    expect(await das(["disclosures", "verify"])).toMatchObject({ code: 0 });
    const first = await das(["disclosures", "verify", "--full"]);
    expect(first).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "Disclosure log BROKEN at seq 12: the entry does not hash to its recorded hash (altered). 11 entries before it verify.\n",
    });

    // The last two entries removed: the checkpoint and the digest at 18 both show it.
    await superuserEdit(async (tx) => {
      await tx`delete from disclosure_episodes where disclosure_id in (select id from disclosures where seq > 16)`;
      await tx`delete from disclosures where seq > 16`;
    });
    const [latest] = await w.iso.sql<
      { verified_at: Date }[]
    >`select verified_at from disclosure_checkpoints order by seq desc, verified_at desc limit 1`;
    const cut = await das(["disclosures", "verify"]);
    expect(cut).toEqual({
      code: 1,
      stdout: "",
      stderr: `Disclosure log BROKEN at seq 17: entries after seq 16 were removed: the log ends at seq 16 but seq 18 was verified at ${latest!.verified_at.toISOString()}. 16 entries before it verify.\n`,
    });
    const againstDigests = await das(["disclosures", "verify", "--digests"], verifierEnv);
    expect(againstDigests).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "Disclosure log does NOT agree with its digests (2 findings):\n" +
        `  - entries removed from the end: digest ${digestKey} covers seq 18, the log ends at 16\n` +
        "  - the log does not verify: broken at seq 12: the entry does not hash to its recorded hash (altered)\n",
    });

    // An earlier break is the one reported: an entry deleted with its episodes.
    await superuserEdit(async (tx) => {
      await tx`delete from disclosure_episodes where disclosure_id = (select id from disclosures where seq = 5)`;
      await tx`delete from disclosures where seq = 5`;
    });
    const second = await das(["disclosures", "verify", "--full"]);
    expect(second).toEqual({
      code: 1,
      stdout: "",
      stderr: "Disclosure log BROKEN at seq 5: seq 5 is missing. 4 entries before it verify.\n",
    });
  });
});

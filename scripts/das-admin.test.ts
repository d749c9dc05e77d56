import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { verify } from "@node-rs/argon2";
import { beforeAll, describe, expect, it } from "vitest";
import { adminCli } from "@/lib/testing/admin-cli";
import { authenticateApiKey } from "@/lib/auth/api-keys";
import { getDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { catalogRows, NOTHING } from "@/lib/testing/catalog-rows";
import {
  createTestOrg,
  grant,
  importTestDataset,
  randomEpisodes,
  uniqueId,
  writeImportDir,
} from "@/lib/testing/fixtures";

// Each run starts node and tsx (about a second), so the tests batch independent runs with Promise.all.

const KEY_ON_STDOUT = /^das_[0-9A-Za-z]{43}\n$/;
const sql = () => getDb().$client;

/** The real CLI as an operator runs it (`npx das-admin ...`), against this run's database. */
const das = adminCli("admin-test", { operator: "cli-test" });
/** The same against the embedded default (no DATABASE_URL), with its data in `dataDir`. */
const embedded = (dataDir: string, args: string[]) =>
  das.run(args, { env: { DAS_DATA_DIR: dataDir, DATABASE_URL: undefined } });

const USAGE_HEAD = "Usage: das-admin <command>\n";

describe("das-admin usage", () => {
  it("exits 2 with the usage for a missing or unknown command and for wrong arguments", async () => {
    const [none, unknown, partial, missingArg, tooMany, badOption, badRole, badSeed] = await Promise.all([
      das.run([]),
      das.run(["frobnicate"]),
      das.run(["org"]),
      das.run(["org", "create"]),
      das.run(["licence", "grant", "org-a", "ds-a", "1.0.0", "extra"]),
      das.run(["org", "create", "org-a", "--colour", "red"]),
      das.run(["user", "create", "someone@example.com", "--role", "boss"]),
      das.run(["seed", "--episodes", "0"]),
    ]);
    expect(none).toMatchObject({ code: 2, stderr: "" });
    expect(none.stdout.startsWith(USAGE_HEAD)).toBe(true);
    // The message, a blank line, and the usage of the command that was wrong.
    for (const [run, message, usage] of [
      [unknown, "das-admin: unknown command 'frobnicate'.", USAGE_HEAD],
      [partial, "das-admin: unknown command 'org'.", "Usage: das-admin org <command>\n"],
      [missingArg, "das-admin: Expected 1 argument(s), got 0.", "Usage: das-admin org create [options] <slug>\n"],
      [
        tooMany,
        "das-admin: Expected 3 argument(s), got 4.",
        "Usage: das-admin licence grant [options] <org> <dataset> <version>\n",
      ],
      [badOption, "das-admin: Unknown option '--colour'", "Usage: das-admin org create [options] <slug>\n"],
      [
        badRole,
        "das-admin: --role must be one of admin, reviewer, licensee.",
        "Usage: das-admin user create [options] <email>\n",
      ],
      [badSeed, "das-admin: --episodes takes a positive whole number.", "Usage: das-admin seed [options]\n"],
    ] as const) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr.startsWith(message)).toBe(true);
      expect(run.stderr).toContain(`\n\n${usage}`);
    }
  });

  it("--help prints the usage and exits 0; migrate exits 0 on an up-to-date database", async () => {
    const [help, migrate] = await Promise.all([das.run(["--help"]), das.run(["migrate"])]);
    expect(help.code).toBe(0);
    expect(help.stdout.startsWith(USAGE_HEAD)).toBe(true);
    expect(migrate).toEqual({ code: 0, stdout: "", stderr: "Database schema is up to date.\n" });
  });
});

describe("das-admin org create", () => {
  it("creates an organisation, and refuses a duplicate or malformed slug with exit 1", async () => {
    const slug = uniqueId("org");
    const created = await das.run(["org", "create", slug, "--name", "Acme Robotics"]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toBe("");
    expect(created.stderr).toMatch(new RegExp(`^Created organisation ${slug} \\((org_[0-9A-Za-z]+)\\)\\.\\n$`));
    const [row] = await sql()`select id, name from organizations where slug = ${slug}`;
    expect(created.stderr).toContain(`(${row!.id})`);
    expect(row!.name).toBe("Acme Robotics");

    const [duplicate, malformed] = await Promise.all([
      das.run(["org", "create", slug]),
      das.run(["org", "create", "Not A Slug"]),
    ]);
    expect(duplicate).toEqual({
      code: 1,
      stdout: "",
      stderr: `das-admin: An organisation with slug '${slug}' already exists.\n`,
    });
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/^das-admin: An organisation slug is lower-case letters/);
    const [{ n }] = (await sql()`select count(*)::int as n from organizations where slug = ${slug}`) as unknown as [
      { n: number },
    ];
    expect(n).toBe(1);
  });
});

describe("das-admin licence and key", () => {
  let datasetId: string;
  let version100: number;

  beforeAll(async () => {
    datasetId = await importTestDataset([
      { version: "1.0.0", episodes: randomEpisodes(3, 1) },
      { version: "1.1.0", episodes: randomEpisodes(3, 2) },
    ]);
    const [row] = await sql()`select id from dataset_versions where dataset_id = ${datasetId} and version = '1.0.0'`;
    version100 = Number(row!.id);
  });

  const activeLicences = async (organizationId: string) =>
    (await sql()`select id from licences where organization_id = ${organizationId} and revoked_at is null`).map(
      (r) => r.id as string,
    );

  it("grants a licence once (a second grant is a no-op) and revokes it", async () => {
    const org = await createTestOrg();
    const granted = await das.run(["licence", "grant", org.slug, datasetId, "1.0.0"]);
    expect(granted.code, granted.stderr).toBe(0);
    const id = /^Granted licence (lic_[0-9A-Za-z]+) for /.exec(granted.stderr)?.[1];
    expect(granted.stderr).toMatch(
      new RegExp(
        `^Granted licence ${id} for ${datasetId}@1\\.0\\.0 to ${org.slug}, usable from \\S+Z, with no end\\.\n$`,
      ),
    );
    expect(await activeLicences(org.id)).toEqual([id]);

    const again = await das.run(["licence", "grant", org.slug, datasetId, "1.0.0"]);
    expect(again).toMatchObject({ code: 0, stdout: "" });
    expect(again.stderr).toMatch(
      new RegExp(
        `^Already held: licence ${id} for ${datasetId}@1\\.0\\.0 to ${org.slug}, usable from \\S+Z, with no end\\.\n$`,
      ),
    );
    expect(await activeLicences(org.id)).toEqual([id]);

    const revoked = await das.run(["licence", "revoke", org.slug, datasetId, "1.0.0"]);
    expect(revoked).toEqual({
      code: 0,
      stdout: "",
      stderr: `Revoked licence ${id} for ${datasetId}@1.0.0 from ${org.slug}.\n`,
    });
    expect(await activeLicences(org.id)).toEqual([]);
    const [row] = await sql()`select revoked_at is not null as revoked from licences where id = ${id!}`;
    expect(row!.revoked).toBe(true);

    const [revokeAgain, unknownVersion, unknownOrg] = await Promise.all([
      das.run(["licence", "revoke", org.slug, datasetId, "1.0.0"]),
      das.run(["licence", "grant", org.slug, datasetId, "9.9.9"]),
      das.run(["licence", "grant", uniqueId("org"), datasetId, "1.0.0"]),
    ]);
    expect(revokeAgain).toEqual({
      code: 1,
      stdout: "",
      stderr: `das-admin: The organisation holds no active licence for ${datasetId}@1.0.0.\n`,
    });
    // Each names what there is to choose from.
    expect(unknownVersion).toMatchObject({ code: 1, stdout: "" });
    expect(unknownVersion.stderr).toMatch(
      new RegExp(
        `^das-admin: Dataset '${datasetId}' has no version '9\\.9\\.9'\\. Its versions are: [0-9., ]*1\\.0\\.0[0-9., ]*\\.\\n$`,
      ),
    );
    expect(unknownOrg.code).toBe(1);
    expect(unknownOrg.stderr).toMatch(
      /^das-admin: No organisation 'org-[0-9a-f]+'\. The organisations are: .+ \(das-admin org list\)\.\n$/,
    );
  });

  it("key create prints only the secret on stdout; the key authenticates until key revoke", async () => {
    const org = await createTestOrg();
    await grant(org.id, datasetId, "1.0.0");

    const [plain, narrowed, unlicensed, badScope, badExpiry] = await Promise.all([
      das.run(["key", "create", org.slug]),
      das.run([
        "key",
        "create",
        org.slug,
        "--name",
        "ci runner",
        "--expires-in",
        "30d",
        "--scope",
        `${datasetId}@1.0.0`,
      ]),
      das.run(["key", "create", org.slug, "--scope", `${datasetId}@1.1.0`]),
      das.run(["key", "create", org.slug, "--scope", datasetId]),
      das.run(["key", "create", org.slug, "--expires-in", "soon"]),
    ]);

    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(KEY_ON_STDOUT);
    const secret = plain.stdout.trim();
    expect(plain.stderr).toMatch(
      new RegExp(
        `^Issued key ${secret.slice(0, 12)}… \\(key_[0-9A-Za-z]+\\) for ${org.slug}\\. It is shown only now:\\n$`,
      ),
    );
    expect(plain.stderr).not.toContain(secret);
    const principal = await authenticateApiKey(getDb(), secret);
    expect(principal).toMatchObject({
      kind: "api_key",
      organizationId: org.id,
      keyPrefix: secret.slice(0, 12),
      narrowed: false,
    });

    expect(narrowed.code, narrowed.stderr).toBe(0);
    expect(narrowed.stdout).toMatch(KEY_ON_STDOUT);
    expect(narrowed.stderr).toMatch(/, expires \d{4}-\d\d-\d\dT[\d:.]+Z\. It is shown only now:\n$/);
    const narrowedPrincipal = await authenticateApiKey(getDb(), narrowed.stdout.trim());
    expect(narrowedPrincipal).toMatchObject({ organizationId: org.id, narrowed: true });
    const [stored] = await sql()`
      select name, extract(epoch from expires_at)::float8 * 1000 as expires_ms,
             array(select version_id::int from api_key_scopes where key_id = k.id) as scope
      from api_keys k where id = ${narrowedPrincipal.keyId}`;
    expect(stored!.name).toBe("ci runner");
    expect(stored!.scope).toEqual([version100]);
    expect(Math.abs(stored!.expires_ms - (Date.now() + 30 * 86_400_000))).toBeLessThan(10 * 60_000);

    expect(unlicensed).toEqual({
      code: 1,
      stdout: "",
      stderr: `das-admin: The organisation holds no licence for ${datasetId}@1.1.0, so a key cannot be narrowed to it.\n`,
    });
    expect(badScope.code).toBe(2);
    expect(badScope.stdout).toBe("");
    expect(badScope.stderr.startsWith(`das-admin: --scope takes <dataset_id>@<version>, not '${datasetId}'.`)).toBe(
      true,
    );
    expect(badExpiry.code).toBe(2);
    expect(badExpiry.stderr.startsWith("das-admin: 'soon' is not a duration")).toBe(true);
    const [{ n }] =
      (await sql()`select count(*)::int as n from api_keys where organization_id = ${org.id}`) as unknown as [
        { n: number },
      ];
    expect(n).toBe(2);

    const revoked = await das.run(["key", "revoke", secret.slice(0, 12)]);
    expect(revoked).toEqual({
      code: 0,
      stdout: "",
      stderr: `Revoked key ${secret.slice(0, 12)}… (${principal.keyId}).\n`,
    });
    await expect(authenticateApiKey(getDb(), secret)).rejects.toMatchObject({
      code: "unauthorized",
      message: "This API key has been revoked.",
    });
    await expect(authenticateApiKey(getDb(), secret)).rejects.toBeInstanceOf(AppError);

    const [revokeAgain, byId, unknown] = await Promise.all([
      das.run(["key", "revoke", secret.slice(0, 12)]),
      das.run(["key", "revoke", narrowedPrincipal.keyId]),
      das.run(["key", "revoke", "das_00000000"]),
    ]);
    expect(revokeAgain).toEqual({ code: 1, stdout: "", stderr: "das-admin: That key is already revoked.\n" });
    expect(byId.code, byId.stderr).toBe(0);
    await expect(authenticateApiKey(getDb(), narrowed.stdout.trim())).rejects.toMatchObject({ code: "unauthorized" });
    expect(unknown).toEqual({ code: 1, stdout: "", stderr: "das-admin: No key matches that id or prefix.\n" });
  });
});

describe("das-admin user create", () => {
  it("reads the password from stdin and stores an argon2id hash of it", async () => {
    const org = await createTestOrg();
    const email = `${uniqueId("ada")}@example.com`;
    const password = "correct horse battery staple";

    const created = await das.run(
      ["user", "create", email.toUpperCase(), "--role", "licensee", "--org", org.slug, "--name", "Ada"],
      { stdin: `${password}\n` },
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toBe("");
    expect(created.stderr).toMatch(new RegExp(`^Created licensee ${email} \\(usr_[0-9A-Za-z]+\\)\\.\\n$`));
    const [user] = await sql()`select role, name, organization_id, password_hash from users where email = ${email}`;
    expect(user).toMatchObject({ role: "licensee", name: "Ada", organization_id: org.id });
    expect(user!.password_hash.startsWith("$argon2id$")).toBe(true);
    expect(await verify(user!.password_hash, password)).toBe(true);
    expect(await verify(user!.password_hash, `${password}\n`)).toBe(false);

    const other = `${uniqueId("bob")}@example.com`;
    const [duplicate, short, noOrg] = await Promise.all([
      das.run(["user", "create", email, "--role", "reviewer"], { stdin: "another long password\n" }),
      das.run(["user", "create", other, "--role", "admin"], { stdin: "short\n" }),
      das.run(["user", "create", other, "--role", "licensee"], { stdin: "a long enough password\n" }),
    ]);
    expect(duplicate).toEqual({
      code: 1,
      stdout: "",
      stderr: `das-admin: A user with email ${email} already exists.\n`,
    });
    expect(short).toEqual({ code: 1, stdout: "", stderr: "das-admin: A password needs at least 10 characters.\n" });
    expect(noOrg).toEqual({
      code: 1,
      stdout: "",
      stderr: "das-admin: A licensee belongs to an organisation: give one.\n",
    });
    const rows = await sql()`select email from users where email in (${email}, ${other})`;
    expect(rows.map((r) => r.email)).toEqual([email]);
  });
});

describe("das-admin import", () => {
  it("imports a good directory, finds it unchanged the second time, and refuses a bad one listing file:line problems", async () => {
    const ds = uniqueId("ds");
    const episodes = randomEpisodes(3, 5, `${ds}.`);
    const good = writeImportDir(ds, {
      version: "1.0.0",
      episodes,
      annotations: [{ episode_id: episodes[0]!.episode_id, label: "reach", start_s: 0, end_s: 0.5 }],
    });
    const bad = uniqueId("ds");
    const badDir = writeImportDir(
      bad,
      { version: "1.0.0", episodes: [] },
      {
        "version.json": '{\n  "version": "1.0",\n  "released_at": "2026-01-01T00:00:00Z"\n}\n',
        "episodes.jsonl": [
          JSON.stringify({ ...episodes[0], episode_id: `${bad}.e1` }),
          JSON.stringify({ ...episodes[1], episode_id: `${bad}.e1` }),
        ].join("\n"),
        "files.jsonl": JSON.stringify({ path: `${bad}/a.mp4`, size_bytes: -5, sha256: "0".repeat(64) }),
      },
    );
    try {
      const [imported, refused, missing] = await Promise.all([
        das.run(["import", good]),
        das.run(["import", badDir]),
        das.run(["import", path.join(das.dataDir, "no-such-dir")]),
      ]);
      expect(imported).toEqual({
        code: 0,
        stdout: "",
        stderr: `Imported ${ds}@1.0.0: 3 episodes, 1 annotations, 0 files.\n`,
      });
      expect(refused).toEqual({
        code: 1,
        stdout: "",
        stderr: [
          "das-admin: Import refused, nothing was written:",
          `episodes.jsonl:2: duplicate episode_id '${bad}.e1' (first on line 1)`,
          "files.jsonl:1: size_bytes must be at least 0",
          "version.json:2: version: version must be three dot-separated numbers, e.g. 1.2.0",
          "",
        ].join("\n"),
      });
      expect(await catalogRows(bad)).toEqual(NOTHING);
      // A directory that is not there is a mistake in the command, named as such (exit 2).
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("no-such-dir does not exist: give the directory of the version to import");

      const again = await das.run(["import", good]);
      expect(again).toEqual({
        code: 0,
        stdout: "",
        stderr: `Unchanged: ${ds}@1.0.0: 3 episodes, 1 annotations, 0 files is already released with identical content.\n`,
      });
      expect(await catalogRows(ds)).toMatchObject({ datasets: 1, versions: 1, episodes: 3, annotations: 1 });
    } finally {
      rmSync(good, { recursive: true, force: true });
      rmSync(badDir, { recursive: true, force: true });
    }
  });
});

describe("das-admin on the embedded default (no DATABASE_URL)", () => {
  it("starts and stops its own PostgreSQL, and exits 1 when a command fails", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "das-admin-embedded-"));
    chmodSync(dataDir, 0o755); // as root, the server runs as the `postgres` user, which must reach its data dir
    const ds = uniqueId("ds");
    const dir = writeImportDir(
      ds,
      { version: "1.0.0", episodes: randomEpisodes(2, 9, `${ds}.`) },
      { "files.jsonl": '{"path":"/etc/passwd","size_bytes":1,"sha256":"x"}' },
    );
    try {
      const refused = await embedded(dataDir, ["import", dir]);
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toContain("\nfiles.jsonl:1: path must be relative");
      expect(refused.stderr).toContain("\nfiles.jsonl:1: sha256 must be 64 lower-case hex digits");
      const migrated = await embedded(dataDir, ["migrate"]);
      expect(migrated).toEqual({ code: 0, stdout: "", stderr: "Database schema is up to date.\n" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

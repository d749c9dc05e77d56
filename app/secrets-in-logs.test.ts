import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createUser } from "@/lib/admin/users";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { adminCli, type CliOutput } from "@/lib/testing/admin-cli";
import {
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import { attemptSignIn } from "@/lib/testing/portal-session";
import { callAction } from "@/lib/testing/server-actions";

// Everything the service and das-admin write while failing, captured and searched for secrets:
// every failure this suite can provoke (control characters in names, a taken email, writes
// refused by a database that became read-only, wrong and malformed sign-ins, API calls) runs
// against `next start` and the real CLI, and then no key, key hash, password hash, password,
// signed URL or session cookie may appear in their output.

const PASSWORD = `pw ${randomBytes(8).toString("hex")} long`;
const WRONG_PASSWORD = `wrong ${randomBytes(8).toString("hex")}`;
const NEW_PASSWORDS = [1, 2, 3, 4].map((n) => `new-${n} ${randomBytes(8).toString("hex")}`);
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

let server: AppServer;
/** The same service on a database that refuses writes (a failover to a standby): every insert fails in SQL. */
let readOnly: AppServer;
let readOnlyUrl: string;
let org: { id: string; slug: string };
let key: string;
let datasetId: string;
let adminEmail: string;
const secrets: string[] = [PASSWORD, WRONG_PASSWORD, ...NEW_PASSWORDS];
const cli: CliOutput[] = [];
const admin = adminCli("secrets");

beforeAll(async () => {
  org = await createTestOrg();
  key = (await createTestKey(org.id)).secret;
  secrets.push(key, sha256(key));
  const episodes = randomEpisodes(3, 77);
  datasetId = await importTestDataset([
    {
      version: "1.0.0",
      episodes,
      files: episodes.map((e) => ({
        path: `${e.episode_id}/cam.mp4`,
        episode_id: e.episode_id,
        stream: "cam",
        size_bytes: 3,
        sha256: "c".repeat(64),
      })),
    },
  ]);
  await grant(org.id, datasetId, "1.0.0");
  adminEmail = `${uniqueId("admin")}@secrets.example`;
  await createUser(operatorCtx(), { email: adminEmail, role: "admin", password: PASSWORD });
  const url = new URL(inject("databaseUrl"));
  url.searchParams.set("default_transaction_read_only", "on");
  readOnlyUrl = url.toString();
  [server, readOnly] = await Promise.all([startAppServer(), startAppServer({ DATABASE_URL: readOnlyUrl })]);
});

afterAll(async () => {
  await Promise.all([server?.stop(), readOnly?.stop()]);
});

/** Signs in over HTTP; the session cookie's value joins the secrets. */
async function adminSession(base: string): Promise<string> {
  const attempt = await attemptSignIn(base, adminEmail, PASSWORD);
  expect(attempt.ok).toBe(true);
  for (const pair of attempt.cookie.split("; ")) {
    const [name, value] = pair.split("=");
    if (name!.endsWith("session-token")) secrets.push(value!);
  }
  return attempt.cookie;
}

function dasAdmin(args: string[], options: { stdin?: string; readOnly?: boolean } = {}): Promise<CliOutput> {
  const env = options.readOnly ? { DATABASE_URL: readOnlyUrl } : {};
  return admin.run(args, { env, stdin: options.stdin }).then((run) => (cli.push(run), run));
}

function api(base: string, route: string, body?: unknown, bearer = key): Promise<Response> {
  return fetch(`${base}/api/v1${route}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${bearer}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe("secrets in logs", () => {
  it("refuses control characters in admin input before SQL, as invalid_body", async () => {
    const cookie = await adminSession(server.url);
    const refused = { ok: false, error: { code: "invalid_body" } };
    expect
      .soft(
        await callAction(
          server.url,
          "createUserAction",
          { email: "a\u0000b@secrets.example", role: "reviewer", password: NEW_PASSWORDS[0] },
          cookie,
        ),
      )
      .toMatchObject(refused);
    expect
      .soft(
        await callAction(
          server.url,
          "createUserAction",
          {
            email: `${uniqueId("n")}@secrets.example`,
            name: "Ann\u0000",
            role: "reviewer",
            password: NEW_PASSWORDS[0],
          },
          cookie,
        ),
      )
      .toMatchObject(refused);
    expect
      .soft(
        await callAction(
          server.url,
          "issueKeyAction",
          { organizationId: org.id, name: "k\u0000", expiresInDays: null, scope: [] },
          cookie,
        ),
      )
      .toMatchObject(refused);
    expect
      .soft(
        await callAction(server.url, "createOrganizationAction", { slug: uniqueId("o"), name: "Org\u0000" }, cookie),
      )
      .toMatchObject(refused);
    expect
      .soft(
        await callAction(
          server.url,
          "grantLicenceAction",
          { organizationId: "org_\u0000", datasetId, version: "1.0.0" },
          cookie,
        ),
      )
      .toMatchObject(refused);
    // Taken email: a clear 400, not a database error.
    expect
      .soft(
        await callAction(
          server.url,
          "createUserAction",
          { email: adminEmail, role: "reviewer", password: NEW_PASSWORDS[0] },
          cookie,
        ),
      )
      .toMatchObject({
        ok: false,
        error: { code: "invalid_parameter", message: `A user with email ${adminEmail} already exists.` },
      });
  });

  it("refuses them in das-admin too, with exit 1 and a clear message", async () => {
    const [keyName, orgName, email, taken] = await Promise.all([
      dasAdmin(["key", "create", org.slug, "--name", "k\u0001"]),
      dasAdmin(["org", "create", uniqueId("o"), "--name", "Org\u0007"]),
      dasAdmin(["user", "create", "a\u0001b@secrets.example", "--role", "reviewer"], {
        stdin: `${NEW_PASSWORDS[1]}\n`,
      }),
      dasAdmin(["user", "create", adminEmail, "--role", "reviewer"], { stdin: `${NEW_PASSWORDS[1]}\n` }),
    ]);
    expect
      .soft(keyName)
      .toMatchObject({ code: 1, stdout: "", stderr: "das-admin: A key name must not contain control characters.\n" });
    expect.soft(orgName).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "das-admin: An organisation name must not contain control characters other than tabs and line breaks.\n",
    });
    expect.soft(email).toMatchObject({
      code: 1,
      stdout: "",
      stderr: 'das-admin: "a\\u0001b@secrets.example" is not an email address.\n',
    });
    expect
      .soft(taken)
      .toMatchObject({ code: 1, stdout: "", stderr: `das-admin: A user with email ${adminEmail} already exists.\n` });
  });

  it("answers 503 when the database refuses writes, from actions, the API and das-admin", async () => {
    const cookie = await adminSession(readOnly.url);
    const unavailable = { ok: false, error: { code: "unavailable" } };
    expect
      .soft(
        await callAction(
          readOnly.url,
          "createUserAction",
          { email: `${uniqueId("ro")}@secrets.example`, role: "reviewer", password: NEW_PASSWORDS[2] },
          cookie,
        ),
      )
      .toMatchObject(unavailable);
    expect
      .soft(
        await callAction(
          readOnly.url,
          "issueKeyAction",
          { organizationId: org.id, name: "read-only", expiresInDays: 30, scope: [] },
          cookie,
        ),
      )
      .toMatchObject(unavailable);
    expect
      .soft(await callAction(readOnly.url, "createOrganizationAction", { slug: uniqueId("ro") }, cookie))
      .toMatchObject(unavailable);
    const download = await api(readOnly.url, "/downloads", { dataset_id: datasetId, version: "1.0.0" });
    expect.soft(download.status).toBe(503);
    expect.soft(download.headers.get("retry-after")).toMatch(/^\d+$/);
    const [user, keyRun] = await Promise.all([
      dasAdmin(["user", "create", `${uniqueId("ro")}@secrets.example`, "--role", "reviewer"], {
        stdin: `${NEW_PASSWORDS[3]}\n`,
        readOnly: true,
      }),
      dasAdmin(["key", "create", org.slug, "--name", "read-only"], { readOnly: true }),
    ]);
    for (const run of [user, keyRun]) {
      expect.soft(run.code).toBe(1);
      expect.soft(run.stdout).toBe("");
      expect
        .soft(run.stderr)
        .toMatch(
          /^das-admin: DrizzleQueryError <- PostgresError 25006: cannot execute INSERT in a read-only transaction\n$/,
        );
    }
  });

  it("goes through sign-ins, API calls and a download without writing a secret", async () => {
    expect((await attemptSignIn(server.url, adminEmail, WRONG_PASSWORD)).ok).toBe(false);
    expect((await attemptSignIn(server.url, "a\u0000b@secrets.example", PASSWORD)).ok).toBe(false);
    expect((await api(server.url, "/datasets")).status).toBe(200);
    expect((await api(server.url, "/datasets", undefined, `das_${"x".repeat(43)}`)).status).toBe(401);
    const download = await api(server.url, "/downloads", { dataset_id: datasetId, version: "1.0.0" });
    expect(download.status).toBe(201);
    const { files } = (await download.json()) as { files: { url: string }[] };
    for (const file of files) secrets.push(new URL(file.url).searchParams.get("X-Amz-Signature")!);
  });

  it("wrote none of the secrets to the server's or das-admin's output", async () => {
    // Give the servers a moment to flush what they logged.
    await new Promise((resolve) => setTimeout(resolve, 500));
    // das-admin's stderr is its log; its stdout is the command's answer (a new key's secret, on purpose).
    const output = [server.output(), readOnly.output(), ...cli.map((run) => run.stderr)].join("\n");
    expect(secrets.length).toBeGreaterThan(10);
    for (const secret of secrets)
      expect.soft(output.includes(secret), `a secret of ${secret.length} characters is in the log`).toBe(false);
    expect(output).not.toMatch(/das_[0-9A-Za-z]{43}/);
    expect(output).not.toMatch(/\$argon2id\$/);
    expect(output).not.toMatch(/\b[0-9a-f]{64}\b/);
    expect(output).not.toMatch(/X-Amz-Signature|X-Amz-Credential/);
    expect(output).not.toMatch(/params:|Key \(/);
    // The failures above were logged: the search had something to search.
    expect(output).toContain("dependency unavailable");
    expect(output).toContain("portal sign-in refused");
  });
});

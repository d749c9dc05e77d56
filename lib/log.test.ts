import { createHash } from "node:crypto";
import net from "node:net";
import { AuthError, CredentialsSignin } from "next-auth";
import { describe, expect, it } from "vitest";
import { hashPassword } from "./auth/passwords";
import { getDb } from "./db/client";
import { users } from "./db/schema";
import { createTestKey, createTestOrg, uniqueId } from "./testing/fixtures";
import { errorFields } from "./log";

// What the log may say about an error, checked on real errors from the real database and
// network: the class, the code and schema names, never a parameter, a detail or a value.

const fail = (promise: PromiseLike<unknown>) =>
  Promise.resolve(promise).then(
    () => expect.fail("expected a failure"),
    (error: unknown) => error,
  );

describe("errorFields", () => {
  it("keeps a failed insert's parameters (an argon2id hash) out of a drizzle error's description and stack", async () => {
    const hash = await hashPassword("a long secret password");
    const error = await fail(
      getDb()
        .insert(users)
        .values({ id: uniqueId("usr"), email: "a\u0000b@x.example", role: "reviewer", passwordHash: hash }),
    );
    // The error itself carries the hash: that is what must not reach the log.
    expect(String((error as Error).message)).toContain("$argon2id$");
    const fields = errorFields(error);
    expect(fields.error).toBe("DrizzleQueryError <- PostgresError 22021");
    expect(JSON.stringify(fields)).not.toContain("argon2id");
    expect(JSON.stringify(fields)).not.toContain("params");
    expect(fields.stack).toMatch(/^at /);
    expect(fields.stack!.split("\n").every((line) => line.startsWith("at "))).toBe(true);
  });

  it("names the constraint of a unique violation but not the key value in its detail", async () => {
    const org = await createTestOrg();
    const key = await createTestKey(org.id);
    const keyHash = createHash("sha256").update(key.secret).digest("hex");
    const error = await fail(
      getDb()
        .$client`insert into api_keys (id, organization_id, name, key_hash, prefix) values (${uniqueId("key")}, ${org.id}, 'copy', ${keyHash}, 'das_copy')`,
    );
    expect((error as { detail?: string }).detail).toContain(keyHash);
    const fields = errorFields(error);
    expect(fields.error).toBe(
      'PostgresError 23505 constraint=api_keys_key_hash_unique table=api_keys: duplicate key value violates unique constraint "api_keys_key_hash_unique"',
    );
    expect(JSON.stringify(fields)).not.toContain(keyHash);
  });

  it("leaves out the message of a server error that quotes a value", async () => {
    const secret = "das_NotARealKeyButLooksLikeOne0123456789abcdefghij";
    const error = await fail(getDb().$client`select ${secret}::uuid`);
    expect((error as Error).message).toContain(secret);
    expect(errorFields(error).error).toBe("PostgresError 22P02");
    expect(JSON.stringify(errorFields(error))).not.toContain(secret);
  });

  it("keeps the message of a connection error, which names only the address", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const error = await new Promise((resolve) => net.connect(port, "127.0.0.1").once("error", resolve));
    expect(errorFields(error).error).toBe(`Error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it("gives only the class and frames of any other error, and follows causes", () => {
    const secret = "das_AbCdEfGh0123456789AbCdEfGh0123456789AbCdE";
    const inner = Object.assign(new Error(`detail ${secret}`), { code: "E_SOMETHING" });
    const outer = new TypeError(`first line\n    at ${secret} (fake frame)`, { cause: inner });
    const fields = errorFields(outer);
    expect(fields.error).toBe("TypeError <- Error E_SOMETHING");
    expect(JSON.stringify(fields)).not.toContain(secret);
    expect(fields.stack).toContain("log.test.ts");
    // Auth.js wraps the error it caught as `cause.err`, and is named by its `type` (the build minifies class names).
    const wrapped = new AuthError("", { cause: { err: inner } });
    Object.defineProperty(wrapped, "name", { value: "l" });
    expect(errorFields(wrapped).error).toBe("AuthError <- Error E_SOMETHING");
    const refused = new CredentialsSignin();
    Object.defineProperty(refused, "name", { value: "o" });
    expect(errorFields(refused).error).toBe("CredentialsSignin credentials");
    expect(errorFields("a thrown string").error).toBe("string");
  });
});

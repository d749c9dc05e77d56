import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "./embedded-default";
import { startEmbeddedPostgres } from "./embedded-postgres";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function scratch(): string {
  const dir = mkdtempSync(path.join(PROJECT_ROOT, ".data/pg-password-"));
  chmodSync(dir, 0o755); // as root, the server runs as the `postgres` user, which must reach its data dir
  dirs.push(dir);
  return dir;
}

/** The error code a login as the superuser with this password gets, or "ok". */
async function loginAs(url: string, password: string): Promise<string> {
  const target = new URL(url);
  target.password = password;
  const sql = postgres(target.toString(), { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await sql`select 1`;
    return "ok";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

describe("the embedded PostgreSQL's superuser password", () => {
  it("is random per installation, kept with mode 0600, and the well-known one is refused", {
    timeout: 120_000,
  }, async () => {
    const dir = scratch();
    const pg = await startEmbeddedPostgres(dir);
    try {
      const file = path.join(dir, "pg-password");
      const password = readFileSync(file, "utf8").trim();
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(password).toMatch(/^[0-9a-f]{48}$/);
      expect(new URL(pg.url).password).toBe(password);
      expect(await loginAs(pg.url, password)).toBe("ok");
      expect(await loginAs(pg.url, "postgres")).toBe("28P01"); // invalid_password
      // A second start on the same directory (das-admin beside npm run dev) reuses the server and the password.
      const again = await startEmbeddedPostgres(dir);
      expect(again.url).toBe(pg.url);
    } finally {
      await pg.stop();
    }
  });

  it("replaces the well-known password of a data directory made before installations had their own", {
    timeout: 180_000,
  }, async () => {
    const dir = scratch();
    const first = await startEmbeddedPostgres(dir);
    // The data directory as an older installation left it: the well-known password, no password file.
    const admin = postgres(first.url, { max: 1, onnotice: () => {} });
    await admin.unsafe("alter role postgres password 'postgres'");
    await admin.end();
    await first.stop();
    unlinkSync(path.join(dir, "pg-password"));

    const upgraded = await startEmbeddedPostgres(dir);
    try {
      expect(existsSync(path.join(dir, "pg-password"))).toBe(true);
      const password = readFileSync(path.join(dir, "pg-password"), "utf8").trim();
      expect(password).not.toBe("postgres");
      expect(await loginAs(upgraded.url, password)).toBe("ok");
      expect(await loginAs(upgraded.url, "postgres")).toBe("28P01");
    } finally {
      await upgraded.stop();
    }
  });
});

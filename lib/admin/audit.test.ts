import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { MIGRATIONS_DIR } from "@/lib/db/migrate";
import { createIsolatedDb } from "@/lib/testing/isolated-db";
import { importWithFiles } from "@/lib/testing/disclosure-fixtures";
import { randomEpisodes } from "@/lib/testing/fixtures";
import { grantLicence } from "./licences";
import { createOrganization } from "./organizations";
import { addTerms } from "./terms";
import { verifyAdminAudit } from "./audit";

// The admin audit as evidence: append-only by the database, and hash-chained so that a row changed
// or removed behind the trigger's back shows where.

describe("the admin audit", () => {
  it("refuses UPDATE, DELETE and TRUNCATE, and chains every change, concurrent ones included", async () => {
    const iso = await createIsolatedDb("audit");
    try {
      const other = iso.anotherPool();
      const operatorOn = (db: typeof iso.db) => ({ ...iso.operator, db });
      // Two instances' changes at once: one chain all the same.
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          createOrganization(operatorOn(i % 2 ? other : iso.db), { slug: `audited-${i}` }),
        ),
      );
      expect(await verifyAdminAudit(iso.operator)).toEqual({ ok: true, entries: 12 });
      const seqs = await iso.sql<{ seq: string }[]>`select a.seq::text as seq from admin_audit a order by a.seq`;
      expect(seqs.map((r) => Number(r.seq))).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      // A chained row names its place whatever the insert says.
      await iso.sql`insert into admin_audit (actor_kind, actor_id, actor_label, action, target_id, seq, prev_hash, hash)
        values ('operator', 'me', 'me', 'organization.create', 'x', 1, 'forged', 'forged')`;
      expect(await verifyAdminAudit(iso.operator)).toEqual({ ok: true, entries: 13 });

      await expect(iso.sql`update admin_audit set actor_label = 'someone else' where seq = 2`).rejects.toThrow(
        /append-only: UPDATE/,
      );
      await expect(iso.sql`delete from admin_audit where seq = 2`).rejects.toThrow(/append-only: DELETE/);
      await expect(iso.sql`truncate admin_audit`).rejects.toThrow(/append-only: TRUNCATE/);
    } finally {
      await iso.drop();
    }
  });

  it("shows a change or a removal made behind the trigger at the entry where it was made", async () => {
    const iso = await createIsolatedDb("audit");
    try {
      for (let i = 0; i < 4; i++) await createOrganization(iso.operator, { slug: `tampered-${i}` });
      const behindTheTrigger = (statement: string) =>
        iso.sql.unsafe(
          `alter table admin_audit disable trigger user; ${statement}; alter table admin_audit enable trigger user`,
        );
      await behindTheTrigger(`update admin_audit set details = '{"slug":"innocent"}' where seq = 2`);
      expect(await verifyAdminAudit(iso.operator)).toEqual({
        ok: false,
        entries: 1,
        broken_at_seq: 2,
        reason: "its content does not match its hash",
      });
      await behindTheTrigger("delete from admin_audit where seq in (1, 2)");
      expect(await verifyAdminAudit(iso.operator)).toMatchObject({
        ok: false,
        broken_at_seq: 3,
        reason: "seq 1 is missing",
      });
    } finally {
      await iso.drop();
    }
  });

  it("chains the entries written before migration 0023 as its trigger chains new ones", async () => {
    const iso = await createIsolatedDb("audit0023");
    const before = mkdtempSync(path.join(tmpdir(), "das-migrations-"));
    const url = new URL(iso.url);
    url.pathname = `/${iso.name}_early`;
    const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${iso.name}_early`);
    const client = postgres(url.toString(), { max: 1, onnotice: () => {} });
    try {
      // The migrations up to 0022, as a database of the day before had them.
      cpSync(MIGRATIONS_DIR, before, { recursive: true });
      const journal = JSON.parse(readFileSync(path.join(before, "meta/_journal.json"), "utf8"));
      journal.entries = journal.entries.filter((e: { idx: number }) => e.idx <= 22);
      writeFileSync(path.join(before, "meta/_journal.json"), JSON.stringify(journal));
      rmSync(path.join(before, "0023_audit_chain_and_licence_terms.sql"));
      await migrate(drizzle(client), { migrationsFolder: before });
      for (let i = 0; i < 3; i++)
        await client`insert into admin_audit (actor_kind, actor_id, actor_label, action, target_id, details, occurred_at)
          values ('operator', 'ops', 'ops (das-admin)', 'organization.create', ${`org_${i}`}, ${JSON.stringify({ slug: `early-${i}`, n: i + 0.5 })}::jsonb,
                  ${new Date(Date.UTC(2026, 0, 1, 0, 0, i, 123)).toISOString()})`;
      await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_DIR });
      await client`insert into admin_audit (actor_kind, actor_id, actor_label, action, target_id) values ('operator', 'ops', 'ops', 'organization.create', 'org_3')`;
      const ctx = { ...iso.operator, db: drizzle(client) as unknown as typeof iso.db };
      expect(await verifyAdminAudit(ctx)).toEqual({ ok: true, entries: 4 });
    } finally {
      await client.end();
      await admin.unsafe(`drop database if exists ${iso.name}_early with (force)`);
      await admin.end();
      rmSync(before, { recursive: true, force: true });
      await iso.drop();
    }
  });
});

describe("a licence", () => {
  it("keeps its terms, holder, version and start as granted: only its end and revocation change, and it is never removed", async () => {
    const iso = await createIsolatedDb("licence");
    try {
      const org = await createOrganization(iso.operator, { slug: "holder" });
      const episodes = randomEpisodes(1, 5);
      const datasetId = await importWithFiles(iso.sql, [
        { version: "1.0.0", episodes },
        { version: "2.0.0", episodes },
      ]);
      const terms = await addTerms(iso.operator, { title: "T", body: "# Terms\n\nNo redistribution.\n" });
      const sha = terms.document.sha256;
      const { id } = await grantLicence(iso.operator, {
        organizationId: org.id,
        datasetId,
        version: "1.0.0",
        termsSha256: sha,
      });
      for (const change of [
        iso.sql`update licences set terms_sha256 = null where id = ${id}`,
        iso.sql`update licences set organization_id = ${org.id} || 'x' where id = ${id}`,
        // Another version of the same dataset, which exists: only the trigger stands in the way.
        iso.sql`update licences set version_id = (select v.id from dataset_versions v
          where v.dataset_id = ${datasetId} and v.version = '2.0.0') where id = ${id}`,
        iso.sql`update licences set id = id || 'x' where id = ${id}`,
        iso.sql`update licences set starts_at = starts_at - interval '1 day' where id = ${id}`,
        iso.sql`update licences set granted_at = now() - interval '1 day' where id = ${id}`,
      ])
        await expect(change).rejects.toThrow(/immutable as granted/);
      await expect(iso.sql`delete from licences where id = ${id}`).rejects.toThrow(/DELETE is refused/);
      await expect(iso.sql`truncate licences cascade`).rejects.toThrow(/TRUNCATE is refused/);
      await iso.sql`update licences set ends_at = now() + interval '1 year' where id = ${id}`;
      await iso.sql`update licences set revoked_at = now() where id = ${id}`;
      const [row] = await iso.sql<{ terms_sha256: string; revoked: boolean }[]>`
        select terms_sha256, revoked_at is not null as revoked from licences where id = ${id}`;
      expect(row).toEqual({ terms_sha256: sha, revoked: true });
    } finally {
      await iso.drop();
    }
  });
});

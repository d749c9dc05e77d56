import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyChain } from "@/lib/disclosures/verify";
import { buildWorld, downloadPlan, makeDownload, type World } from "@/lib/testing/disclosure-fixtures";
import { createDb, type RootDb } from "./client";
import { migrateDatabase } from "./migrate";
import { asUser, ensureLoginRole, grantServiceRole } from "./roles";

// The service logs in as a role that owns nothing (DATABASE_URL), the migrations as the owner
// (DATABASE_OWNER_URL): the service's role writes and reads rows, the log's insert-only, and can
// change no table, its triggers or its partitions.

let w: World;
const role = `das_svc_${randomBytes(5).toString("hex")}`;
const password = randomBytes(12).toString("hex");
let service: RootDb;

beforeAll(async () => {
  w = await buildWorld("roles");
  const server = process.env.DATABASE_URL!;
  await ensureLoginRole(server, role, password);
  // The world was migrated by its owner; migrating again as the owner grants the service's role.
  await migrateDatabase(w.iso.url, { serviceRole: role });
  service = createDb(asUser(w.iso.url, role, password), { max: 2 });
});

afterAll(async () => {
  await service?.$client.end({ timeout: 5 });
  await w?.iso.drop();
  const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop role if exists ${role}`);
  await admin.end();
});

const refusal = (query: Promise<unknown>) =>
  query.then(
    () => "done",
    (error: { code?: string }) => error.code,
  );

describe("the service's role", () => {
  it("owns nothing, and appends downloads that verify", async () => {
    const [owned] = await w.iso.sql<{ n: number }[]>`
      select count(*)::int as n from pg_class where relowner = (select oid from pg_roles where rolname = ${role})`;
    expect(owned!.n).toBe(0);
    await makeDownload(service, ...downloadPlan(w)[0]!);
    await makeDownload(service, ...downloadPlan(w)[1]!);
    expect(await verifyChain(w.iso.operator)).toMatchObject({ intact: true, count: 2 });
  });

  it("may not change or remove the log's rows, even with its triggers' refusal aside", async () => {
    const sql = service.$client;
    // 42501: insufficient_privilege, before any trigger runs.
    expect(await refusal(sql`update disclosures set hash = hash`)).toBe("42501");
    expect(await refusal(sql`delete from disclosure_episodes`)).toBe("42501");
    expect(await refusal(sql`truncate disclosure_checkpoints`)).toBe("42501");
    expect(await refusal(sql`update disclosure_files set sha256 = sha256`)).toBe("42501");
    expect(await refusal(sql`delete from admin_audit`)).toBe("42501");
    expect(await refusal(sql`update licence_copies set sha256 = sha256`)).toBe("42501");
  });

  it("may not alter a table, turn the log's triggers off, or create one", async () => {
    const sql = service.$client;
    expect(await refusal(sql`alter table disclosures disable trigger disclosures_append_only`)).toBe("42501");
    expect(await refusal(sql`drop table disclosure_contributors`)).toBe("42501");
    expect(await refusal(sql`create table mine (x int)`)).toBe("42501");
  });

  it("may not detach a month of the log (archiving is the owner's) nor make one but through the owner's function", async () => {
    const sql = service.$client;
    const [month] = await w.iso.sql<{ name: string }[]>`
      select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'disclosures'::regclass order by 1 limit 1`;
    expect(await refusal(sql.unsafe(`alter table disclosures detach partition ${month!.name}`))).toBe("42501");
    expect(
      await refusal(
        sql`create table disclosures_y2099m01 partition of disclosures for values from ('2099-01-01') to ('2099-02-01')`,
      ),
    ).toBe("42501");
    const [made] = await sql<
      { made: number }[]
    >`select das_create_disclosure_months('2099-01-01', '2099-01-01') as made`;
    expect(made!.made).toBe(5);
    const [owner] = await w.iso.sql<
      { owner: string }[]
    >`select pg_get_userbyid(relowner) as owner from pg_class where relname = 'disclosures_y2099m01'`;
    expect(owner!.owner).not.toBe(role);
  });

  it("is refused by the migration's grant when it owns a table", async () => {
    await w.iso.sql.unsafe(`create table owned_by_service (x int); alter table owned_by_service owner to ${role}`);
    try {
      await expect(grantServiceRole(w.iso.sql, role)).rejects.toThrow(/owns 1 tables or sequences/);
    } finally {
      await w.iso.sql`drop table owned_by_service`;
    }
  });
});

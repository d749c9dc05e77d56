import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyChain } from "@/lib/disclosures/verify";
import { enqueueCopies } from "@/lib/fingerprints/jobs";
import {
  appendNamingFiles,
  at,
  buildWorld,
  downloadPlan,
  makeDownload,
  type World,
} from "@/lib/testing/disclosure-fixtures";
import { createDb, type RootDb } from "./client";
import { JOB_QUEUES, startJobQueue } from "./job-queue";
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

  it("writes what the Hub and fingerprinting write: files named in the chain, views, copies, their jobs", async () => {
    const sql = service.$client;
    const target = { datasetId: w.dsA, version: "1.0.0" };
    const [version] = await w.iso.sql<{ id: number }[]>`
      select id from dataset_versions where dataset_id = ${w.dsA} and version = '1.0.0'`;
    const [file] = await w.iso.sql<{ path: string; sha256: string; size_bytes: string }[]>`
      select path, sha256, size_bytes from files where version_id = ${version!.id} order by path limit 1`;
    // A delivery of per-licence copies (disclosure_files, v4 files_sha256) and a Hub GET.
    const copySha = "c".repeat(64);
    await appendNamingFiles(service, w.keys1[0], target, { files: [{ path: file!.path, sha256: copySha }] });
    await appendNamingFiles(service, w.keys1[0], target, { hub: file!.path });
    // A copy job per licence and file (pg-boss's queue), fetched and completed as the service's worker does.
    const enqueued = await enqueueCopies(sql, version!.id);
    expect(enqueued.jobs).toBeGreaterThan(0);
    const boss = await startJobQueue(asUser(w.iso.url, role, password), { max: 1 });
    try {
      const [job] = await boss.fetch(JOB_QUEUES.fingerprintCopy);
      expect(job).toBeDefined();
      await boss.complete(JOB_QUEUES.fingerprintCopy, job!.id);
    } finally {
      await boss.stop({ graceful: false, wait: true });
    }
    // What makeCopy and renderView insert (lib/fingerprints/copies.ts, lib/views/render.ts).
    const licence = w.licences.get(`${w.org1.id}/${at(w.dsA, "1.0.0")}`)!;
    await sql`
      insert into original_file_states (version_id, path, keep_bytes, last_byte, state_words, state_length, state_tail)
      values (${version!.id}, ${file!.path}, ${file!.size_bytes}, null, '', 0, '') on conflict do nothing`;
    await sql`
      insert into licence_copies (licence_id, version_id, path, object_key, sha256, size_bytes, token, method, marked_cells)
      values (${licence}, ${version!.id}, ${file!.path}, 'copies/x', ${copySha}, 1, ${"0".repeat(32)}, 'text', null)
      on conflict do nothing`;
    const viewKey = "d".repeat(64);
    await sql.begin(async (tx) => {
      await tx`insert into rendered_views (view_key, version_id, facts) values (${viewKey}, ${version!.id}, '{}'::jsonb)
        on conflict (view_key) do nothing`;
      await tx`insert into rendered_files (view_key, path, size_bytes, sha256) values (${viewKey}, 'meta/info.json', 2, ${copySha})`;
    });
    const [{ n }] = (await w.iso.sql`
      select (select count(*) from licence_copies where sha256 = ${copySha})
        + (select count(*) from rendered_files where view_key = ${viewKey})
        + (select count(*) from disclosure_files where sha256 = ${copySha}) as n`) as unknown as [{ n: string }];
    expect(Number(n)).toBe(3);
    // The walk checks the files' rows against files_sha256 (version 4 of the hash).
    expect(await verifyChain(w.iso.operator, { mode: "full", writeCheckpoint: false })).toMatchObject({
      intact: true,
      count: 4,
    });
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

describe("granting the service's role", () => {
  // Every process that starts on the embedded default migrates and grants, while a running
  // service's schedule makes months ahead: a GRANT and an ATTACH PARTITION writing the same
  // catalog row at once fail with XX000 "tuple concurrently updated" unless they take turns.
  it("takes turns with the months being made, so neither fails", async () => {
    const owner = w.iso.sql;
    for (let year = 2060; year < 2072; year++) {
      const results = await Promise.allSettled([
        grantServiceRole(owner, role),
        owner`select das_create_disclosure_months(${`${year}-01-01`}::date, ${`${year}-03-01`}::date)`,
        grantServiceRole(owner, role),
      ]);
      expect(
        results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason)),
      ).toEqual([]);
    }
  });
});

describe("the service's login role", () => {
  // Every process that starts on an installation sets the role's password (the service and each
  // das-admin, started together by a script): without taking turns, two fail with XX000.
  it("is given its password by processes starting at once, none of them failing", async () => {
    const server = process.env.DATABASE_URL!;
    const fresh = `das_login_${randomBytes(4).toString("hex")}`;
    try {
      for (let round = 0; round < 5; round++) {
        const results = await Promise.allSettled(
          Array.from({ length: 8 }, () => ensureLoginRole(server, fresh, password)),
        );
        expect(
          results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason)),
        ).toEqual([]);
      }
      const login = postgres(asUser(server, fresh, password), { max: 1, onnotice: () => {} });
      try {
        expect(await login`select current_user as name`).toEqual([{ name: fresh }]);
      } finally {
        await login.end();
      }
    } finally {
      const admin = postgres(server, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop role if exists ${fresh}`);
      await admin.end();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDownload } from "@/lib/downloads/create-download";
import { createIsolatedDb, type IsolatedDb } from "@/lib/testing/isolated-db";
import { clockAhead, contributedEpisodes, importWithFiles, keyPrincipal } from "@/lib/testing/disclosure-fixtures";
import { uniqueId } from "@/lib/testing/fixtures";
import { createOrganization } from "@/lib/admin/organizations";
import { grantLicence } from "@/lib/admin/licences";
import type { ApiKeyPrincipal } from "@/lib/auth/principal";
import { AppError } from "@/lib/errors";
import { withdrawnMeanwhile } from "@/lib/catalog/withdrawn";
import { appendToLog, type LogAppend } from "./append";
import { episodesDigest } from "./chain";
import { verifyChain } from "./verify";

// The log's group commit (lib/disclosures/append.ts): appends of concurrent requests share a
// transaction, one hold of the chain's lock and one statement, and each request still gets its own
// answer. On an isolated database, so that every entry in it is one of this file's. (Equal
// previews sent together: lib/previews/create-preview.test.ts.)

let iso: IsolatedDb;
let datasetId: string;
let versionId: number;
let principal: ApiKeyPrincipal;
let episodeIds: string[];
let licenceId: string;

beforeAll(async () => {
  iso = await createIsolatedDb("group_commit");
  const episodes = contributedEpisodes(40, 3030, ["ann", "ben", "cat"]);
  episodeIds = episodes.map((e) => e.episode_id);
  datasetId = await importWithFiles(iso.sql, [{ version: "1.0.0", episodes }]);
  const org = await createOrganization(iso.operator, { slug: uniqueId("org") });
  await grantLicence(iso.operator, { organizationId: org.id, datasetId, version: "1.0.0" });
  principal = await keyPrincipal(iso.operator, org.id);
  const [row] = await iso.sql<{ version_id: number; licence_id: string }[]>`
    select l.version_id, l.id as licence_id from licences l where l.organization_id = ${org.id}`;
  versionId = row!.version_id;
  licenceId = row!.licence_id;
}, 180_000);

afterAll(async () => {
  await iso?.drop();
});

const ctx = () => ({ db: iso.db, principal, requestId: uniqueId("req") });

/** An entry for one episode, as a download would append it. */
function entryFor(episodeId: string, idempotencyKey: string | null = null): LogAppend {
  return {
    entry: {
      id: uniqueId("dl_gc").replace(/-/g, ""),
      organizationId: principal.organizationId,
      apiKeyId: principal.keyId,
      userId: null,
      reviewerRole: null,
      channel: "api",
      datasetId,
      version: "1.0.0",
      versionId,
      licenceId,
      termsSha256: null,
      requestedScope: { episode_ids: [episodeId] },
      episodeCount: 1,
      fileCount: 1,
      totalBytes: 1,
      episodesSha256: episodesDigest([episodeId]),
      requestId: uniqueId("req"),
      idempotencyScope: idempotencyKey ? principal.keyId : null,
      idempotencyKey,
      requestSha256: "0".repeat(64),
    },
    episodeIds: [episodeId],
    ttlSeconds: 900,
    refusals: [withdrawnMeanwhile],
  };
}

/** How many transactions wrote these entries (rows a transaction inserts share its xmin). */
async function transactionsOf(ids: string[]): Promise<number> {
  const [row] = await iso.sql<{ n: number }[]>`
    select count(distinct xmin::text)::int as n from disclosures where id = any(${ids}::text[])`;
  return row!.n;
}

describe("the log's group commit", () => {
  it("appends concurrent downloads in shared transactions, each with its own gapless seq, episodes and summaries", async () => {
    const before = await verifyChain(iso.operator);
    const made = await Promise.all(
      episodeIds
        .slice(0, 24)
        .map((episodeId) =>
          createDownload(ctx(), { body: { dataset_id: datasetId, version: "1.0.0", episode_ids: [episodeId] } }),
        ),
    );
    const ids = made.map((m) => m.download.download_id);
    expect(new Set(ids).size).toBe(24);
    expect(await transactionsOf(ids)).toBeLessThan(24);
    const rows = await iso.sql<
      { id: string; seq: string; episodes: string[]; contributors: number; entries: number }[]
    >`
      select d.id, d.seq,
        (select array_agg(episode_id order by episode_id) from disclosure_episodes where disclosure_id = d.id) as episodes,
        (select count(*)::int from disclosure_contributors where disclosure_id = d.id) as contributors,
        (select count(*)::int from disclosure_episode_entries where seq = d.seq) as entries
      from disclosures d where d.id = any(${ids}::text[]) order by d.seq`;
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 24 }, (_, i) => before.count + i + 1));
    for (const [i, m] of made.entries()) {
      const row = rows.find((r) => r.id === m.download.download_id)!;
      expect(row.episodes).toEqual([episodeIds[i]]);
      expect(row.contributors).toBe(1);
      expect(row.entries).toBe(1);
    }
    expect(await verifyChain(iso.operator)).toMatchObject({ intact: true, count: before.count + 24 });
  });

  it("refuses only the entry whose episode was withdrawn meanwhile; the rest of its batch is appended with it", async () => {
    const withdrawn = episodeIds[30]!;
    await iso.sql`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, contributor, episode_count)
      values ('wd_groupcommit', 'operator', 'test', 'test', 'a test', null, 1)`;
    await iso.sql`insert into withdrawn_episodes (version_id, episode_id, withdrawal_id) values (${versionId}, ${withdrawn}, 'wd_groupcommit')`;
    const before = await verifyChain(iso.operator);
    const appends = [...episodeIds.slice(24, 30), withdrawn, ...episodeIds.slice(31, 34)].map((e) => entryFor(e));
    // Sent in one turn: the first two go out alone, the other eight wait and go together.
    const outcomes = await Promise.all(appends.map((a) => appendToLog({ db: iso.db }, a)));
    expect(outcomes[6]).toEqual({ refused: withdrawnMeanwhile });
    const appended = outcomes.filter((o) => !("refused" in o)).map((o) => (o as { id: string }).id);
    expect(appended).toHaveLength(9);
    // The refusal is the entry's alone: its batch is not written again entry by entry.
    expect(await transactionsOf(appended)).toBeLessThan(9);
    const [orphans] = await iso.sql<{ n: number }[]>`
      select count(*)::int as n from disclosure_episodes where disclosure_id = ${appends[6]!.entry.id}`;
    expect(orphans!.n).toBe(0);
    expect(await verifyChain(iso.operator)).toMatchObject({ intact: true, count: before.count + 9 });
  });

  it("a download that resolved its scope before a withdrawal and appends after it is asked again, and refused with 410", async () => {
    const episodeId = episodeIds[34]!;
    const withdrawal = await iso.db.$client.reserve();
    try {
      // The withdrawal holds the chain's lock while it computes its notices (lib/withdrawals/withdraw.ts).
      await withdrawal`begin`;
      await withdrawal`select pg_advisory_xact_lock(7203115)`;
      const download = createDownload(ctx(), {
        body: { dataset_id: datasetId, version: "1.0.0", episode_ids: [episodeId] },
      }).catch((e: unknown) => e);
      // The download has resolved its scope (the episode is not withdrawn yet) and waits for the lock.
      for (let waited = 0; ; waited += 20) {
        const [waiting] = await iso.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity where datname = ${iso.name} and wait_event = 'advisory'`;
        if (waiting!.n > 0) break;
        if (waited > 10_000) throw new Error("the download never waited for the chain's lock");
        await new Promise((r) => setTimeout(r, 20));
      }
      await withdrawal`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, contributor, episode_count)
        values ('wd_meanwhile', 'operator', 'test', 'test', 'a test', null, 1)`;
      await withdrawal`insert into withdrawn_episodes (version_id, episode_id, withdrawal_id) values (${versionId}, ${episodeId}, 'wd_meanwhile')`;
      await withdrawal`commit`;
      const error = await download;
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("episode_withdrawn");
    } finally {
      withdrawal.release();
    }
    const [left] = await iso.sql<{ n: number }[]>`
      select count(*)::int as n from disclosure_episodes where episode_id = ${episodeId}`;
    expect(left!.n).toBe(0);
  });

  it("stamps entries with the database's clock in the service's own statement, and with a test's only when handed one", async () => {
    // One connection, so that the statements it prepared are the ones the append sent.
    const pool = iso.anotherPool(1);
    const plain = await appendToLog({ db: pool }, entryFor(episodeIds[0]!));
    const [chained] = await pool.$client<{ statement: string }[]>`
      select statement from pg_prepared_statements
      where statement like '%insert into disclosures (%' and statement not like '%pg_prepared_statements%'`;
    expect(chained!.statement).toContain("clock as (select date_trunc('second', clock_timestamp()) as at)");
    expect(chained!.statement).not.toMatch(/current_setting|clock_offset/);
    const ahead = await appendToLog({ db: pool, clock: clockAhead(86_400) }, entryFor(episodeIds[1]!));
    const [a, b] = [plain, ahead].map((o) => ("refused" in o ? 0 : o.occurredAt.getTime()));
    expect((b! - a!) / 1000).toBeGreaterThanOrEqual(86_400);
    expect((b! - a!) / 1000).toBeLessThan(86_400 + 60);
  });

  it("a duplicate Idempotency-Key in a batch fails that entry alone, and the download is replayed", async () => {
    const key = uniqueId("idem");
    const body = { dataset_id: datasetId, version: "1.0.0", episode_ids: [episodeIds[35]!] };
    const others = episodeIds
      .slice(36, 40)
      .map((episodeId) =>
        createDownload(ctx(), { body: { dataset_id: datasetId, version: "1.0.0", episode_ids: [episodeId] } }),
      );
    const twice = [
      createDownload(ctx(), { body, idempotencyKey: key }),
      createDownload(ctx(), { body, idempotencyKey: key }),
    ];
    const [first, second, ...rest] = await Promise.all([...twice, ...others]);
    expect(second!.download.download_id).toBe(first!.download.download_id);
    expect([first!.replayed, second!.replayed].sort()).toEqual([false, true]);
    expect(new Set(rest.map((r) => r.download.download_id)).size).toBe(4);
    expect(await verifyChain(iso.operator)).toMatchObject({ intact: true });
  });
});

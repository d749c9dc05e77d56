// The parts of bench:scaling (scripts/bench-scaling.ts), each on a database of its own.
import type { Ctx } from "@/lib/context";
import { createDb, sqlOf, type RootDb, type Sql } from "@/lib/db/client";
import { appendToLog, type LogAppend } from "@/lib/disclosures/append";
import { withdrawnMeanwhile } from "@/lib/catalog/withdrawn";
import { episodesDigest, sha256Hex } from "@/lib/disclosures/chain";
import { countDisclosures, searchDisclosures } from "@/lib/disclosures/search";
import { recipientsOfContributor } from "@/lib/disclosures/recipients-of-contributor";
import { disclosureOverview } from "@/lib/disclosures/overview";
import { replicaLag } from "@/lib/db/replica";
import { newLogId } from "@/lib/ids";
import { randomBytes } from "node:crypto";
import { percentile, progress } from "./common";
import { disclosureFilter, type DisclosureFilter, type DisclosureSearch } from "@/lib/disclosures/filter";

type Recipient = {
  organization_id: string;
  licence_id: string;
  version_id: number;
  dataset_id: string;
  version: string;
  api_key_id: string;
  episode_id: string;
};

/** Licences with a key and an episode of theirs, to append entries as downloads would. */
export async function recipients(sql: Sql): Promise<Recipient[]> {
  return [
    ...(await sql<Recipient[]>`
      select l.organization_id, l.id as licence_id, v.id as version_id, v.dataset_id, v.version,
        (select k.id from api_keys k where k.organization_id = l.organization_id and k.revoked_at is null limit 1) as api_key_id,
        (select e.episode_id from episodes e where e.version_id = v.id limit 1) as episode_id
      from licences l join dataset_versions v on v.id = l.version_id
      where exists (select from api_keys k where k.organization_id = l.organization_id) limit 50`),
  ];
}

/** One download's entry, with one episode: what `appendToLog` is handed by a download. */
export function downloadAppend(r: Recipient, n: number): LogAppend {
  const id = newLogId("dl", Date.now(), randomBytes(10));
  return {
    entry: {
      id,
      organizationId: r.organization_id,
      apiKeyId: r.api_key_id,
      userId: null,
      reviewerRole: null,
      channel: "api",
      datasetId: r.dataset_id,
      version: r.version,
      licenceId: r.licence_id,
      termsSha256: null,
      requestedScope: { episode_ids: [r.episode_id] },
      episodeCount: 1,
      fileCount: 2,
      totalBytes: 80_000_000,
      episodesSha256: episodesDigest([r.episode_id]),
      requestId: `bench-scaling-${n}`,
      versionId: r.version_id,
      idempotencyScope: null,
      idempotencyKey: null,
      requestSha256: sha256Hex(id),
    },
    episodeIds: [r.episode_id],
    ttlSeconds: 900,
    refusals: [withdrawnMeanwhile],
  };
}

/** Appends at `perSecond` through the product's group commit until stopped; counts what it appended. */
export function steadyAppends(db: RootDb, rs: Recipient[], perSecond: number) {
  let stopped = false;
  let appended = 0;
  const done = (async () => {
    const started = Date.now();
    const inFlight = new Set<Promise<unknown>>();
    while (!stopped) {
      const due = Math.floor(((Date.now() - started) / 1000) * perSecond);
      while (appended + inFlight.size < due) {
        const p = appendToLog({ db }, downloadAppend(rs[(appended + inFlight.size) % rs.length]!, appended)).then(
          () => {
            appended++;
            inFlight.delete(p);
          },
        );
        inFlight.add(p);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await Promise.all(inFlight);
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
      return appended;
    },
  };
}

/** The reviewer's queries of the log, each with the parameters drawn from the data. */
export async function reviewerQueries(sql: Sql, ctx: Ctx) {
  const pick = async (query: string) => (await sql.unsafe<{ v: string }[]>(query))[0]?.v;
  const org = await pick(
    `select o.slug as v from organizations o join disclosures d on d.organization_id = o.id group by 1 order by count(*) desc limit 1`,
  );
  const contributor = await pick(
    `select contributor as v from disclosure_contributors group by 1 order by count(*) desc limit 1`,
  );
  const episode = await pick(
    `select episode_id as v from disclosure_episode_entries group by 1 order by count(*) desc limit 1`,
  );
  const dataset = await pick(`select dataset_id as v from disclosures group by 1 order by count(*) desc limit 1`);
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
  const searches: Record<string, DisclosureSearch> = {
    "the whole log": {},
    organisation: { org },
    dataset: { dataset },
    contributor: { contributor },
    episode: { episode },
    "last 30 days": { from: monthAgo, to: today },
  };
  const filters = Object.fromEntries(
    Object.entries(searches).map(([name, search]) => [name, disclosureFilter(search).filter]),
  ) as Record<string, DisclosureFilter>;
  const queries: Record<string, () => Promise<unknown>> = {};
  for (const [name, filter] of Object.entries(filters)) {
    queries[`page: ${name}`] = () => searchDisclosures(ctx, { filter, limit: 50 });
    queries[`count: ${name}`] = () => countDisclosures(ctx, filter);
  }
  if (contributor) queries["contributor report"] = () => recipientsOfContributor(ctx, { contributor, limit: 50 });
  queries["overview, 30 days"] = () => disclosureOverview(ctx, { from: monthAgo, to: today, granularity: "day" });
  return queries;
}

/** p50 and p99 of each query, `samples` times each, round robin (each meets the same load). */
export async function measureQueries(queries: Record<string, () => Promise<unknown>>, samples: number) {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(queries).map((k) => [k, []]));
  for (let i = 0; i < samples; i++)
    for (const [name, run] of Object.entries(queries)) {
      const start = performance.now();
      await run();
      times[name]!.push(performance.now() - start);
    }
  return Object.entries(times).map(([query, t]) => {
    t.sort((a, b) => a - b);
    return { query, p50_ms: Math.round(percentile(t, 50)), p99_ms: Math.round(percentile(t, 99)) };
  });
}

/** The replica's lag, sampled every half second until stopped: the largest seen. */
export function watchLag(replica: RootDb) {
  let worst = 0;
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const lag = await replicaLag(replica).catch(() => null);
      if (lag?.behindMs) worst = Math.max(worst, lag.behindMs);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
      return worst;
    },
  };
}

export const operatorOf = (db: RootDb, replica?: RootDb): Ctx => ({
  db,
  requestId: "bench-scaling",
  principal: { kind: "operator", name: "bench", organizationId: null },
  ...(replica ? { replica } : {}),
});

export { createDb, progress, sqlOf };

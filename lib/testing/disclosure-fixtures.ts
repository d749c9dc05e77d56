import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import type { Ctx, LogClock } from "../context";
import { sqlOf, type Db, type Sql } from "../db/client";
import type { ApiKeyPrincipal, UserPrincipal } from "../auth/principal";
import type { RequestedScope, UserRole } from "../db/schema";
import { appendToLog } from "../disclosures/append";
import { equalGetValid } from "../hub/resolve";
import {
  entryHash,
  episodesDigest,
  filesDigest,
  GENESIS_HASH,
  sha256Hex,
  type ChainedEntry,
} from "../disclosures/chain";
import { newLogId } from "../ids";
import { authenticateApiKey } from "../auth/api-keys";
import { issueKey } from "../admin/keys";
import { createUser } from "../admin/users";
import { importVersion } from "../catalog/import/import-version";
import type { EpisodeLine, FileLine } from "../catalog/import/records";
import type { DownloadBody } from "../api/requests";
import { createDownload } from "../downloads/create-download";
import type { Download } from "../downloads/download";
import { createOrganization, type Organization } from "../admin/organizations";
import { grantLicence } from "../admin/licences";
import { recipientsOfContributor, type ContributorRecipient } from "../disclosures/recipients-of-contributor";
import { byteOrder, randomEpisodes, uniqueId, writeImportDir, type TestVersion } from "./fixtures";
import { createIsolatedDb, type IsolatedDb } from "./isolated-db";

export const STREAMS = ["cam", "joints"] as const;
export const VERSION_FILE = "README.md";

/** Random episodes whose contributors are the given names, in turn. */
export function contributedEpisodes(count: number, seed: number, contributors: readonly string[]): EpisodeLine[] {
  return randomEpisodes(count, seed).map((e, i) => ({ ...e, contributor: contributors[i % contributors.length]! }));
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** One file per episode and stream, plus one version-level file (no episode). */
export function filesOf(episodes: readonly EpisodeLine[]): FileLine[] {
  const files: FileLine[] = episodes.flatMap((e) =>
    e.streams.map((stream, i) => ({
      path: `${e.episode_id}/${stream}.bin`,
      episode_id: e.episode_id,
      stream,
      size_bytes: 100 + e.episode_id.length * 7 + i,
      sha256: sha256(`${e.episode_id}/${stream}`),
    })),
  );
  files.push({ path: VERSION_FILE, episode_id: null, stream: null, size_bytes: 42, sha256: sha256(VERSION_FILE) });
  return files;
}

/** Imports the versions of a dataset (each episode with files) into the database of `sql`. */
export async function importWithFiles(
  sql: Sql,
  versions: (Omit<TestVersion, "files"> & { episodes: EpisodeLine[] })[],
  datasetId = uniqueId("ds"),
): Promise<string> {
  for (const version of versions) {
    const dir = writeImportDir(datasetId, { ...version, files: filesOf(version.episodes) });
    try {
      await importVersion(sql, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return datasetId;
}

/** A fresh key of the organisation, authenticated as a request would be. */
export async function keyPrincipal(operator: Ctx, organizationId: string): Promise<ApiKeyPrincipal> {
  const key = await issueKey(operator, { organizationId, name: "disclosure test key" });
  return authenticateApiKey(operator.db, key.secret);
}

/** A portal user, signed in. */
export async function userPrincipal(
  operator: Ctx,
  organizationId: string | null,
  role: UserRole = "licensee",
  email = `${uniqueId("user")}@example.com`,
): Promise<UserPrincipal> {
  const user = await createUser(operator, { email, role, organizationId });
  return { kind: "user", userId: user.id, email: user.email, role, organizationId };
}

export type Made = {
  download: Download;
  requestId: string;
  principal: ApiKeyPrincipal | UserPrincipal;
  body: DownloadBody;
  /** When the entry says it happened: the URLs' signing time, 900 s before they expire. */
  occurredAt: Date;
};

/** A download through the service; `clock`, the log's time for it (`clockAhead`, `clockAt`). */
export async function makeDownload(
  db: Db,
  principal: ApiKeyPrincipal | UserPrincipal,
  body: DownloadBody,
  clock?: LogClock,
): Promise<Made> {
  const requestId = uniqueId("req");
  const { download } = await createDownload({ db, principal, requestId, clock }, { body });
  return { download, requestId, principal, body, occurredAt: new Date(Date.parse(download.expires_at) - 900_000) };
}

/**
 * An entry naming files, as the services that name them append it, for tests of the log itself: a
 * Hub GET of one file (`hub`: channel hub, reused while its URL is valid), or a delivery of a
 * fingerprinted version's per-licence copies (`files`: their rows, their digest in the chain).
 * Their own suites (app/hub, lib/fingerprints) make them through the service; the log's suites
 * need them without a Hub client or copies made. Undefined for a Hub GET an equal one made redundant.
 */
export async function appendNamingFiles(
  db: Db,
  principal: ApiKeyPrincipal,
  at: { datasetId: string; version: string },
  names: { hub: string } | { files: { path: string; sha256: string }[] },
  clock?: LogClock,
): Promise<ChainedEntry | undefined> {
  const [licence] = await sqlOf(db)<{ version_id: number; licence_id: string; terms_sha256: string | null }[]>`
    select l.version_id, l.id as licence_id, l.terms_sha256 from licences l join dataset_versions v on v.id = l.version_id
    where l.organization_id = ${principal.organizationId} and v.dataset_id = ${at.datasetId} and v.version = ${at.version}`;
  if (!licence) throw new Error(`The key's organisation holds no licence for ${at.datasetId}@${at.version}.`);
  const hub = "hub" in names;
  const paths = hub ? [names.hub] : names.files.map((f) => f.path);
  return appendToLog(
    { db, clock },
    {
      entry: {
        id: newLogId(hub ? "hb" : "dl"),
        organizationId: principal.organizationId,
        apiKeyId: principal.keyId,
        userId: null,
        reviewerRole: null,
        channel: hub ? "hub" : "api",
        datasetId: at.datasetId,
        version: at.version,
        versionId: licence.version_id,
        licenceId: licence.licence_id,
        termsSha256: licence.terms_sha256,
        requestedScope: hub ? { paths } : { include_version_files: true },
        episodeCount: 0,
        fileCount: paths.length,
        totalBytes: paths.length,
        episodesSha256: episodesDigest([]),
        ...(hub ? {} : { filesSha256: filesDigest(names.files) }),
        requestId: uniqueId("req"),
        idempotencyScope: null,
        idempotencyKey: null,
        requestSha256: sha256Hex(
          hub ? `hub ${principal.keyId} ${licence.version_id} ${names.hub}` : uniqueId("request"),
        ),
      },
      episodeIds: [],
      ...(hub ? {} : { files: names.files }),
      ttlSeconds: 900,
      refusals: hub ? [equalGetValid] : [],
    },
  ).then((outcome) => ("refused" in outcome ? undefined : outcome));
}

/** The files a body covers, worked out from the catalog the test imported (not from the service). */
export function expectedFiles(episodes: readonly EpisodeLine[], body: DownloadBody): FileLine[] {
  const chosen = body.episode_ids
    ? new Set(body.episode_ids)
    : body.filter
      ? new Set(
          episodes
            .filter(
              (e) =>
                (body.filter!.outcome === undefined || e.outcome === body.filter!.outcome) &&
                (body.filter!.environment === undefined || e.environment === body.filter!.environment),
            )
            .map((e) => e.episode_id),
        )
      : undefined;
  return filesOf(episodes).filter(
    (f) =>
      (chosen === undefined || (f.episode_id != null && chosen.has(f.episode_id))) &&
      (!body.streams || (f.stream != null && body.streams.includes(f.stream))),
  );
}

/** The distinct episodes of those files, in byte order. */
export function expectedEpisodes(episodes: readonly EpisodeLine[], body: DownloadBody): string[] {
  return [...new Set(expectedFiles(episodes, body).flatMap((f) => (f.episode_id == null ? [] : [f.episode_id])))].sort(
    byteOrder,
  );
}

/** The scope as the log records it: the body's episode_ids, filter and streams, when given. */
export function requestedScopeOf(body: DownloadBody): RequestedScope {
  const scope: RequestedScope = {};
  if (body.episode_ids) scope.episode_ids = body.episode_ids;
  if (body.filter) scope.filter = body.filter;
  if (body.streams) scope.streams = body.streams;
  return scope;
}

/**
 * The chain entry a made download must have produced, built from what the test asked for and its
 * own catalog; only the seq, the time and the previous hash come from the log's order.
 */
export function expectedEntry(
  made: Made,
  catalog: readonly EpisodeLine[],
  licenceId: string,
  seq: number,
  prevHash: string,
): ChainedEntry {
  const files = expectedFiles(catalog, made.body);
  const episodeIds = expectedEpisodes(catalog, made.body);
  const p = made.principal;
  return {
    id: made.download.download_id,
    seq,
    occurredAt: made.occurredAt,
    organizationId: p.organizationId!,
    apiKeyId: p.kind === "api_key" ? p.keyId : null,
    userId: p.kind === "user" ? p.userId : null,
    reviewerRole: null,
    channel: p.kind === "api_key" ? "api" : "portal",
    datasetId: made.body.dataset_id,
    version: made.body.version,
    licenceId,
    // The fixtures' licences are granted without terms; every download names that (version 3).
    termsSha256: null,
    requestedScope: requestedScopeOf(made.body),
    episodeCount: episodeIds.length,
    fileCount: files.length,
    totalBytes: files.reduce((sum, f) => sum + f.size_bytes, 0),
    episodesSha256: episodesDigest(episodeIds),
    expiresAt: new Date(made.occurredAt.getTime() + 900_000),
    requestId: made.requestId,
    prevHash,
  };
}

/** The entries of made downloads as one chain from the genesis, in the order they were made. */
export function expectedChain(
  made: readonly Made[],
  catalogOf: (m: Made) => readonly EpisodeLine[],
  licenceOf: (m: Made) => string,
): (ChainedEntry & { hash: string })[] {
  const chain: (ChainedEntry & { hash: string })[] = [];
  for (const m of made) {
    const entry = expectedEntry(m, catalogOf(m), licenceOf(m), chain.length + 1, chain.at(-1)?.hash ?? GENESIS_HASH);
    chain.push({ ...entry, hash: entryHash(entry) });
  }
  return chain;
}

/** RFC 4180: fields separated by commas, optionally quoted, `""` inside quotes; records end with CRLF or LF. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i++;
        if (i < text.length && !",\r\n".includes(text[i]!)) throw new Error(`text after a closing quote at ${i}`);
      } else {
        field += c;
        i++;
      }
    } else if (c === '"') {
      if (field !== "") throw new Error(`a quote inside an unquoted field at ${i}`);
      quoted = true;
      i++;
    } else if (c === ",") {
      record.push(field);
      field = "";
      i++;
    } else if (c === "\n" || (c === "\r" && text[i + 1] === "\n")) {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i += c === "\r" ? 2 : 1;
    } else {
      if (c === "\r") throw new Error(`a bare CR at ${i}`);
      field += c;
      i++;
    }
  }
  if (quoted) throw new Error("unterminated quoted field");
  if (field !== "" || record.length) throw new Error("the last record does not end with a line break");
  return records;
}

/** An organisation, dataset, key, user and licence world in a database of its own (see isolated-db.ts). */
export type World = {
  iso: IsolatedDb;
  org1: Organization;
  org2: Organization;
  dsA: string;
  dsB: string;
  /** Episodes of each dataset@version. */
  catalog: Map<string, EpisodeLine[]>;
  /** Licence of each org/dataset@version. */
  licences: Map<string, string>;
  keys1: [ApiKeyPrincipal, ApiKeyPrincipal];
  user1: UserPrincipal;
  key2: ApiKeyPrincipal;
  user2: UserPrincipal;
  /** Contributor names of this world only. */
  contributors: { x: string; y: string; z: string };
};

export const at = (datasetId: string, version: string) => `${datasetId}@${version}`;

/**
 * Dataset A 1.0.0 (contributors x, y) and 1.1.0 (the same episodes plus two of z), dataset B
 * 1.0.0 (y, z); organisation 1 licensed for all three with two keys and a user, organisation 2
 * for A 1.1.0 and B with a key and a user.
 */
export async function buildWorld(label: string): Promise<World> {
  const iso = await createIsolatedDb(label);
  const op = iso.operator;
  const contributors = { x: uniqueId("cx"), y: uniqueId("cy"), z: uniqueId("cz") };
  const a100 = contributedEpisodes(6, 101, [contributors.x, contributors.y]);
  const a110 = [...a100, ...contributedEpisodes(2, 102, [contributors.z])];
  const b100 = contributedEpisodes(4, 103, [contributors.y, contributors.z]);
  const dsA = await importWithFiles(iso.sql, [
    { version: "1.0.0", episodes: a100 },
    { version: "1.1.0", episodes: a110 },
  ]);
  const dsB = await importWithFiles(iso.sql, [{ version: "1.0.0", episodes: b100 }]);
  const catalog = new Map([
    [at(dsA, "1.0.0"), a100],
    [at(dsA, "1.1.0"), a110],
    [at(dsB, "1.0.0"), b100],
  ]);
  // Names CSV has to quote: a comma, a quote and a line break; a line break alone.
  const org1 = await createOrganization(op, { slug: uniqueId("org"), name: 'Acme, "Robotics"\nLtd' });
  const org2 = await createOrganization(op, { slug: uniqueId("org"), name: "Beta\nLabs" });
  const licences = new Map<string, string>();
  for (const [org, datasetId, version] of [
    [org1, dsA, "1.0.0"],
    [org1, dsA, "1.1.0"],
    [org1, dsB, "1.0.0"],
    [org2, dsA, "1.1.0"],
    [org2, dsB, "1.0.0"],
  ] as const) {
    licences.set(
      `${org.id}/${at(datasetId, version)}`,
      (await grantLicence(op, { organizationId: org.id, datasetId, version })).id,
    );
  }
  return {
    iso,
    org1,
    org2,
    dsA,
    dsB,
    catalog,
    licences,
    keys1: [await keyPrincipal(op, org1.id), await keyPrincipal(op, org1.id)],
    user1: await userPrincipal(op, org1.id),
    key2: await keyPrincipal(op, org2.id),
    user2: await userPrincipal(op, org2.id),
    contributors,
  };
}

export const catalogOf = (w: World) => (m: Made) => w.catalog.get(at(m.body.dataset_id, m.body.version))!;
export const licenceOf = (w: World) => (m: Made) =>
  w.licences.get(`${m.principal.organizationId}/${at(m.body.dataset_id, m.body.version)}`)!;

export type Plan = [ApiKeyPrincipal | UserPrincipal, DownloadBody][];

/** Six downloads: both organisations, keys and users, every scope kind, all licensed. */
export function downloadPlan(w: World): Plan {
  const a100 = w.catalog.get(at(w.dsA, "1.0.0"))!;
  const a110 = w.catalog.get(at(w.dsA, "1.1.0"))!;
  return [
    [w.keys1[0], { dataset_id: w.dsA, version: "1.0.0", episode_ids: [a100[2]!.episode_id, a100[0]!.episode_id] }],
    [w.user1, { dataset_id: w.dsB, version: "1.0.0" }],
    [w.key2, { dataset_id: w.dsA, version: "1.1.0", filter: { outcome: a110[6]!.outcome }, streams: ["cam"] }],
    [w.keys1[1], { dataset_id: w.dsA, version: "1.1.0", episode_ids: [a110[7]!.episode_id, a100[1]!.episode_id] }],
    [w.user2, { dataset_id: w.dsA, version: "1.1.0", streams: ["joints"] }],
    [
      w.keys1[0],
      {
        dataset_id: w.dsB,
        version: "1.0.0",
        filter: { environment: w.catalog.get(at(w.dsB, "1.0.0"))![1]!.environment },
      },
    ],
  ];
}

/**
 * The plan's downloads one after another, so their order in the log is the plan's. With
 * `clockAhead`, the log's clock runs that many seconds ahead for them (`Ctx.clock`): entries in
 * later seconds than those before, without waiting for the seconds to pass.
 */
export async function makeSequentially(w: World, plan: Plan, options: { clockAhead?: number } = {}): Promise<Made[]> {
  const clock = options.clockAhead ? clockAhead(options.clockAhead) : undefined;
  const made: Made[] = [];
  for (const [principal, body] of plan) made.push(await makeDownload(w.iso.db, principal, body, clock));
  return made;
}

/**
 * The log's clock `seconds` ahead of the database's, for a context's `clock`: the service's own
 * SQL reads the database's clock and nothing else, so a test moves time by handing this over.
 */
export function clockAhead(seconds: number): LogClock {
  return (sql) => sql`clock_timestamp() + make_interval(secs => ${seconds})`;
}

/** The log's clock reading `when` (to the second) now, and running on from it. */
export function clockAt(when: Date): LogClock {
  return clockAhead(Math.round((when.getTime() - Date.now()) / 1000));
}

/** What an export must hold for made downloads (in the order they were made, from the genesis), as JSON Lines objects. */
export function exportOracle(w: World, made: readonly Made[]): Record<string, unknown>[] {
  const chain = expectedChain(made, catalogOf(w), licenceOf(w));
  const orgs = new Map([w.org1, w.org2].map((o) => [o.id, o]));
  return made.map((m, i) => {
    const e = chain[i]!;
    const org = orgs.get(e.organizationId!)!;
    return {
      seq: i + 1,
      id: e.id,
      occurred_at: e.occurredAt.toISOString(),
      organization: org.slug,
      organization_name: org.name,
      api_key: m.principal.kind === "api_key" ? m.principal.keyPrefix : null,
      user: m.principal.kind === "user" ? m.principal.email : null,
      reviewer_role: null,
      channel: e.channel,
      dataset_id: e.datasetId,
      version: e.version,
      licence_id: e.licenceId,
      terms_sha256: e.termsSha256 ?? null,
      episode_count: e.episodeCount,
      file_count: e.fileCount,
      total_bytes: e.totalBytes,
      expires_at: e.expiresAt.toISOString(),
      request_id: e.requestId,
      requested_scope: requestedScopeOf(m.body),
      hash: e.hash,
      episode_ids: expectedEpisodes(catalogOf(w)(m), m.body),
    };
  });
}

/** Who received a contributor's episodes, every page of the report read in turn (keyset on seq). */
export async function allRecipientsOfContributor(
  ctx: Ctx,
  contributor: string,
  limit = 50,
): Promise<ContributorRecipient[]> {
  const rows: ContributorRecipient[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await recipientsOfContributor(ctx, { contributor, before, limit });
    rows.push(...page.rows);
    if (page.nextBefore === null) return rows;
    before = page.nextBefore;
  }
}

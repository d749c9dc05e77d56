import { createHash } from "node:crypto";
import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { AppError } from "../errors";
import { canonicalJson } from "../canonical-json";
import { requireLicensedVersion } from "../catalog/access";
import { episodeConditions, type EpisodeFilter } from "../catalog/episode-filter";
import { fileColumns, type FileRecord } from "../catalog/get-manifest";
import { episodeNotWithdrawn, fileHoldsNoWithdrawn, withdrawnAmong } from "../catalog/withdrawn";
import type { DownloadRequest } from "../downloads/scope";
import { needsRenumbering, rowTransformOf } from "../lerobot/subset";
import type { DataTransform } from "../lerobot/data-rows";
import type { CodebaseVersion } from "../lerobot/format";
import { presigner, renderedObjectKey, URL_TTL_SECONDS } from "../storage/config";
import { deliveredFiles, type DeliveredFile } from "../fingerprints/delivered";
import { renderView, type RenderedView } from "./render";
import { planRequests, requestedWith } from "./requests";
import { appendToLog, notRecorded } from "../disclosures/append";
import { earlierEntry, isDuplicateKey, type Idempotency } from "../disclosures/idempotency";
import { episodesDigest, filesDigest, sha256Hex } from "../disclosures/chain";
import { newLogId } from "../ids";
import { deliveredVersion, episodeIdOf, episodeIndexOf, versionView, type VersionView } from "./view";

/**
 * What a version, or a part of it, becomes on a client's disk: which files, where, how to get
 * each one's bytes and how to check them, which `meta/` a LeRobot version gets for the episodes
 * delivered, and how its v3.0 data files are renumbered. Decided here, once, for `das pull` and
 * the Python client alike (which carry it out: download, verify, write), from the caller's view
 * of the version (lib/views/view.ts: withdrawn episodes gone), by the rules `das pull` followed on
 * the client (docs/lerobot.md):
 *
 * - the files in scope: every file holding a chosen episode (or every file), in the streams
 *   asked for; for a LeRobot version, its files of no episode too;
 * - the episodes delivered: every episode of those files; those whose every file of the pulled
 *   streams is delivered are *complete* and listed by meta/, the others left out of it;
 * - meta/ rendered for the complete episodes (lib/views/render.ts), or the version's own when it
 *   lists exactly them and every camera; a v3.0 subset LeRobot could not open as delivered
 *   (episodes other than 0..k-1, or data files holding frames of episodes meta/ leaves out) gets
 *   its data files renumbered 0..k-1, described row by row (`transform`), unless
 *   `keep_original_indices`;
 * - the bytes: a file that carries episodes through a download (each listed download is one
 *   request to POST /api/v1/downloads, and so one disclosure; at most 10,000 files each), every
 *   other file (one of the whole version, or rendered) by the signed URL given here;
 * - for a fingerprinted version, each file's size and SHA-256 are those of the caller's licence's
 *   own copy (what its downloads deliver, lib/fingerprints/delivered.ts), its URLs are of those
 *   copies, and meta/ is rendered for the licence (lib/views/view.ts); a 503 while any copy in
 *   the plan is being made.
 *
 * Those URLs are the plan's own delivery: when it hands out any, it appends one entry for them
 * (channel `api`, their paths, no episode; the copies' sha256s for a fingerprinted version) before
 * signing them, as a download would. Every other file leaves through the downloads it lists.
 */

/** The most files one plan holds (memory stays bounded); larger pulls are split by episodes, a filter or streams. */
export const MAX_PLAN_FILES = 200_000;

export type PlanRequest = {
  datasetId: string;
  version: string;
  episode_ids?: string[];
  filter?: EpisodeFilter;
  streams?: string[];
  keep_original_indices?: boolean;
};

/** Each row of a v3.0 data file, written again (lib/lerobot/data-rows.ts carries it out). */
export type { DataTransform };

export type PlannedFile = {
  /** Where the file goes, relative to the directory pulled into. */
  path: string;
  size_bytes: number;
  /** SHA-256 of the bytes fetched (before a transform): the caller's own copy's, for a fingerprinted version. */
  sha256: string;
  episode_ids: string[];
  stream: string | null;
  /**
   * How to get the bytes: in the answer to `downloads[download]`, under the same path, or at `url`
   * (valid until `expires_at`). `episode_id` is the chosen episode the file is requested with: a
   * client that needs only some of a download's files (the others are on its disk) sends it with
   * `episode_ids` cut down to theirs.
   */
  get: { download: number; episode_id: string } | { url: string };
  /** What to write instead of the bytes as fetched, or null: as fetched. */
  transform: DataTransform | null;
};

export type LeRobotPlan = {
  codebase_version: string;
  /** The episodes meta/ lists, as the version's episode indices, ascending. */
  episode_indices: number[];
  /** The episodes delivered that were chosen, those that came along in shared files, and those of them meta/ leaves out. */
  requested: string[];
  co_delivered: string[];
  left_out: string[];
  meta: "as delivered" | "rewritten" | "none";
  /** The cameras meta/ declares, when streams left some out; null: every camera. */
  cameras: string[] | null;
  renumbering: { episode_id: string; original_episode_index: number; episode_index: number }[] | null;
  /** Files meta/ points at that the plan does not write (none, unless the version's meta/ and its files disagree). */
  missing_files: string[];
  loads_as_is: boolean;
  loads_with_episode_list: boolean;
  /** `LeRobotDataset(repo_id, root=D, episodes=...)`'s list when it needs one, else null. */
  open_with_episodes: number[] | null;
  note: string | null;
};

export type Plan = {
  dataset_id: string;
  version: string;
  /** The revision (lib/views/view.ts) the plan was made from: a later plan of another revision may differ. */
  revision: string;
  codebase_version: string | null;
  episode_ids: string[];
  /** POST each to /api/v1/downloads (each a disclosure), skipping one whose files are all on disk already. */
  downloads: DownloadRequest[];
  files: PlannedFile[];
  /** Files in scope no download can hold (an episode with more files than one download). */
  unplannable: { path: string; reason: string }[];
  /** When the URLs of `files[].get.url` stop working. */
  expires_at: string;
  lerobot: LeRobotPlan | null;
};

/**
 * The plan of `request`. With an Idempotency-Key, a retry of the same request (of the same
 * revision) returns the same URLs, signed at the same time, without a second entry.
 */
export async function pullPlan(ctx: Ctx, request: PlanRequest, idempotencyKey?: string): Promise<Plan> {
  const licensed = await requireLicensedVersion(ctx, request.datasetId, request.version);
  const view = await versionView(ctx, request.datasetId, licensed);
  const sql = sqlOf(ctx.db);
  const where = `${request.datasetId}@${request.version}`;
  const format = licensed.format;
  checkStreams(request, licensed.streams, where, format !== null);
  const chosen = await chosenEpisodes(sql, view, request, where);
  // A fingerprinted version's files are the caller's licence's copies: their sha256s, sizes and keys.
  const inScope = await deliveredFiles(
    sql,
    { ...licensed, datasetId: request.datasetId },
    licensed.licenceId,
    await filesInScope(sql, view, request, format !== null),
  );
  const delivered = [...new Set(inScope.flatMap((f) => f.episode_ids))].sort(byteOrder);
  const episodeFiles = inScope.filter((f) => f.episode_ids.length);
  const lerobot = format ? await leRobotLayout(ctx, view, request, inScope, delivered, chosen) : null;
  // Rewritten v3.0 data files are those holding a listed episode; one holding none of them is not written.
  const written = lerobot?.rendered?.facts.rewrite
    ? new Map(lerobot.rendered.facts.rewrite.layout.map((l) => [l.path, l]))
    : null;
  const fetched = episodeFiles.filter((f) => !written || f.stream !== "data" || written.has(f.path));
  const scope = {
    datasetId: request.datasetId,
    version: request.version,
    ...(request.episode_ids ? { episodeIds: request.episode_ids } : {}),
    ...(request.filter ? { filter: request.filter } : {}),
    ...(request.streams ? { streams: request.streams } : {}),
  };
  const { requests, unplannable } = planRequests(scope, fetched, fetched, {
    filterCovers: Boolean(request.filter && !request.episode_ids),
    episodes: chosen,
  });
  const downloadOf = new Map<string, number>();
  requests.forEach((r, i) => {
    for (const file of r.files) downloadOf.set(file.path, i);
  });
  const { viaDownloads, direct } = await asDelivered(
    ctx,
    view,
    fetched.filter((f) => downloadOf.has(f.path)),
    byUrl(view, inScope, lerobot?.rendered ?? null, lerobot?.metaAsDelivered ?? false),
  );
  const { signedAt, expiresAt } = await discloseByUrl(ctx, view, request, direct, idempotencyKey);
  const urls = await presigner().presignKeys(
    direct.map((d) => d.objectKey),
    { signingDate: signedAt, expiresIn: URL_TTL_SECONDS },
  );
  const files: PlannedFile[] = [
    ...viaDownloads.map((f) => ({
      ...planned(f),
      get: { download: downloadOf.get(f.path)!, episode_id: requestedWith(f, chosen)! },
      transform: written?.has(f.path) ? rowTransformOf(written.get(f.path)!) : null,
    })),
    ...direct.map((d, i) => ({ ...planned(d), get: { url: urls[i]! }, transform: null })),
  ].sort((a, b) => byteOrder(a.path, b.path));
  return {
    dataset_id: request.datasetId,
    version: request.version,
    revision: view.sha,
    codebase_version: format?.codebase_version ?? null,
    episode_ids: delivered,
    downloads: requests.map((r) => r.body),
    files,
    unplannable: unplannable.map((u) => ({ path: u.file.path, reason: `cannot be requested: ${u.reason}` })),
    expires_at: expiresAt.toISOString(),
    lerobot: lerobot && summary(lerobot, files, request.datasetId),
  };
}

type PlanFile = Pick<FileRecord, "path" | "size_bytes" | "sha256" | "episode_ids" | "stream">;

/**
 * The plan's files as the caller receives them, in one lookup: those of its downloads, and those it
 * hands out by URL with the object each URL is of. The version's own files are the licence's
 * copies on a fingerprinted version (lib/fingerprints/delivered.ts); rendered ones already are the
 * view's (rendered for the licence).
 */
async function asDelivered(
  ctx: Ctx,
  view: VersionView,
  viaDownloads: FileRecord[],
  byUrl: { file: PlanFile; rendered: boolean }[],
): Promise<{ viaDownloads: PlanFile[]; direct: DeliveredFile<PlanFile>[] }> {
  const own = [...viaDownloads, ...byUrl.filter((d) => !d.rendered).map((d) => d.file)];
  const copies = await deliveredFiles(sqlOf(ctx.db), deliveredVersion(view), view.copiesOf, own);
  const of = new Map(copies.map((c) => [c.path, c]));
  return {
    viaDownloads: viaDownloads.map((f) => of.get(f.path)!),
    direct: byUrl.map((d) =>
      d.rendered ? { ...d.file, objectKey: renderedObjectKey(d.file.sha256) } : of.get(d.file.path)!,
    ),
  };
}

/**
 * The entry of the files a plan hands out by URL (of no episode: the version's README, its meta/
 * or meta/ rendered for the pull), appended before any of them is signed; none when there are none.
 * On a fingerprinted version it names each file's sha256 (decision 0133), the bytes that leave.
 */
async function discloseByUrl(
  ctx: Ctx,
  view: VersionView,
  request: PlanRequest,
  direct: { path: string; size_bytes: number; sha256: string }[],
  idempotencyKey: string | undefined,
): Promise<{ signedAt: Date; expiresAt: Date }> {
  const principal = ctx.principal;
  if (principal.kind !== "api_key") throw new AppError("forbidden", "Plans are made with an API key.");
  const paths = direct.map((d) => d.path);
  const requestSha256 = sha256Hex(canonicalJson({ plan: { request, revision: view.sha, paths } }));
  const idempotency = idempotencyKey ? { scope: principal.keyId, key: idempotencyKey } : null;
  // Looked up first even for a plan without URLs (it appends nothing): its key used before by another request is 409.
  if (idempotency) {
    const earlier = await signedEarlier(ctx, idempotency, requestSha256);
    if (earlier) return earlier;
  }
  if (!direct.length) return { signedAt: new Date(), expiresAt: new Date(Date.now() + URL_TTL_SECONDS * 1000) };
  const copies = view.copiesOf ? direct.map((d) => ({ path: d.path, sha256: d.sha256 })) : undefined;
  try {
    const chained = await appendToLog(ctx, {
      entry: {
        id: newLogId("pl"),
        organizationId: principal.organizationId,
        apiKeyId: principal.keyId,
        userId: null,
        reviewerRole: null,
        channel: "api",
        datasetId: view.datasetId,
        version: view.version.version,
        versionId: view.version.versionId,
        licenceId: view.version.licenceId,
        termsSha256: view.version.termsSha256,
        requestedScope: { paths },
        episodeCount: 0,
        fileCount: direct.length,
        totalBytes: direct.reduce((sum, d) => sum + d.size_bytes, 0),
        episodesSha256: episodesDigest([]),
        ...(copies ? { filesSha256: filesDigest(copies) } : {}),
        requestId: ctx.requestId,
        idempotencyScope: idempotency?.scope ?? null,
        idempotencyKey: idempotency?.key ?? null,
        requestSha256,
      },
      episodeIds: [],
      ...(copies ? { files: copies } : {}),
      ttlSeconds: URL_TTL_SECONDS,
      // Files of no episode: no withdrawal stands in their way, and nothing refuses them.
      refusals: [],
    });
    if ("refused" in chained) throw new Error(`The log refused the plan's entry (${chained.refused.name}).`);
    return { signedAt: chained.occurredAt, expiresAt: chained.expiresAt };
  } catch (error) {
    // The same Idempotency-Key sent twice at once: the second append met the first's unique key.
    const earlier = idempotency && isDuplicateKey(error) && (await signedEarlier(ctx, idempotency, requestSha256));
    if (earlier) return earlier;
    throw notRecorded("The plan's files", error);
  }
}

/**
 * When the entry an Idempotency-Key made for this plan signed its URLs, and until when, or
 * undefined when it made none. A request of another body, or of the same body on a version
 * changed since (the plan's revision is part of what is keyed), is 409.
 */
async function signedEarlier(
  ctx: Ctx,
  idempotency: Idempotency,
  requestSha256: string,
): Promise<{ signedAt: Date; expiresAt: Date } | undefined> {
  const earlier = await earlierEntry(
    ctx,
    idempotency,
    requestSha256,
    "This Idempotency-Key was used with another plan request, or the version changed since. Use a new key for a new request.",
  );
  if (!earlier) return undefined;
  const [entry] = await sqlOf(ctx.db)<{ occurred_at: Date; expires_at: Date }[]>`
    select occurred_at, expires_at from disclosures where id = ${earlier.id}`;
  if (!entry)
    throw new AppError(
      "idempotency_conflict",
      "This Idempotency-Key's plan was made in a month of the log now archived; its URLs expired long ago. Use a new key.",
    );
  return { signedAt: entry.occurred_at, expiresAt: entry.expires_at };
}

const planned = (f: PlanFile): Omit<PlannedFile, "get" | "transform"> => ({
  path: f.path,
  size_bytes: f.size_bytes,
  sha256: f.sha256,
  episode_ids: f.episode_ids,
  stream: f.stream,
});

function checkStreams(request: PlanRequest, streams: string[], where: string, lerobot: boolean): void {
  if (!request.streams) return;
  const unknown = request.streams.filter((s) => !streams.includes(s));
  if (unknown.length)
    throw new AppError(
      "invalid_body",
      `Unknown streams for ${where}: ${unknown.join(", ")}. Its streams are: ${streams.join(", ")}.`,
    );
  // A LeRobot dataset without its frames does not open, and adding them unasked would disclose more than asked for.
  if (lerobot && !request.streams.includes("data"))
    throw new AppError(
      "invalid_body",
      `${where} is a LeRobot dataset, which is written as one: LeRobot reads every frame from the data files, so streams must include data (e.g. ${["data", ...request.streams].join(",")}).`,
    );
}

/** The episodes the request names or its filter matches (both: those that do both), or null for every episode. */
async function chosenEpisodes(
  sql: Sql,
  view: VersionView,
  request: PlanRequest,
  where: string,
): Promise<Set<string> | null> {
  const { versionId } = view.version;
  let chosen: Set<string> | null = null;
  if (request.episode_ids) {
    const ids = [...new Set(request.episode_ids)];
    const found = await sql<{ episode_id: string }[]>`
      select distinct fe.episode_id from file_episodes fe where fe.version_id = ${versionId} and fe.episode_id = any(${ids}::text[])`;
    const present = new Set(found.map((r) => r.episode_id));
    const unknown = ids.filter((id) => !present.has(id));
    if (unknown.length)
      throw new AppError(
        "invalid_body",
        `No files of these episodes in ${where}: ${unknown.slice(0, 20).join(", ")}${unknown.length > 20 ? ", ..." : ""}.`,
      );
    const withdrawn = view.withdrawn.length ? await withdrawnAmong(sql, versionId, ids) : [];
    if (withdrawn.length)
      throw new AppError(
        "episode_withdrawn",
        `These episodes were withdrawn and are no longer available in any version: ${withdrawn.slice(0, 20).join(", ")}.`,
      );
    chosen = new Set(ids);
  }
  if (request.filter) {
    const rows = await sql<{ episode_id: string }[]>`
      select e.episode_id from episodes e where e.version_id = ${versionId} ${episodeConditions(sql, request.filter)}
        ${view.withdrawn.length ? sql`and ${episodeNotWithdrawn(sql, versionId)}` : sql``}`;
    const matching = new Set(rows.map((r) => r.episode_id));
    chosen = chosen ? new Set([...chosen].filter((id) => matching.has(id))) : matching;
  }
  return chosen;
}

/**
 * The view's files in scope, with their episodes: those holding a chosen episode (or all), in the
 * streams asked for; a LeRobot version's files of no episode besides, whatever the streams.
 */
async function filesInScope(
  sql: Sql,
  view: VersionView,
  request: PlanRequest,
  lerobot: boolean,
): Promise<FileRecord[]> {
  const { versionId } = view.version;
  const heldBy = (chosen: ReturnType<typeof sql>) =>
    sql`f.path in (select fe.path from file_episodes fe where fe.version_id = ${versionId} and ${chosen})`;
  const conditions = [
    request.episode_ids ? heldBy(sql`fe.episode_id = any(${request.episode_ids}::text[])`) : sql`true`,
    request.filter
      ? heldBy(
          sql`fe.episode_id in (select e.episode_id from episodes e where e.version_id = ${versionId} ${episodeConditions(sql, request.filter)})`,
        )
      : sql`true`,
    request.streams ? sql`f.stream = any(${request.streams}::text[])` : sql`true`,
  ];
  const ofVersion = lerobot
    ? sql`or not exists (select 1 from file_episodes fe where fe.version_id = ${versionId} and fe.path = f.path)`
    : sql``;
  const rows = await sql<FileRecord[]>`
    select ${fileColumns(sql)} from files f
    where f.version_id = ${versionId}
      ${view.withdrawn.length ? sql`and ${fileHoldsNoWithdrawn(sql)}` : sql``}
      and ((${conditions[0]!} and ${conditions[1]!} and ${conditions[2]!}) ${ofVersion})
    order by f.path limit ${MAX_PLAN_FILES + 1}`;
  if (rows.length > MAX_PLAN_FILES)
    throw new AppError(
      "scope_too_large",
      `This pull covers more than ${MAX_PLAN_FILES.toLocaleString("en")} files; a plan holds at most that many. Split it by episode_ids, filter or streams.`,
    );
  return [...rows];
}

type Layout = {
  codebase: string;
  delivered: string[];
  complete: string[];
  incomplete: string[];
  indices: number[];
  chosen: Set<string> | null;
  videoKeys: string[] | undefined;
  rewrite: boolean;
  rendered: RenderedView | null;
  /** The version's own meta/ lists exactly the complete episodes: it is delivered as it is. */
  metaAsDelivered: boolean;
};

/**
 * A LeRobot version's layout on disk: which delivered episodes are complete (every file of theirs
 * in the pulled streams delivered: LeRobot would fail on the others, so meta/ leaves them out),
 * whether v3.0 data files are rewritten, and meta/ for the complete episodes.
 */
async function leRobotLayout(
  ctx: Ctx,
  view: VersionView,
  request: PlanRequest,
  inScope: FileRecord[],
  delivered: string[],
  chosen: Set<string> | null,
): Promise<Layout> {
  const format = view.version.format!;
  const sql = sqlOf(ctx.db);
  const streams = request.streams ?? view.version.streams;
  // Every file of the version counts, those the view leaves out for a withdrawn episode too: an
  // episode sharing one with a withdrawn episode cannot be delivered whole.
  const lacking = new Set(
    (
      await sql<{ episode_id: string }[]>`
        select distinct fe.episode_id from file_episodes fe join files f on f.version_id = fe.version_id and f.path = fe.path
        where fe.version_id = ${view.version.versionId} and fe.episode_id = any(${delivered}::text[])
          and f.stream = any(${streams}::text[]) and not (f.path = any(${inScope.map((f) => f.path)}::text[]))`
    ).map((r) => r.episode_id),
  );
  const complete = delivered.filter((id) => !lacking.has(id));
  const indices = complete.map((id) => episodeIndexOf(view.datasetId, id)).sort((a, b) => a - b);
  const cameras = format.cameras.filter((c) => c.storage === "video").map((c) => c.key);
  const videoKeys =
    request.streams && cameras.some((key) => !request.streams!.includes(key))
      ? cameras.filter((key) => request.streams!.includes(key))
      : undefined;
  const isData = (f: FileRecord) => f.stream === "data" && f.episode_ids.length > 0;
  const completeSet = new Set(complete);
  const holdsOthers = inScope.some((f) => isData(f) && f.episode_ids.some((id) => !completeSet.has(id)));
  const codebase = format.codebase_version as CodebaseVersion;
  const rewrite =
    !request.keep_original_indices &&
    codebase === "v3.0" &&
    inScope.some(isData) &&
    (needsRenumbering(codebase, indices) || holdsOthers);
  const rendered = indices.length
    ? await renderView(ctx, {
        version: { versionId: view.version.versionId, datasetId: view.datasetId, version: view.version.version },
        key: createHash("sha256")
          .update(
            canonicalJson({
              rendered: "plan",
              view: view.sha,
              episodes: indices,
              video_keys: videoKeys ?? null,
              rewrite,
            }),
          )
          .digest("hex"),
        copiesOf: view.copiesOf,
        episodes: async () => indices,
        videoKeys,
        rewrite,
      })
    : null;
  return {
    codebase: format.codebase_version,
    delivered,
    complete,
    incomplete: delivered.filter((id) => lacking.has(id)),
    indices,
    chosen,
    videoKeys,
    rewrite,
    rendered,
    metaAsDelivered: rendered?.facts.whole ?? false,
  };
}

/**
 * The files fetched by signed URL: those of no episode in scope (a LeRobot version's meta/ only
 * when it is delivered as it is) and the rendered meta/.
 */
function byUrl(
  view: VersionView,
  inScope: DeliveredFile<FileRecord>[],
  rendered: RenderedView | null,
  metaAsDelivered: boolean,
): { file: PlanFile; rendered: boolean }[] {
  const lerobot = view.version.format !== null;
  const own = inScope
    .filter((f) => !f.episode_ids.length && (!lerobot || !f.path.startsWith("meta/") || metaAsDelivered))
    .map((file) => ({ file, rendered: false }));
  const made =
    rendered && !rendered.facts.whole
      ? rendered.files.map((f) => ({ file: { ...f, episode_ids: [], stream: null }, rendered: true }))
      : [];
  return [...own, ...made];
}

function summary(layout: Layout, files: PlannedFile[], datasetId: string): LeRobotPlan {
  const { rendered, indices } = layout;
  const facts = rendered?.facts ?? null;
  const onDisk = new Set(files.map((f) => f.path));
  const missing = (facts?.referenced_files ?? []).filter((p) => !onDisk.has(p));
  const loadsAsIs = !missing.length && (facts?.loader.loadsAsIs ?? false);
  const loadsWithList = !missing.length && (facts?.loader.loadsWithEpisodeList ?? false);
  const renumbered = facts?.rewrite?.renumbered
    ? facts.rewrite.layout
        .flatMap((l) => l.episodes)
        .sort((a, b) => a.episodeIndex - b.episodeIndex)
        .map((e) => ({
          episode_id: episodeIdOf(datasetId, e.originalEpisodeIndex),
          original_episode_index: e.originalEpisodeIndex,
          episode_index: e.episodeIndex,
        }))
    : null;
  const notes = [
    layout.codebase !== "v3.0"
      ? "LeRobot reads v2.x datasets up to its 0.3 releases (or converts them to v3.0 with its converter)."
      : null,
    missing.length
      ? `meta/ points at ${missing.length} file(s) the plan does not write (${missing.slice(0, 5).join(", ")}): LeRobot would try to fetch them.`
      : null,
    renumbered
      ? `Episodes renumbered 0..${indices.length - 1} for LeRobot (episode_index and index in the data files, the episode rows in meta/episodes).`
      : null,
    layout.videoKeys
      ? `meta/info.json declares only the cameras pulled (${layout.videoKeys.join(", ") || "none"}).`
      : null,
    facts?.loader.note && !loadsAsIs ? facts.loader.note : null,
  ].filter(Boolean);
  const chosen = layout.chosen;
  return {
    codebase_version: layout.codebase,
    episode_indices: indices,
    requested: layout.delivered.filter((id) => chosen === null || chosen.has(id)),
    co_delivered: layout.delivered.filter((id) => chosen !== null && !chosen.has(id)),
    left_out: layout.incomplete,
    meta: !facts ? "none" : facts.whole ? "as delivered" : "rewritten",
    cameras: layout.videoKeys ?? null,
    renumbering: renumbered,
    missing_files: missing,
    loads_as_is: loadsAsIs,
    loads_with_episode_list: loadsWithList,
    open_with_episodes: !loadsAsIs && loadsWithList ? indices : null,
    note: notes.join(" ") || null,
  };
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

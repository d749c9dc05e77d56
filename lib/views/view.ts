import { createHash } from "node:crypto";
import type { Ctx } from "../context";
import { sqlOf, type Sql } from "../db/client";
import { canonicalJson } from "../canonical-json";
import { cachedRead } from "../cache/read-cache";
import type { LicensedVersion } from "../catalog/access";
import type { DeliveredVersion } from "../fingerprints/delivered";
import { renderView, type RenderedFile, type RenderedView } from "./render";

/**
 * A caller's view of a released version: what the version is for whoever may read it now, less
 * what withdrawals took out of it. Every reader of a version's files by path (the Hub protocol,
 * the pull plan) goes through this one view, so they agree on which files there are, what
 * `meta/` says and which revision that is:
 *
 * - the version's files, less every file that holds a withdrawn episode (as the manifest);
 * - for a LeRobot version with withdrawals, `meta/` rendered for the episodes still whole in the
 *   view (not withdrawn, and sharing no file with a withdrawn one), in place of the version's own;
 * - its revision `sha`: 40 hex digits of a digest of the version's content and its withdrawn
 *   episodes, so the same view has the same sha on every instance and after every restart, and
 *   a withdrawal gives it a new one (decision 0120);
 * - for a fingerprinted version, the caller's licence's own copies of those files
 *   (lib/fingerprints/delivered.ts) and meta/ rendered with its tokens, under a sha of its own
 *   that names the licence, so that no cache keyed by a revision (a client's, this service's)
 *   ever holds one licence's bytes under another's revision (decision 0124).
 */

/**
 * Raised whenever what a view serves changes for the same version and withdrawals (how meta/ is
 * rendered, which files a view keeps): every view then gets a new sha, and clients fetch it again
 * rather than keep what an older rule made.
 */
export const VIEW_FORMAT = 1;

export type VersionView = {
  datasetId: string;
  version: LicensedVersion;
  sha: string;
  /** The version's withdrawn episodes, in byte order. */
  withdrawn: readonly string[];
  /** The licence whose own copies the view hands out (a fingerprinted version), or null: the originals. */
  copiesOf: string | null;
};

export async function versionView(ctx: Ctx, datasetId: string, version: LicensedVersion): Promise<VersionView> {
  const withdrawn = version.withdrawnEpisodes > 0 ? await withdrawnEpisodes(ctx, version.versionId) : [];
  const copiesOf = version.fingerprinted ? version.licenceId : null;
  return {
    datasetId,
    version,
    withdrawn,
    copiesOf,
    sha: viewSha({ datasetId, version: version.version, contentSha256: version.contentSha256, withdrawn, copiesOf }),
  };
}

export function viewSha(input: {
  datasetId: string;
  version: string;
  contentSha256: string;
  withdrawn: readonly string[];
  /** A fingerprinted view's licence; left out of the digest otherwise, so other views keep the sha they had. */
  copiesOf?: string | null;
}): string {
  return sha256Hex({
    view: VIEW_FORMAT,
    dataset_id: input.datasetId,
    version: input.version,
    content_sha256: input.contentSha256,
    withdrawn: input.withdrawn,
    ...(input.copiesOf ? { copies_of: input.copiesOf } : {}),
  }).slice(0, 40);
}

/** The view's version as lib/fingerprints/delivered.ts takes it: which object each file of it is for the caller. */
export const deliveredVersion = (view: VersionView): DeliveredVersion => ({
  versionId: view.version.versionId,
  datasetId: view.datasetId,
  version: view.version.version,
  fingerprinted: view.copiesOf !== null,
});

const sha256Hex = (value: unknown) => createHash("sha256").update(canonicalJson(value)).digest("hex");

/** Flushed with the rest of the catalog when a withdrawal commits (its table notifies the cache). */
function withdrawnEpisodes(ctx: Ctx, versionId: number): Promise<string[]> {
  return cachedRead(ctx, "datasets", ["withdrawn", versionId], async () => {
    const rows = await sqlOf(ctx.db)<{ episode_id: string }[]>`
      select episode_id from withdrawn_episodes where version_id = ${versionId} order by episode_id`;
    return rows.map((r) => r.episode_id);
  });
}

/** What replaces the version's meta/ in a view: null while the version's own serves (no withdrawals, or not LeRobot). */
export type ViewMeta = { files: ReadonlyMap<string, RenderedFile>; rendered: RenderedView } | null;

/**
 * The view's meta/, rendered on first use. A version without withdrawals, or not imported from
 * LeRobot, keeps its own; otherwise meta/ lists the episodes still whole in the view, so that
 * LeRobot finds every file of every episode it lists. A fingerprinted view's is rendered for its
 * licence (its sha is the licence's own, and so is the rendering's key), each file carrying the
 * licence's token as its copies do.
 */
export async function viewMeta(ctx: Ctx, view: VersionView): Promise<ViewMeta> {
  if (!view.withdrawn.length || !view.version.format) return null;
  const { versionId } = view.version;
  const rendered = await renderView(ctx, {
    version: { versionId, datasetId: view.datasetId, version: view.version.version },
    key: sha256Hex({ rendered: "withdrawals", view: view.sha, version_id: versionId }),
    copiesOf: view.copiesOf,
    episodes: async () =>
      (await wholeEpisodes(sqlOf(ctx.db), versionId)).map((id) => episodeIndexOf(view.datasetId, id)),
  });
  if (rendered.facts.whole) return null;
  return { files: new Map(rendered.files.map((f) => [f.path, f])), rendered };
}

/** A path the view's meta/ decides: rendered files replace every file under it. */
export const isMetaPath = (path: string) => path.startsWith("meta/");

/**
 * The episodes of a version not withdrawn that share no file with a withdrawn one: those whose
 * every file the view still holds. In byte order.
 */
async function wholeEpisodes(sql: Sql, versionId: number): Promise<string[]> {
  const rows = await sql<{ episode_id: string }[]>`
    select e.episode_id from episodes e
    where e.version_id = ${versionId}
      and not exists (select 1 from withdrawn_episodes w where w.version_id = e.version_id and w.episode_id = e.episode_id)
      and not exists (
        select 1 from file_episodes fe
        join file_episodes other on other.version_id = fe.version_id and other.path = fe.path
        join withdrawn_episodes w on w.version_id = other.version_id and w.episode_id = other.episode_id
        where fe.version_id = e.version_id and fe.episode_id = e.episode_id)
    order by e.episode_id`;
  return rows.map((r) => r.episode_id);
}

/** The LeRobot episode index behind one of our episode ids: a LeRobot import names them `<dataset>-<index>`. */
export function episodeIndexOf(datasetId: string, episodeId: string): number {
  const rest = episodeId.startsWith(`${datasetId}-`) ? episodeId.slice(datasetId.length + 1) : "";
  if (!/^[0-9]+$/.test(rest))
    throw new Error(`episode ${episodeId} is not named <dataset>-<episode_index>, as a LeRobot import names them`);
  return Number(rest);
}

/** Our episode id of a LeRobot episode index (as the importer names it). */
export const episodeIdOf = (datasetId: string, index: number) => `${datasetId}-${String(index).padStart(6, "0")}`;

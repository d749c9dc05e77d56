import type { Ctx } from "../context";
import { NOT_VISIBLE } from "../errors";
import { assertLicensed, datasetVersionAccess, type LicensedVersion, type VersionAccess } from "../catalog/access";
import { DATASET_ID_PATTERN } from "../catalog/identifiers";
import { versionView, type VersionView } from "../views/view";
import { hubError } from "./errors";

/**
 * A dataset as a repository of the Hub protocol: `das/<dataset_id>`, its revisions and the view
 * each names. Revisions (decision 0120):
 * - a tag per version the caller may read now, named by the version (`1.0.0`);
 * - `main`, the branch of the newest of them;
 * - a tag per LeRobot codebase version (`v2.1`, `v3.0`) on the newest of them in that format, so
 *   that LeRobot finds a dataset without being told a revision;
 * - the 40-hex sha of any of those views.
 * Licences and their terms decide as on /api/v1, in the Hub's words: a dataset the caller holds no
 * licence to is RepoNotFound (404, exactly as if it did not exist); one it holds licences to, none
 * of them in term now, is GatedRepo (403, saying when they ended or start: the caller's own
 * licences, which tell it nothing about anyone else's); a named version outside the caller's
 * licence or its term GatedRepo as well (decision 0125).
 */

export const NAMESPACE = "das";
export const MAIN = "main";
const CODEBASE_TAG = /^v[0-9]+\.[0-9]+$/;
const SHA = /^[0-9a-f]{40}$/;
/** A git ref name as the clients send one (a branch, a tag, `refs/convert/parquet`), or a sha. */
const REF = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/;

export type Repository = { datasetId: string; versions: VersionAccess[] };

/**
 * The repository a key names: RepoNotFound for another namespace, a name no dataset can have, or a
 * dataset it holds no licence to; GatedRepo for one whose licences are all out of their term.
 */
export async function openRepository(ctx: Ctx, namespace: string, name: string): Promise<Repository> {
  if (namespace !== NAMESPACE)
    throw hubError(
      "not_found",
      "RepoNotFound",
      `No repository '${namespace}/${name}': the datasets here are the repositories ${NAMESPACE}/<dataset_id>.`,
    );
  if (!DATASET_ID_PATTERN.test(name)) throw hubError("not_found", "RepoNotFound", NOT_VISIBLE.dataset);
  const now = new Date();
  const versions = await datasetVersionAccess(ctx, name, now);
  if (versions.some((v) => v.licenceId !== null)) return { datasetId: name, versions };
  const held = versions.filter((v) => v.heldOutOfTerm !== null);
  // Nothing held: the same answer, byte for byte, as a dataset that does not exist (the API's 404 rule).
  if (!held.length) throw hubError("not_found", "RepoNotFound", NOT_VISIBLE.dataset);
  throw hubError("version_not_licensed", "GatedRepo", notInTerm(name, held, now));
}

/** Most versions a GatedRepo message names; the rest are counted. */
const NAMED_VERSIONS = 5;

/** What a caller whose licences to a dataset are all out of term is told: when each ended or starts. */
export function notInTerm(datasetId: string, held: readonly VersionAccess[], now: Date): string {
  const terms = held.slice(0, NAMED_VERSIONS).map((v) => {
    const term = v.heldOutOfTerm!;
    return term.endsAt && term.endsAt.getTime() <= now.getTime()
      ? `to version ${v.version} ended on ${term.endsAt.toISOString()}`
      : `to version ${v.version} starts on ${term.startsAt.toISOString()}`;
  });
  const more = held.length > NAMED_VERSIONS ? `, and ${held.length - NAMED_VERSIONS} more are not in term either` : "";
  return `Dataset '${datasetId}' is not licensed to you now: your licence ${terms.join("; your licence ")}${more}. Ask your administrator for a licence in term.`;
}

/** The versions the caller may read now, newest first. */
export const readable = (repo: Repository): LicensedVersion[] =>
  repo.versions.filter((v): v is LicensedVersion & VersionAccess => v.licenceId !== null);

export type Ref = { name: string; ref: string; view: VersionView };

/** Every branch and tag of the repository for this caller, each with its view. */
export async function refsOf(ctx: Ctx, repo: Repository): Promise<{ branches: Ref[]; tags: Ref[] }> {
  const versions = readable(repo);
  const views = await Promise.all(versions.map((v) => versionView(ctx, repo.datasetId, v)));
  const tags: Ref[] = views.map((view) => ({
    name: view.version.version,
    ref: `refs/tags/${view.version.version}`,
    view,
  }));
  const codebases = new Set<string>();
  for (const view of views) {
    const codebase = view.version.format?.codebase_version;
    if (!codebase || codebases.has(codebase)) continue;
    codebases.add(codebase);
    tags.push({ name: codebase, ref: `refs/tags/${codebase}`, view });
  }
  return { branches: [{ name: MAIN, ref: `refs/heads/${MAIN}`, view: views[0]! }], tags };
}

/** The view a revision names for the caller, or the Hub's refusal. */
export async function resolveRevision(ctx: Ctx, repo: Repository, revision: string): Promise<VersionView> {
  if (!REF.test(revision) || revision.includes("..") || revision.endsWith("/"))
    throw hubError(
      "invalid_parameter",
      "RevisionNotFound",
      `'${revision}' is not a revision: name a branch (main), a tag (a version such as 1.0.0, or a LeRobot codebase version such as v3.0) or a 40-hex sha.`,
    );
  const versions = readable(repo);
  if (revision === MAIN) return versionView(ctx, repo.datasetId, versions[0]!);
  const named = repo.versions.find((v) => v.version === revision);
  if (named) return versionView(ctx, repo.datasetId, gated(named, repo.datasetId));
  if (CODEBASE_TAG.test(revision)) {
    const inFormat = repo.versions.filter((v) => v.format?.codebase_version === revision);
    const newest = inFormat.find((v) => v.licenceId !== null) ?? inFormat[0];
    if (newest) return versionView(ctx, repo.datasetId, gated(newest, repo.datasetId));
  }
  if (SHA.test(revision)) {
    for (const version of versions) {
      const view = await versionView(ctx, repo.datasetId, version);
      if (view.sha === revision) return view;
    }
  }
  throw hubError(
    "not_found",
    "RevisionNotFound",
    `Repository ${NAMESPACE}/${repo.datasetId} has no revision '${revision}' for you: its revisions are main, a tag per version you may read and its sha.`,
  );
}

/** A version the caller names: theirs to read, or GatedRepo saying why not (their licence ended, starts later, or never was). */
function gated(version: VersionAccess, datasetId: string): LicensedVersion {
  try {
    return assertLicensed(version, datasetId);
  } catch (error) {
    throw hubError("version_not_licensed", "GatedRepo", (error as Error).message);
  }
}

/** The view a request names: its repository, then its revision (`main` when it names none). */
export async function openRevision(
  ctx: Ctx,
  at: { namespace: string; name: string; revision?: string },
): Promise<VersionView> {
  const repo = await openRepository(ctx, at.namespace, at.name);
  return resolveRevision(ctx, repo, at.revision ?? MAIN);
}

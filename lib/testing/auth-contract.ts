import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../db/client";
import { apiKeys } from "../db/schema";
import { mintKey } from "../auth/api-keys";
import { revokeKey } from "../admin/keys";
import type { Organization } from "../admin/organizations";
import type { RouteHandler } from "../http/route";
import { PROJECT_ROOT } from "../dev/embedded-default";
import {
  byteOrder,
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
} from "./fixtures";
import { call, type CallResult } from "./http";
import { expectError, expectIndistinguishable, expectOk, expectOkWithoutBody } from "./expect-api";
import * as api from "../../app/api/[[...path]]/route";
import * as hub from "../../app/hub/[[...path]]/route";

/**
 * The authentication and licence-scope contract every /api/v1 endpoint keeps (keys authenticate,
 * licences scope what they see), as one table of routes and one runner. A new endpoint is one row in
 * API_ROUTES; the suite fails when an operation of lib/api/operations has no row.
 */

/** What a row asks for: the URL, the path parameters Next would pass, and a JSON body (or a form) for POST. */
export type Target = { url: string; params?: Record<string, string>; body?: unknown; form?: [string, string][] };

/**
 * The data every row can point at, built once per suite with its own organisation:
 * - `scoped`: a dataset with versions 1.0.0 and 2.0.0, both licensed to the organisation; the
 *   narrowed key holds 1.0.0 only. Both versions contain `episodeId`, with spans and files.
 * - `outside`: a dataset licensed to the organisation but outside the narrowed key's scope.
 * - `missing`: ids that exist nowhere.
 * - `noticeId`: a withdrawal notice addressed to the organisation.
 */
export type ContractWorld = {
  org: Organization;
  scoped: { datasetId: string; episodeId: string };
  outside: { datasetId: string; episodeId: string };
  missing: { datasetId: string; episodeId: string };
  keys: { full: string; narrowed: string };
  noticeId: string;
};

export type ContractRow = {
  /** "GET /api/v1/datasets" */
  name: string;
  method: "GET" | "POST" | "HEAD";
  handler: RouteHandler;
  /** The success status of `allowed` (201 for a resource that is created, say). */
  okStatus?: number;
  /** A success without a body (a HEAD's metadata, a redirect): checked by its headers, `checkAllowed` gets them. */
  noBody?: true;
  /** What a repeat of the same request by the same key may answer instead (a preview handed out again: 200). */
  repeatStatus?: number;
  /** A request inside the narrowed key's scope (dataset `scoped`, version 1.0.0). */
  allowed(w: ContractWorld): Target;
  /** Checks the successful body; `key` says which key made the request, so narrowing can be seen in lists. */
  checkAllowed?(json: any, w: ContractWorld, key: "full" | "narrowed", headers: Headers): void;
  /** The same request for version 2.0.0: licensed to the organisation, outside the narrowed key. */
  otherVersion?(w: ContractWorld): Target;
  /** The request for dataset `outside` (or its episode), and the same for `missing`. */
  outsideScope?(w: ContractWorld): { outside: Target; missing: Target };
};

const v = (dataset: string, version: string, tail: string): Target => ({
  url: `/api/v1/datasets/${dataset}/versions/${version}/${tail}`,
  params: { id: dataset, version },
});

const downloadOf = (datasetId: string, version: string): Target => ({
  url: "/api/v1/downloads",
  body: { dataset_id: datasetId, version },
});

const previewOf = (episodeId: string, version?: string): Target => ({
  url: "/api/v1/previews",
  body: { episode_id: episodeId, ...(version ? { version } : {}) },
});

const annotationsOf = (episodeId: string, version?: string): Target => ({
  url: `/api/v1/episodes/${episodeId}/annotations${version ? `?version=${version}` : ""}`,
  params: { episodeId },
});

const hubRepo = (dataset: string, tail = "") => ({ url: `/hub/api/datasets/das/${dataset}${tail}` });
const hubFile = (dataset: string, revision: string, path: string): Target => ({
  url: `/hub/datasets/das/${dataset}/resolve/${revision}/${path}`,
});
const planOf = (dataset: string, version: string): Target => ({
  ...v(dataset, version, "plan"),
  body: {},
});

/** Every endpoint of /api/v1 and /hub that takes a key (a POST sends its JSON `body`; see the downloads row). */
export const API_ROUTES: ContractRow[] = [
  {
    name: "GET /api/v1/datasets",
    method: "GET",
    handler: api.GET,
    allowed: () => ({ url: "/api/v1/datasets" }),
    checkAllowed: (json, w, key) => {
      const shown = json.datasets.map((d: { dataset_id: string; licensed_versions: string[] }) => [
        d.dataset_id,
        d.licensed_versions,
      ]);
      const expected: [string, string[]][] =
        key === "full"
          ? [
              [w.scoped.datasetId, ["2.0.0", "1.0.0"]],
              [w.outside.datasetId, ["1.0.0"]],
            ]
          : [[w.scoped.datasetId, ["1.0.0"]]];
      expect(shown).toEqual(expected.sort((a, b) => (a[0] < b[0] ? -1 : 1)));
    },
  },
  {
    name: "GET /api/v1/licences",
    method: "GET",
    handler: api.GET,
    allowed: () => ({ url: "/api/v1/licences" }),
    checkAllowed: (json, w, key) => {
      const shown = json.licences.map((l: { dataset_id: string; version: string; terms: unknown }) => [
        l.dataset_id,
        l.version,
        l.terms,
      ]);
      const expected: [string, string, null][] =
        key === "full"
          ? [
              [w.scoped.datasetId, "2.0.0", null],
              [w.scoped.datasetId, "1.0.0", null],
              [w.outside.datasetId, "1.0.0", null],
            ]
          : [[w.scoped.datasetId, "1.0.0", null]];
      expect(shown).toEqual(expected.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
    },
  },
  {
    name: "GET /api/v1/datasets/{id}/versions",
    method: "GET",
    handler: api.GET,
    allowed: (w) => ({ url: `/api/v1/datasets/${w.scoped.datasetId}/versions`, params: { id: w.scoped.datasetId } }),
    checkAllowed: (json, w, key) => {
      expect(json.dataset_id).toBe(w.scoped.datasetId);
      expect(json.versions.map((x: { version: string; licensed: boolean }) => [x.version, x.licensed])).toEqual([
        ["2.0.0", key === "full"],
        ["1.0.0", true],
      ]);
    },
    outsideScope: (w) => ({
      outside: { url: `/api/v1/datasets/${w.outside.datasetId}/versions`, params: { id: w.outside.datasetId } },
      missing: { url: `/api/v1/datasets/${w.missing.datasetId}/versions`, params: { id: w.missing.datasetId } },
    }),
  },
  {
    name: "GET /api/v1/datasets/{id}/versions/{version}/manifest",
    method: "GET",
    handler: api.GET,
    allowed: (w) => v(w.scoped.datasetId, "1.0.0", "manifest"),
    checkAllowed: (json, w) => {
      expect(json).toMatchObject({ dataset_id: w.scoped.datasetId, version: "1.0.0" });
      expect(json.files.map((f: { path: string }) => f.path)).toEqual(
        ["README.md", `${w.scoped.episodeId}/cam.mp4`].sort(byteOrder),
      );
    },
    otherVersion: (w) => v(w.scoped.datasetId, "2.0.0", "manifest"),
    outsideScope: (w) => ({
      outside: v(w.outside.datasetId, "1.0.0", "manifest"),
      missing: v(w.missing.datasetId, "1.0.0", "manifest"),
    }),
  },
  {
    name: "GET /api/v1/datasets/{id}/versions/{version}/episodes",
    method: "GET",
    handler: api.GET,
    allowed: (w) => v(w.scoped.datasetId, "1.0.0", "episodes"),
    checkAllowed: (json, w) => {
      expect(json).toMatchObject({ dataset_id: w.scoped.datasetId, version: "1.0.0", total: 3 });
      expect(json.episodes.map((e: { episode_id: string }) => e.episode_id)).toContain(w.scoped.episodeId);
    },
    otherVersion: (w) => v(w.scoped.datasetId, "2.0.0", "episodes"),
    outsideScope: (w) => ({
      outside: v(w.outside.datasetId, "1.0.0", "episodes"),
      missing: v(w.missing.datasetId, "1.0.0", "episodes"),
    }),
  },
  {
    name: "GET /api/v1/episodes/{episode_id}/annotations",
    method: "GET",
    handler: api.GET,
    allowed: (w) => annotationsOf(w.scoped.episodeId),
    // The full key resolves in 2.0.0; the narrowed one cannot see it and falls back to 1.0.0.
    checkAllowed: (json, w, key) => {
      const version = key === "full" ? "2.0.0" : "1.0.0";
      expect(json).toMatchObject({ episode_id: w.scoped.episodeId, dataset_id: w.scoped.datasetId, version });
      expect(json.annotations.map((a: { label: string }) => a.label)).toEqual([`span in ${version}`]);
    },
    otherVersion: (w) => annotationsOf(w.scoped.episodeId, "2.0.0"),
    outsideScope: (w) => ({ outside: annotationsOf(w.outside.episodeId), missing: annotationsOf(w.missing.episodeId) }),
  },
  {
    name: "POST /api/v1/downloads",
    method: "POST",
    handler: api.POST,
    okStatus: 201,
    allowed: (w) => downloadOf(w.scoped.datasetId, "1.0.0"),
    checkAllowed: (json, w) => {
      expect(json).toMatchObject({
        dataset_id: w.scoped.datasetId,
        version: "1.0.0",
        file_count: 2,
        total_bytes: 1010,
      });
      expect(json.files.map((f: { path: string }) => f.path)).toEqual(
        ["README.md", `${w.scoped.episodeId}/cam.mp4`].sort(byteOrder),
      );
    },
    otherVersion: (w) => downloadOf(w.scoped.datasetId, "2.0.0"),
    outsideScope: (w) => ({
      outside: downloadOf(w.outside.datasetId, "1.0.0"),
      missing: downloadOf(w.missing.datasetId, "1.0.0"),
    }),
  },
  {
    name: "POST /api/v1/previews",
    method: "POST",
    handler: api.POST,
    okStatus: 201,
    repeatStatus: 200,
    allowed: (w) => previewOf(w.scoped.episodeId, "1.0.0"),
    checkAllowed: (json, w) => {
      expect(json).toMatchObject({ episode_id: w.scoped.episodeId, dataset_id: w.scoped.datasetId, version: "1.0.0" });
      expect(json.streams.map((s: { stream: string; start_s: number }) => [s.stream, s.start_s])).toEqual([["cam", 0]]);
    },
    otherVersion: (w) => previewOf(w.scoped.episodeId, "2.0.0"),
    outsideScope: (w) => ({ outside: previewOf(w.outside.episodeId), missing: previewOf(w.missing.episodeId) }),
  },
  {
    name: "GET /api/v1/notices",
    method: "GET",
    handler: api.GET,
    allowed: () => ({ url: "/api/v1/notices" }),
    // Notices are the organisation's, whichever of its keys asks.
    checkAllowed: (json, w) => {
      expect(json.notices.map((n: { notice_id: string }) => n.notice_id)).toEqual([w.noticeId]);
    },
  },
  {
    name: "POST /api/v1/notices/{notice_id}/acknowledgements",
    method: "POST",
    handler: api.POST,
    okStatus: 201,
    allowed: (w) => ({
      url: `/api/v1/notices/${w.noticeId}/acknowledgements`,
      params: { notice_id: w.noticeId },
      body: { statement: "Deleted.", deleted_paths: [] },
    }),
    checkAllowed: (json, w) => {
      expect(json).toMatchObject({ notice_id: w.noticeId, statement: "Deleted.", deleted_paths: [] });
    },
  },
  {
    name: "POST /api/v1/datasets/{id}/versions/{version}/plan",
    method: "POST",
    handler: api.POST,
    allowed: (w) => planOf(w.scoped.datasetId, "1.0.0"),
    checkAllowed: (json, w) => {
      expect(json).toMatchObject({ dataset_id: w.scoped.datasetId, version: "1.0.0" });
      expect(json.files.map((f: { path: string; get: object }) => [f.path, Object.keys(f.get)])).toEqual(
        [
          ["README.md", ["url"]],
          [`${w.scoped.episodeId}/cam.mp4`, ["download", "episode_id"]],
        ].sort((a, b) => byteOrder(a[0] as string, b[0] as string)),
      );
    },
    otherVersion: (w) => planOf(w.scoped.datasetId, "2.0.0"),
    outsideScope: (w) => ({
      outside: planOf(w.outside.datasetId, "1.0.0"),
      missing: planOf(w.missing.datasetId, "1.0.0"),
    }),
  },
  {
    name: "GET /hub/api/datasets/{namespace}/{name}",
    method: "GET",
    handler: hub.GET,
    allowed: (w) => hubRepo(w.scoped.datasetId),
    // main is the newest version the key may read.
    checkAllowed: (json, w, key) => {
      expect(json.id).toBe(`das/${w.scoped.datasetId}`);
      expect(json.siblings.map((s: { rfilename: string }) => s.rfilename)).toEqual(
        ["README.md", `${w.scoped.episodeId}/cam.mp4`].sort(byteOrder),
      );
      expect(json.lastModified).toBe(key === "full" ? "2026-02-01T00:00:00.000Z" : "2026-01-01T00:00:00.000Z");
    },
    outsideScope: (w) => ({ outside: hubRepo(w.outside.datasetId), missing: hubRepo(w.missing.datasetId) }),
  },
  {
    name: "GET /hub/api/datasets/{namespace}/{name}/revision/{revision}",
    method: "GET",
    handler: hub.GET,
    allowed: (w) => hubRepo(w.scoped.datasetId, "/revision/1.0.0"),
    checkAllowed: (json, w) => expect(json.id).toBe(`das/${w.scoped.datasetId}`),
    otherVersion: (w) => hubRepo(w.scoped.datasetId, "/revision/2.0.0"),
    outsideScope: (w) => ({
      outside: hubRepo(w.outside.datasetId, "/revision/1.0.0"),
      missing: hubRepo(w.missing.datasetId, "/revision/1.0.0"),
    }),
  },
  {
    name: "GET /hub/api/datasets/{namespace}/{name}/refs",
    method: "GET",
    handler: hub.GET,
    allowed: (w) => hubRepo(w.scoped.datasetId, "/refs"),
    checkAllowed: (json, _w, key) => {
      expect(json.tags.map((t: { name: string }) => t.name)).toEqual(key === "full" ? ["2.0.0", "1.0.0"] : ["1.0.0"]);
      expect(json.converts).toEqual([]);
    },
    outsideScope: (w) => ({
      outside: hubRepo(w.outside.datasetId, "/refs"),
      missing: hubRepo(w.missing.datasetId, "/refs"),
    }),
  },
  {
    name: "GET /hub/api/datasets/{namespace}/{name}/tree/{revision}",
    method: "GET",
    handler: hub.GET,
    allowed: (w) => hubRepo(w.scoped.datasetId, "/tree/1.0.0"),
    checkAllowed: (json, w) =>
      expect(json.map((e: { path: string }) => e.path)).toEqual(["README.md", w.scoped.episodeId].sort(byteOrder)),
    otherVersion: (w) => hubRepo(w.scoped.datasetId, "/tree/2.0.0"),
    outsideScope: (w) => ({
      outside: hubRepo(w.outside.datasetId, "/tree/1.0.0"),
      missing: hubRepo(w.missing.datasetId, "/tree/1.0.0"),
    }),
  },
  {
    name: "GET /hub/api/datasets/{namespace}/{name}/tree/{revision}/{path}",
    method: "GET",
    handler: hub.GET,
    allowed: (w) => hubRepo(w.scoped.datasetId, `/tree/1.0.0/${w.scoped.episodeId}`),
    checkAllowed: (json, w) =>
      expect(json.map((e: { path: string }) => e.path)).toEqual([`${w.scoped.episodeId}/cam.mp4`]),
    otherVersion: (w) => hubRepo(w.scoped.datasetId, `/tree/2.0.0/${w.scoped.episodeId}`),
    outsideScope: (w) => ({
      outside: hubRepo(w.outside.datasetId, `/tree/1.0.0/${w.outside.episodeId}`),
      missing: hubRepo(w.missing.datasetId, `/tree/1.0.0/${w.missing.episodeId}`),
    }),
  },
  {
    name: "POST /hub/api/datasets/{namespace}/{name}/paths-info/{revision}",
    method: "POST",
    handler: hub.POST,
    allowed: (w) => ({ ...hubRepo(w.scoped.datasetId, "/paths-info/1.0.0"), form: [["paths", "README.md"]] }),
    checkAllowed: (json) => expect(json.map((e: { path: string }) => e.path)).toEqual(["README.md"]),
    otherVersion: (w) => ({ ...hubRepo(w.scoped.datasetId, "/paths-info/2.0.0"), form: [["paths", "README.md"]] }),
    outsideScope: (w) => ({
      outside: { ...hubRepo(w.outside.datasetId, "/paths-info/1.0.0"), form: [["paths", "README.md"]] },
      missing: { ...hubRepo(w.missing.datasetId, "/paths-info/1.0.0"), form: [["paths", "README.md"]] },
    }),
  },
  {
    name: "HEAD /hub/datasets/{namespace}/{name}/resolve/{revision}/{path}",
    method: "HEAD",
    handler: hub.HEAD,
    noBody: true,
    allowed: (w) => hubFile(w.scoped.datasetId, "1.0.0", `${w.scoped.episodeId}/cam.mp4`),
    checkAllowed: (_json, _w, _key, headers) => {
      expect(headers.get("x-linked-etag")).toBe(`"${"b".repeat(64)}"`);
      expect(headers.get("x-linked-size")).toBe("1000");
      expect(headers.get("location")).toBeNull();
    },
    otherVersion: (w) => hubFile(w.scoped.datasetId, "2.0.0", `${w.scoped.episodeId}/cam.mp4`),
    outsideScope: (w) => ({
      outside: hubFile(w.outside.datasetId, "1.0.0", `${w.outside.episodeId}/cam.mp4`),
      missing: hubFile(w.missing.datasetId, "1.0.0", `${w.missing.episodeId}/cam.mp4`),
    }),
  },
  {
    name: "GET /hub/datasets/{namespace}/{name}/resolve/{revision}/{path}",
    method: "GET",
    handler: hub.GET,
    okStatus: 302,
    noBody: true,
    allowed: (w) => hubFile(w.scoped.datasetId, "1.0.0", `${w.scoped.episodeId}/cam.mp4`),
    checkAllowed: (_json, w, _key, headers) => {
      expect(headers.get("location")).toContain(`/${w.scoped.datasetId}/1.0.0/${w.scoped.episodeId}/cam.mp4?`);
      expect(headers.get("x-linked-size")).toBe("1000");
    },
    otherVersion: (w) => hubFile(w.scoped.datasetId, "2.0.0", `${w.scoped.episodeId}/cam.mp4`),
    outsideScope: (w) => ({
      outside: hubFile(w.outside.datasetId, "1.0.0", `${w.outside.episodeId}/cam.mp4`),
      missing: hubFile(w.missing.datasetId, "1.0.0", `${w.missing.episodeId}/cam.mp4`),
    }),
  },
];

/**
 * Operations that deliberately need no key (the OpenAPI document), by name as in API_ROUTES.
 * Every other operation must have a row there.
 */
export const PUBLIC_ROUTES: string[] = ["GET /api/v1/openapi.json"];

/** Builds the data and keys the contract runs against, under a new organisation. */
export async function buildContractWorld(): Promise<ContractWorld> {
  const org = await createTestOrg();
  const scopedEpisodes = randomEpisodes(3, 101);
  const episodeId = scopedEpisodes[0]!.episode_id;
  const version = (name: string) => ({
    version: name,
    // The Hub's info shows a revision's release: which version `main` is for each key.
    released_at: name === "1.0.0" ? "2026-01-01T00:00:00Z" : "2026-02-01T00:00:00Z",
    episodes: scopedEpisodes,
    annotations: [{ episode_id: episodeId, label: `span in ${name}`, start_s: 0, end_s: 0.5 }],
    files: [
      { path: "README.md", size_bytes: 10, sha256: "a".repeat(64) },
      { path: `${episodeId}/cam.mp4`, episode_id: episodeId, stream: "cam", size_bytes: 1000, sha256: "b".repeat(64) },
    ],
  });
  const scopedId = await importTestDataset([version("1.0.0"), version("2.0.0")]);
  const outsideEpisodes = randomEpisodes(2, 102);
  const outsideId = await importTestDataset([
    {
      version: "1.0.0",
      episodes: outsideEpisodes,
      annotations: [{ episode_id: outsideEpisodes[0]!.episode_id, label: "outside", start_s: 0, end_s: 0.5 }],
      // A file, so that a download of it succeeds for the full key.
      files: [
        {
          path: `${outsideEpisodes[0]!.episode_id}/cam.mp4`,
          episode_id: outsideEpisodes[0]!.episode_id,
          stream: "cam",
          size_bytes: 5,
          sha256: "c".repeat(64),
        },
      ],
    },
  ]);
  await grant(org.id, scopedId, "1.0.0");
  await grant(org.id, scopedId, "2.0.0");
  await grant(org.id, outsideId, "1.0.0");
  // A notice to the organisation, as a withdrawal writes one (lib/notices/withdrawal-notices.ts).
  const withdrawalId = uniqueId("wd");
  const noticeId = `nt_${randomBytes(16).toString("hex")}`;
  const sql = getDb().$client;
  await sql`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, episode_count)
    values (${withdrawalId}, 'operator', 'contract', 'contract (das-admin)', 'contract', 1)`;
  await sql`insert into notices (id, organization_id, kind, withdrawal_id, episode_ids, deliveries)
    values (${noticeId}, ${org.id}, 'withdrawal', ${withdrawalId}, ${[uniqueId("ep")]}::text[], '[]'::jsonb)`;
  const full = await createTestKey(org.id);
  const narrowed = await createTestKey(org.id, { scope: [{ datasetId: scopedId, version: "1.0.0" }] });
  return {
    org,
    scoped: { datasetId: scopedId, episodeId },
    outside: { datasetId: outsideId, episodeId: outsideEpisodes[0]!.episode_id },
    missing: { datasetId: uniqueId("ds"), episodeId: uniqueId("ep") },
    keys: { full: full.secret, narrowed: narrowed.secret },
    noticeId,
  };
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const base62Run = (n: number) => Array.from({ length: n }, (_, i) => BASE62[(i * 7) % 62]).join("");

/** Authorization headers that are not a well-formed bearer key; `key` is a valid key, to misuse. */
export const MALFORMED_AUTHORIZATION: [string, (key: string) => string][] = [
  ["wrong prefix", () => `Bearer dax_${base62Run(43)}`],
  ["upper-case prefix", () => `Bearer DAS_${base62Run(43)}`],
  ["too short", () => "Bearer das_abc"],
  ["one character short", (key) => `Bearer ${key.slice(0, -1)}`],
  ["one character long", (key) => `Bearer ${key}x`],
  ["bad characters", () => `Bearer das_${base62Run(42)}!`],
  ["base64url characters", () => `Bearer das_${base62Run(41)}-_`],
  ["Basic scheme", () => `Basic ${Buffer.from("user:password").toString("base64")}`],
  ["a valid key under the Basic scheme", (key) => `Basic ${key}`],
  ["a valid key with no scheme", (key) => key],
  ["a valid key under another scheme", (key) => `Token ${key}`],
  ["empty Bearer", () => "Bearer "],
  ["Bearer alone", () => "Bearer"],
  ["two tokens", (key) => `Bearer ${key} ${key}`],
  ["a valid key and a comma", (key) => `Bearer ${key},`],
];

async function send(
  row: ContractRow,
  target: Target,
  auth: { key?: string; authorization?: string; headers?: Record<string, string> } = {},
): Promise<CallResult> {
  const headers = {
    ...auth.headers,
    ...(auth.authorization !== undefined ? { authorization: auth.authorization } : {}),
  };
  const form = target.form ? new URLSearchParams(target.form).toString() : undefined;
  return call(row.handler, target.url, {
    method: row.method,
    key: auth.key,
    params: target.params,
    body: form ?? target.body,
    headers: form !== undefined ? { "content-type": "application/x-www-form-urlencoded", ...headers } : headers,
  });
}

/** The row's success, or its repeat's (the same request answered again without a new resource). */
function expectSuccess(row: ContractRow, res: CallResult): void {
  const status =
    row.repeatStatus !== undefined && res.status === row.repeatStatus ? row.repeatStatus : (row.okStatus ?? 200);
  if (row.noBody) expectOkWithoutBody(res, status);
  else expectOk(res, status);
}

function expectUnauthorized(res: CallResult): void {
  expectError(res, 401, "unauthorized");
  expect(res.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
}

/** Registers the contract for each row; call it at the top level of a test file. */
export function runAuthContract(rows: ContractRow[]): void {
  let w: ContractWorld;
  beforeAll(async () => {
    w = await buildContractWorld();
  });

  describe.each(rows)("$name", (row) => {
    const targets = () => [
      row.allowed(w),
      ...(row.otherVersion ? [row.otherVersion(w)] : []),
      ...(row.outsideScope ? Object.values(row.outsideScope(w)) : []),
    ];

    it("answers a valid key, full or narrowed, with success", async () => {
      for (const key of ["full", "narrowed"] as const) {
        const res = await send(row, row.allowed(w), { key: w.keys[key] });
        expectSuccess(row, res);
        row.checkAllowed?.(res.json, w, key, res.headers);
      }
    });

    it("accepts the scheme name in any case", async () => {
      const res = await send(row, row.allowed(w), { authorization: `bearer ${w.keys.full}` });
      expectSuccess(row, res);
    });

    it("answers no key with 401 unauthorized and WWW-Authenticate: Bearer, whatever the target", async () => {
      for (const target of targets()) expectUnauthorized(await send(row, target));
    });

    it("does not take a key from any other header", async () => {
      const res = await send(row, row.allowed(w), {
        headers: { "x-api-key": w.keys.full, cookie: `key=${w.keys.full}` },
      });
      expectUnauthorized(res);
    });

    it.each(MALFORMED_AUTHORIZATION)("answers a malformed key (%s) with 401", async (_, header) => {
      expectUnauthorized(await send(row, row.allowed(w), { authorization: header(w.keys.full) }));
    });

    it("answers an unknown well-formed key with 401, whatever the target", async () => {
      const unknown = mintKey().secret;
      for (const target of targets()) expectUnauthorized(await send(row, target, { key: unknown }));
    });

    it("answers a revoked key with 401", async () => {
      const key = await createTestKey(w.org.id);
      expectSuccess(row, await send(row, row.allowed(w), { key: key.secret }));
      await revokeKey(operatorCtx(), { id: key.id });
      expectUnauthorized(await send(row, row.allowed(w), { key: key.secret }));
    });

    it("answers an expired key with 401", async () => {
      const key = await createTestKey(w.org.id, { expiresAt: new Date(Date.now() + 3_600_000) });
      expectSuccess(row, await send(row, row.allowed(w), { key: key.secret }));
      await getDb()
        .update(apiKeys)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(apiKeys.id, key.id));
      expectUnauthorized(await send(row, row.allowed(w), { key: key.secret }));
    });

    if (row.otherVersion) {
      const otherVersion = row.otherVersion;
      it("answers a narrowed key asking for a version outside its scope with 403 version_not_licensed", async () => {
        // The organisation holds the version: the full key gets it, so the 403 is the narrowing's doing.
        expectSuccess(row, await send(row, otherVersion(w), { key: w.keys.full }));
        const res = await send(row, otherVersion(w), { key: w.keys.narrowed });
        expectError(res, 403, "version_not_licensed");
        expect(res.json.error.message).toContain("2.0.0");
        expect(res.json.error.message).toContain(w.scoped.datasetId);
      });
    }

    if (row.outsideScope) {
      const outsideScope = row.outsideScope;
      it("answers a narrowed key asking outside its scope exactly as for something that does not exist", async () => {
        const { outside, missing } = outsideScope(w);
        expectSuccess(row, await send(row, outside, { key: w.keys.full }));
        const hidden = await send(row, outside, { key: w.keys.narrowed });
        const absent = await send(row, missing, { key: w.keys.narrowed });
        expectError(hidden, 404, "not_found");
        expectError(absent, 404, "not_found");
        expectIndistinguishable(hidden, absent);
        expect(hidden.text).not.toContain(w.outside.datasetId);
        expect(hidden.text).not.toContain(w.outside.episodeId);
      });
    }
  });
}

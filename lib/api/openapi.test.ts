import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../dev/embedded-default";
import { ERROR_STATUS } from "../errors";
import { env } from "../env";
import { createDb, getDb, type RootDb } from "../db/client";
import { createRateLimiters, type RateLimiters } from "../limits/rate-limit";
import type { RouteHandler } from "../http/route";
import {
  createTestKey,
  createTestOrg,
  grant,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
} from "../testing/fixtures";
import { withdrawEpisodes } from "../withdrawals/withdraw";
import { call, observeCalls, type CallOptions, type CallResult } from "../testing/http";
import { assertMatchesContract, Contract, contract } from "../testing/contract";
import { openApiDocument } from "./openapi";
import { EXAMPLES } from "./openapi-examples";
import * as catchAllRoute from "../../app/api/[[...path]]/route";
import * as hubRoute from "../../app/hub/[[...path]]/route";
import { API_OPERATIONS } from "./operations";
import { PATH_PATTERN } from "./hub";
import { checkedPath } from "../hub/entries";

const doc = openApiDocument();
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** The operation files of lib/api/operations (index.ts lists them). */
function operationFiles(): string[] {
  return readdirSync(path.join(PROJECT_ROOT, "lib/api/operations"))
    .filter((file) => file.endsWith(".ts") && file !== "index.ts" && !file.endsWith(".test.ts"))
    .sort();
}

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("states the Hub's path rule as a pattern every match of which the server takes", () => {
    const pattern = new RegExp(PATH_PATTERN);
    const pieces = fc.oneof(
      fc.constantFrom(".", "..", "/", " ", "\\", "a", "\u0085", "\ufeff", "\u00a0", "\u2028", "\u202e", "😀"),
      fc.string({ unit: "grapheme", maxLength: 6 }),
    );
    let matched = 0;
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 8 }), (parts) => {
        const path = parts.join("");
        if (!pattern.test(path)) return;
        matched++;
        expect(() => checkedPath(path), JSON.stringify(path)).not.toThrow();
      }),
      { numRuns: 5000, seed: 39 },
    );
    expect(matched).toBeGreaterThan(500);
    expect(["meta/info.json", ".gitattributes", "data/chunk-000/file-000.parquet"].every((p) => pattern.test(p))).toBe(
      true,
    );
    expect(["", ".", "a/..", "/a", "a//b", "a\\b", " a", "a\u0085"].some((p) => pattern.test(p))).toBe(false);
  });

  it("describes each kind of notice, told apart by `kind`", () => {
    const schemas = doc.components!.schemas as Record<string, any>;
    const notice = schemas.Notice;
    expect((notice.oneOf ?? notice.anyOf).map((s: { $ref: string }) => s.$ref)).toEqual([
      "#/components/schemas/WithdrawalNotice",
      "#/components/schemas/NewVersionNotice",
      "#/components/schemas/LicenceEndingNotice",
    ]);
    expect(notice.discriminator?.propertyName).toBe("kind");
    expect(
      ["WithdrawalNotice", "NewVersionNotice", "LicenceEndingNotice"].map((n) => schemas[n].properties.kind.const),
    ).toEqual(["withdrawal", "new_version", "licence_ending"]);
  });

  it("is refused by the validator when broken (the check can fail)", async () => {
    const broken = structuredClone(doc) as any;
    broken.paths["/api/v1/datasets"].get.responses["200"].headers["X-Request-Id"] = { $ref: 42 };
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it("lists every operation file of lib/api/operations, once, and documents exactly those operations", async () => {
    const files = operationFiles();
    expect(files.length).toBeGreaterThanOrEqual(8);
    const defined = await Promise.all(
      files.map(async (file) =>
        Object.values(await import(/* @vite-ignore */ path.join(PROJECT_ROOT, "lib/api/operations", file))),
      ),
    );
    expect(new Set(defined.flat())).toEqual(new Set(API_OPERATIONS));
    expect(API_OPERATIONS.length).toBe(new Set(API_OPERATIONS).size);
    const documented = Object.entries(doc.paths!).flatMap(([p, item]) =>
      Object.keys(item!).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(documented.sort()).toEqual(API_OPERATIONS.map((o) => `${o.method} ${o.path}`).sort());
  });

  it("serves exactly the documented methods of each path (every other method is 405 with Allow)", async () => {
    for (const [docPath, item] of Object.entries(doc.paths!)) {
      const documented = Object.keys(item!)
        .map((m) => m.toUpperCase())
        .sort();
      // HEAD is answered wherever GET is (as Next does); where it is documented, it is an operation of its own.
      const documentedServed = documented.filter((m) => m !== "HEAD");
      const served: string[] = [];
      for (const method of METHODS) {
        const res = await call(catchAllRoute[method], docPath.replace(/\{[^}]+\}/g, "x"), {
          method,
          body: method === "GET" ? undefined : {},
        });
        if (res.status === 405) expect(res.headers.get("allow"), `${method} ${docPath}`).toBe(documented.join(", "));
        else served.push(method);
      }
      expect(served.sort(), docPath).toEqual(documentedServed);
    }
  });

  it("documents every error code of lib/errors.ts with its status", () => {
    const listed = (doc as any)["x-error-codes"] as { code: string; status: number }[];
    expect(Object.fromEntries(listed.map((row) => [row.code, row.status]))).toEqual(ERROR_STATUS);
  });

  it("uses bearer authentication on every operation except the document itself", () => {
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const open = Object.entries(doc.paths!).flatMap(([p, item]) =>
      Object.entries(item as object)
        .filter(([, op]) => Array.isArray(op.security) && op.security.length === 0)
        .map(([m]) => `${m} ${p}`),
    );
    expect(open).toEqual(["get /api/v1/openapi.json"]);
  });

  it("declares the documented headers: X-Request-Id and RateLimit-* everywhere, Retry-After on 429/503, WWW-Authenticate on 401, Idempotency-Key on downloads and plans", () => {
    for (const [p, item] of Object.entries(doc.paths!)) {
      for (const [m, op] of Object.entries(item as Record<string, any>)) {
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          const names = Object.keys(response.headers ?? {});
          expect(names, `${m} ${p} ${status}`).toEqual(
            expect.arrayContaining(["X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]),
          );
          expect(names.includes("Retry-After"), `${m} ${p} ${status}`).toBe(status === "429" || status === "503");
          expect(names.includes("WWW-Authenticate"), `${m} ${p} ${status}`).toBe(status === "401");
        }
      }
    }
    const post = (doc.paths!["/api/v1/downloads"] as any).post;
    expect(post.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: "header", name: "Idempotency-Key" })]),
    );
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(["200", "201", "409", "422"]));
    const plan = (doc.paths!["/api/v1/datasets/{id}/versions/{version}/plan"] as any).post;
    expect(plan.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: "header", name: "Idempotency-Key" })]),
    );
    expect(Object.keys(plan.responses)).toEqual(expect.arrayContaining(["200", "409"]));
  });

  it("has examples that validate against the schemas they illustrate", () => {
    const c = contract();
    let checked = 0;
    for (const [p, item] of Object.entries(doc.paths!)) {
      for (const [m, op] of Object.entries(item as Record<string, any>)) {
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          const media = response.content?.["application/json"];
          const at = `/paths/${p.replace(/\//g, "~1")}/${m}/responses/${status}/content/application~1json/schema`;
          const examples = [media?.example, ...Object.values(media?.examples ?? {}).map((e: any) => e.value)].filter(
            (e) => e !== undefined,
          );
          // A 304 has no body, nor has a HEAD's metadata or a redirect: nothing to illustrate.
          if ((p !== "/api/v1/openapi.json" || status !== "200") && response.content)
            expect(examples.length, `${m} ${p} ${status}`).toBeGreaterThan(0);
          for (const example of examples) {
            expect(c.validate(at, example), `${m} ${p} ${status}`).toEqual([]);
            checked++;
          }
        }
        for (const [name, example] of Object.entries(op.requestBody?.content?.["application/json"]?.examples ?? {})) {
          expect(
            c.validate(
              `/paths/${p.replace(/\//g, "~1")}/${m}/requestBody/content/application~1json/schema`,
              (example as any).value,
            ),
            name,
          ).toEqual([]);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(40);
    // And a wrong example would be caught: the validator is not vacuous.
    expect(c.validate("/components/schemas/DatasetList", { ...EXAMPLES.datasets, next_cursor: 5 })).not.toEqual([]);
  });
});

describe("the contract check on responses", () => {
  const headers = () =>
    new Headers({
      "content-type": "application/json; charset=utf-8",
      "x-request-id": "req_0123456789ab",
      "ratelimit-limit": "9",
      "ratelimit-remaining": "8",
      "ratelimit-reset": "7",
      etag: '"abc"',
      "cache-control": "private, no-cache",
    });
  const observed = (method: string, url: string, status: number, json: unknown, extra: Record<string, string> = {}) => {
    const h = headers();
    for (const [k, v] of Object.entries(extra)) h.set(k, v);
    return {
      method,
      url: new URL(url, "http://localhost"),
      result: { status, headers: h, text: JSON.stringify(json), json },
    };
  };

  it("accepts a documented response and refuses an undocumented field, status, code or missing header", () => {
    expect(() => assertMatchesContract(observed("GET", "/api/v1/datasets", 200, EXAMPLES.datasets))).not.toThrow();
    expect(() =>
      assertMatchesContract(observed("GET", "/api/v1/datasets", 200, { ...EXAMPLES.datasets, total: 1 })),
    ).toThrow(/additional properties/);
    expect(() =>
      assertMatchesContract(observed("GET", "/api/v1/datasets", 422, EXAMPLES.errors.scope_too_large)),
    ).toThrow(/not documented/);
    expect(() =>
      assertMatchesContract(observed("GET", "/api/v1/datasets/x/versions", 403, EXAMPLES.errors.version_not_licensed)),
    ).toThrow(/allowed values/);
    expect(() => assertMatchesContract(observed("GET", "/api/v1/datasets", 429, EXAMPLES.errors.rate_limited))).toThrow(
      /Retry-After is missing/,
    );
    expect(() =>
      assertMatchesContract(
        observed("GET", "/api/v1/datasets", 429, EXAMPLES.errors.rate_limited, { "retry-after": "soon" }),
      ),
    ).toThrow(/Retry-After/);
    expect(() =>
      assertMatchesContract(
        observed("GET", "/api/v1/datasets", 429, EXAMPLES.errors.rate_limited, { "retry-after": "3" }),
      ),
    ).not.toThrow();
    expect(() =>
      assertMatchesContract(observed("PUT", "/api/v1/downloads", 405, EXAMPLES.errors.method_not_allowed)),
    ).toThrow(/Allow is missing/);
    expect(() =>
      assertMatchesContract(observed("GET", "/api/v1/datasets", 200, EXAMPLES.datasets, { etag: "unquoted" })),
    ).toThrow(/header ETag/);
  });

  it("is applied to every call() of the suites (worker-setup registers it)", async () => {
    // A handler that answers a documented path with an undocumented body must fail the call.
    const rogue: RouteHandler = async () =>
      new Response(JSON.stringify({ datasets: "none" }), {
        headers: { "content-type": "application/json", "x-request-id": "req_0123456789ab" },
      });
    await expect(call(rogue, "/api/v1/datasets")).rejects.toThrow(/does not match the OpenAPI document/);
  });
});

/**
 * A sweep that provokes every documented status of every operation (except the ones listed in
 * NOT_PROVOKED) through the real handlers; each response is checked by the contract as it arrives.
 */
describe("a sweep of every endpoint and status", () => {
  const seen = new Set<string>();
  let stopObserving: () => void;
  let key: string;
  let otherOrgKey: string;
  let datasetId: string;
  let bigDatasetId: string;
  let episodeId: string;
  let noticeId: string;

  beforeAll(async () => {
    stopObserving = observeCalls(({ method, url, result }) => {
      const p = contract().pathOf(url.pathname);
      if (p) seen.add(`${method} ${p} ${result.status}`);
    });
    const org = await createTestOrg();
    const episodes = randomEpisodes(4, 77);
    episodeId = episodes[0]!.episode_id;
    const version = (v: string) => ({
      version: v,
      episodes,
      annotations: [{ episode_id: episodeId, label: "reach", start_s: 0, end_s: 1, attributes: { hand: "left" } }],
      files: [
        { path: "README.md", size_bytes: 3, sha256: "a".repeat(64) },
        ...episodes.map((e) => ({
          path: `${e.episode_id}/cam.mp4`,
          episode_id: e.episode_id,
          stream: "cam",
          size_bytes: 10,
          sha256: "b".repeat(64),
        })),
        {
          path: `${episodeId}/joints.parquet`,
          episode_id: episodeId,
          stream: "joints",
          size_bytes: 10,
          sha256: "d".repeat(64),
        },
      ],
    });
    datasetId = await importTestDataset([version("1.0.0"), version("2.0.0")]);
    const many = randomEpisodes(1, 78);
    bigDatasetId = await importTestDataset([
      {
        version: "1.0.0",
        episodes: many,
        files: Array.from({ length: 10_001 }, (_, i) => ({
          path: `f/${i}.bin`,
          episode_id: many[0]!.episode_id,
          stream: "cam",
          size_bytes: 1,
          sha256: "c".repeat(64),
        })),
      },
    ]);
    await grant(org.id, datasetId, "1.0.0");
    await grant(org.id, bigDatasetId, "1.0.0");
    key = (await createTestKey(org.id)).secret;
    otherOrgKey = (await createTestKey((await createTestOrg()).id)).secret;
    // A notice to the organisation, as a withdrawal writes one (lib/notices/withdrawal-notices.ts).
    noticeId = `nt_${randomBytes(16).toString("hex")}`;
    const sql = getDb().$client;
    const withdrawalId = `wd_sweep${randomBytes(4).toString("hex")}`;
    await sql`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, episode_count)
      values (${withdrawalId}, 'operator', 'sweep', 'sweep (das-admin)', 'sweep', 1)`;
    await sql`insert into notices (id, organization_id, kind, withdrawal_id, episode_ids, deliveries)
      values (${noticeId}, ${org.id}, 'withdrawal', ${withdrawalId}, '{e-sweep}'::text[], '[]'::jsonb)`;
    // And one of each other kind, as lib/notices writes them, so the list's contract covers every kind.
    const [licence] = await sql<{ id: string; version_id: number; ends_at: Date }[]>`
      select l.id, l.version_id, now() + interval '5 days' as ends_at from licences l
      where l.organization_id = ${org.id} and l.revoked_at is null limit 1`;
    await sql`insert into notices (id, organization_id, kind, version_id, details)
      values (${`nt_${randomBytes(16).toString("hex")}`}, ${org.id}, 'new_version', ${licence!.version_id},
        ${JSON.stringify({ dataset_id: datasetId, version: "2.0.0", released_at: "2026-07-01T00:00:00.000Z", licensed_versions: ["1.0.0"] })}::jsonb)`;
    await sql`insert into notices (id, organization_id, kind, licence_id, version_id, threshold_days, ends_at, details)
      values (${`nt_${randomBytes(16).toString("hex")}`}, ${org.id}, 'licence_ending', ${licence!.id}, ${licence!.version_id}, 7,
        ${licence!.ends_at}, ${JSON.stringify({ dataset_id: datasetId, version: "1.0.0", ends_at: licence!.ends_at.toISOString(), days_before: 7 })}::jsonb)`;
  }, 120_000);
  afterAll(() => stopObserving?.());

  type Endpoint = {
    name: string;
    route: Record<string, RouteHandler>;
    handler: RouteHandler;
    url: () => string;
    params: () => Record<string, string>;
    method?: string;
    body?: () => unknown;
    /** A form body (the Hub protocol's paths-info). */
    form?: () => [string, string][];
    /** The success status, when not 201 for a POST and 200 otherwise. */
    okStatus?: number;
    /** A list answered without an ETag (what it reads is not in the instance cache): no 304. */
    noEtag?: true;
  };
  const ENDPOINTS: Endpoint[] = [
    {
      name: "GET /api/v1/datasets",
      route: catchAllRoute,
      handler: catchAllRoute.GET,
      url: () => "/api/v1/datasets",
      params: () => ({}),
    },
    {
      name: "GET /api/v1/licences",
      route: catchAllRoute,
      handler: catchAllRoute.GET,
      url: () => "/api/v1/licences",
      params: () => ({}),
    },
    {
      name: "GET /api/v1/datasets/{id}/versions",
      route: catchAllRoute,
      handler: catchAllRoute.GET,
      url: () => `/api/v1/datasets/${datasetId}/versions`,
      params: () => ({ id: datasetId }),
    },
    {
      name: "GET /api/v1/datasets/{id}/versions/{version}/manifest",
      route: catchAllRoute,
      handler: catchAllRoute.GET,
      url: () => `/api/v1/datasets/${datasetId}/versions/1.0.0/manifest`,
      params: () => ({ id: datasetId, version: "1.0.0" }),
    },
    {
      name: "GET /api/v1/datasets/{id}/versions/{version}/episodes",
      route: catchAllRoute,
      handler: catchAllRoute.GET,
      url: () => `/api/v1/datasets/${datasetId}/versions/1.0.0/episodes`,
      params: () => ({ id: datasetId, version: "1.0.0" }),
    },
    {
      name: "GET /api/v1/episodes/{episode_id}/annotations",
      route: catchAllRoute,
      handler: catchAllRoute.GET,
      url: () => `/api/v1/episodes/${episodeId}/annotations`,
      params: () => ({ episodeId }),
    },
    {
      name: "POST /api/v1/downloads",
      route: catchAllRoute,
      handler: catchAllRoute.POST,
      url: () => "/api/v1/downloads",
      params: () => ({}),
      method: "POST",
      body: () => ({ dataset_id: datasetId, version: "1.0.0" }),
    },
    {
      name: "POST /api/v1/previews",
      route: catchAllRoute,
      handler: catchAllRoute.POST,
      url: () => "/api/v1/previews",
      params: () => ({}),
      method: "POST",
      body: () => ({ episode_id: episodeId }),
    },
    {
      name: "GET /api/v1/notices",
      route: catchAllRoute,
      handler: catchAllRoute.GET,
      url: () => "/api/v1/notices",
      params: () => ({}),
      noEtag: true,
    },
    {
      name: "POST /api/v1/datasets/{id}/versions/{version}/plan",
      route: catchAllRoute,
      handler: catchAllRoute.POST,
      url: () => `/api/v1/datasets/${datasetId}/versions/1.0.0/plan`,
      params: () => ({ id: datasetId, version: "1.0.0" }),
      method: "POST",
      body: () => ({}),
      okStatus: 200,
    },
    {
      name: "POST /api/v1/notices/{notice_id}/acknowledgements",
      route: catchAllRoute,
      handler: catchAllRoute.POST,
      url: () => `/api/v1/notices/${noticeId}/acknowledgements`,
      params: () => ({ notice_id: noticeId }),
      method: "POST",
      body: () => ({ statement: "Deleted.", deleted_paths: [] }),
    },
  ];

  // The Hub protocol's operations (lib/api/hub.ts): any Accept is fine, unknown query parameters
  // are left out, so their 400s come from what they do read (a path, a revision, a form).
  const hubRepo = (tail = "") => `/hub/api/datasets/das/${datasetId}${tail}`;
  type HubEndpoint = Omit<Endpoint, "route" | "handler" | "params"> & { at: (revision: string) => string };
  const HUB_ENDPOINTS: (Endpoint & { at: (revision: string) => string })[] = (
    [
      {
        name: "GET /hub/api/datasets/{namespace}/{name}",
        at: () => hubRepo(),
        url: () => hubRepo(),
      },
      {
        name: "GET /hub/api/datasets/{namespace}/{name}/revision/{revision}",
        at: (revision) => hubRepo(`/revision/${revision}`),
        url: () => hubRepo("/revision/1.0.0"),
      },
      {
        name: "GET /hub/api/datasets/{namespace}/{name}/refs",
        at: () => hubRepo("/refs"),
        url: () => hubRepo("/refs"),
      },
      {
        name: "GET /hub/api/datasets/{namespace}/{name}/tree/{revision}",
        at: (revision) => hubRepo(`/tree/${revision}`),
        url: () => hubRepo("/tree/1.0.0"),
      },
      {
        name: "GET /hub/api/datasets/{namespace}/{name}/tree/{revision}/{path}",
        at: (revision) => hubRepo(`/tree/${revision}/${episodeId}`),
        url: () => hubRepo(`/tree/1.0.0/${episodeId}`),
      },
      {
        name: "POST /hub/api/datasets/{namespace}/{name}/paths-info/{revision}",
        at: (revision) => hubRepo(`/paths-info/${revision}`),
        url: () => hubRepo("/paths-info/1.0.0"),
        method: "POST",
        form: (): [string, string][] => [["paths", "README.md"]],
        okStatus: 200,
      },
      {
        name: "HEAD /hub/datasets/{namespace}/{name}/resolve/{revision}/{path}",
        at: (revision) => `/hub/datasets/das/${datasetId}/resolve/${revision}/README.md`,
        url: () => `/hub/datasets/das/${datasetId}/resolve/1.0.0/README.md`,
        method: "HEAD",
      },
      {
        name: "GET /hub/datasets/{namespace}/{name}/resolve/{revision}/{path}",
        at: (revision) => `/hub/datasets/das/${datasetId}/resolve/${revision}/README.md`,
        url: () => `/hub/datasets/das/${datasetId}/resolve/1.0.0/README.md`,
        okStatus: 302,
      },
    ] satisfies HubEndpoint[] as HubEndpoint[]
  ).map((e) => ({
    ...e,
    route: hubRoute,
    handler: e.method === "HEAD" ? hubRoute.HEAD : e.method === "POST" ? hubRoute.POST : hubRoute.GET,
    params: () => ({}),
  }));

  const send = (e: Endpoint, options: Partial<CallOptions> & { query?: string } = {}): Promise<CallResult> => {
    const form = e.form ? new URLSearchParams(e.form()).toString() : undefined;
    return call(e.handler, `${e.url()}${options.query ?? ""}`, {
      key,
      params: e.params(),
      method: e.method,
      body: form ?? e.body?.(),
      ...options,
      headers: {
        ...(form !== undefined ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        ...options.headers,
      },
    });
  };

  it.each(HUB_ENDPOINTS)("$name: success, 400, 401, 403, 404, 405", async (e) => {
    const ok = await send(e);
    expect(ok.status, ok.text).toBe(e.okStatus ?? 200);
    // Not valid percent-encoded UTF-8, wherever it is: 400 before anything is read.
    const malformed = await send({ ...e, url: () => e.url().replace(datasetId, "%E0%A4%A") });
    expect(malformed.status, malformed.text).toBe(400);
    expect(malformed.headers.get("x-error-message")).toBeTruthy();
    expect((await send(e, { key: "das_wrong" })).status).toBe(401);
    if (e.form) {
      // A form over the limit is refused as every body is, counted as it arrives.
      const large = await send(e, { body: new URLSearchParams([["paths", "x".repeat(1_000_001)]]).toString() });
      expect(large.status, large.text).toBe(413);
      expect(large.json.error.code).toBe("body_too_large");
    }
    if (e.name.includes("{revision}")) {
      const gated = await send({ ...e, url: () => e.at("2.0.0") });
      expect(gated.status, gated.text).toBe(403);
      expect(gated.headers.get("x-error-code")).toBe("GatedRepo");
    }
    const hidden = await send(e, { key: otherOrgKey });
    expect(hidden.status).toBe(404);
    expect(hidden.headers.get("x-error-code")).toBe("RepoNotFound");
    const wrongMethod = await call(e.route.DELETE!, e.url(), { key, method: "DELETE" });
    expect(wrongMethod.status).toBe(405);
  });

  it("hub: a forged cursor is 400, a form without paths 400, a file shared with a withdrawn episode 422", async () => {
    const tree = HUB_ENDPOINTS.find((x) => x.name.endsWith("/tree/{revision}"))!;
    const forged = await send(tree, { query: "?recursive=true&cursor=forged.cursor" });
    expect(forged.status).toBe(400);
    expect(forged.json.error.code).toBe("invalid_cursor");
    const pathsInfo = HUB_ENDPOINTS.find((x) => x.name.includes("paths-info"))!;
    const empty = await send({ ...pathsInfo, form: () => [["expand", "true"]] });
    expect(empty.json.error.code).toBe("invalid_body");
  });

  it.each(ENDPOINTS)("$name: success, 304, 400, 401, 403, 404, 405, 406", async (e) => {
    const ok = await send(e);
    expect(ok.status, ok.text).toBe(e.okStatus ?? (e.method === "POST" ? 201 : 200));
    if (!e.method && !e.noEtag) {
      const notModified = await send(e, { headers: { "if-none-match": ok.headers.get("etag")! } });
      expect(notModified.status).toBe(304);
      expect(notModified.text).toBe("");
    }
    expect((await send(e, { query: "?outcomes=failure" })).status).toBe(400);
    expect((await send(e, { key: "das_wrong" })).status).toBe(401);
    expect((await send(e, { headers: { accept: "text/html" } })).status).toBe(406);
    const wrongMethod = await call(e.route.DELETE!, e.url(), { key, method: "DELETE", params: e.params() });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe(e.method ?? "GET");
    if (e.name.includes("{id}")) {
      expect((await send(e, { key: otherOrgKey })).status).toBe(404);
    }
    if (e.name.includes("{version}")) {
      const v2 = e.url().replace("/1.0.0/", "/2.0.0/");
      expect(
        (
          await call(e.handler, v2, {
            key,
            method: e.method,
            body: e.body?.(),
            params: { ...e.params(), version: "2.0.0" },
          })
        ).status,
      ).toBe(403);
    }
  });

  it("lists: a forged cursor is 400 invalid_cursor", async () => {
    for (const e of ENDPOINTS.filter((x) => !x.method && !x.name.includes("manifest"))) {
      const res = await send(e, { query: "?cursor=forged.cursor" });
      expect(res.status, e.name).toBe(400);
      expect(res.json.error.code).toBe("invalid_cursor");
    }
  });

  it("annotations: an unknown episode is 404, a pinned unlicensed version 403", async () => {
    const e = ENDPOINTS.find((x) => x.name.includes("annotations"))!;
    expect(
      (await call(e.handler, "/api/v1/episodes/nope-404/annotations", { key, params: { episodeId: "nope-404" } }))
        .status,
    ).toBe(404);
    expect((await send(e, { query: "?version=2.0.0" })).status).toBe(403);
  });

  it("downloads: 200 replay, 400 body and header, 403, 404, 409, 422", async () => {
    const e = ENDPOINTS.find((x) => x.name === "POST /api/v1/downloads")!;
    const idem = { "idempotency-key": `sweep-${Date.now()}` };
    expect((await send(e, { headers: idem })).status).toBe(201);
    expect((await send(e, { headers: idem })).status).toBe(200);
    expect(
      (await send(e, { headers: idem, body: { dataset_id: datasetId, version: "1.0.0", streams: ["cam"] } })).status,
    ).toBe(409);
    expect((await send(e, { body: { dataset_id: datasetId } })).json.error.code).toBe("invalid_body");
    expect((await send(e, { headers: { "idempotency-key": "has space" } })).json.error.code).toBe("invalid_parameter");
    expect((await send(e, { body: { dataset_id: datasetId, version: "2.0.0" } })).status).toBe(403);
    expect((await send(e, { body: { dataset_id: "no-such-dataset", version: "1.0.0" } })).status).toBe(404);
    expect((await send(e, { body: { dataset_id: bigDatasetId, version: "1.0.0" } })).status).toBe(422);
  });

  it("plans: the same plan on a retry with its Idempotency-Key, 409 with another body", async () => {
    const e = ENDPOINTS.find((x) => x.name.endsWith("/plan"))!;
    const idem = { "idempotency-key": `sweep-plan-${Date.now()}` };
    const first = await send(e, { headers: idem });
    expect(first.status, first.text).toBe(200);
    expect((await send(e, { headers: idem })).json).toEqual(first.json);
    expect((await send(e, { headers: idem, body: { streams: ["cam"] } })).status).toBe(409);
    expect((await send(e, { headers: { "idempotency-key": "has space" } })).json.error.code).toBe("invalid_parameter");
  });

  it("previews: 200 repeat, 400 body, 403, 404", async () => {
    const e = ENDPOINTS.find((x) => x.name === "POST /api/v1/previews")!;
    const first = await send(e, { body: { episode_id: episodeId, streams: ["cam"] } });
    expect([200, 201]).toContain(first.status);
    const again = await send(e, { body: { episode_id: episodeId, streams: ["cam"] } });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect((await send(e, { body: { episode_id: episodeId, streams: ["joints"] } })).json.error.code).toBe(
      "invalid_body",
    );
    expect((await send(e, { body: { episode: episodeId } })).json.error.code).toBe("invalid_body");
    expect((await send(e, { body: { episode_id: episodeId, version: "2.0.0" } })).status).toBe(403);
    expect((await send(e, { body: { episode_id: "nope-404" } })).status).toBe(404);
  });

  it("notices: another organisation's notice is 404, a bad body 400", async () => {
    const e = ENDPOINTS.find((x) => x.name.startsWith("POST /api/v1/notices"))!;
    expect((await send(e, { key: otherOrgKey })).status).toBe(404);
    expect((await send(e, { body: { statement: "" } })).json.error.code).toBe("invalid_body");
  });

  it("bodies: over 1,000,000 bytes, chunked or declared, 413 before they are parsed", async () => {
    for (const e of ENDPOINTS.filter((x) => x.method === "POST")) {
      // Without a declared length (as a chunked body arrives), counted as it is read.
      const padded = `{"padding":"${"x".repeat(1_000_000)}"}`;
      const counted = await send(e, { body: padded });
      expect(counted.status, e.name).toBe(413);
      expect(counted.json.error.code).toBe("body_too_large");
      // A Content-Length over the limit is refused on its word, the body (valid) never read.
      const declared = await send(e, { headers: { "content-length": "1000001" } });
      expect(declared.status, `${e.name} declared`).toBe(413);
      expect(declared.json.error.code).toBe("body_too_large");
    }
  });

  it("acknowledgements: a notice's eleventh is 409", async () => {
    const e = ENDPOINTS.find((x) => x.name.startsWith("POST /api/v1/notices"))!;
    const sql = getDb().$client;
    const [notice] = await sql<
      { organization_id: string }[]
    >`select organization_id from notices where id = ${noticeId}`;
    const busy = `nt_${randomBytes(16).toString("hex")}`;
    const withdrawalId = `wd_busy${randomBytes(4).toString("hex")}`;
    await sql`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, episode_count)
      values (${withdrawalId}, 'operator', 'sweep', 'sweep (das-admin)', 'sweep', 1)`;
    await sql`insert into notices (id, organization_id, kind, withdrawal_id, episode_ids, deliveries)
      values (${busy}, ${notice!.organization_id}, 'withdrawal', ${withdrawalId}, '{e-sweep-2}'::text[], '[]'::jsonb)`;
    const ack = () =>
      call(e.handler, `/api/v1/notices/${busy}/acknowledgements`, {
        key,
        method: "POST",
        params: { notice_id: busy },
        body: { statement: "Deleted." },
      });
    for (let i = 0; i < 10; i++) expect((await ack()).status).toBe(201);
    const eleventh = await ack();
    expect(eleventh.status).toBe(409);
    expect(eleventh.json.error.code).toBe("acknowledgement_limit");
  });

  it("withdrawals: 410 for a withdrawn episode named directly, 422 for a file shared with one", async () => {
    const episodes = randomEpisodes(2, 79);
    const [gone, kept] = episodes.map((x) => x.episode_id) as [string, string];
    const shared = await importTestDataset([
      {
        version: "1.0.0",
        episodes,
        files: [
          { path: "pack/cam.mp4", episode_ids: [gone, kept], stream: "cam", size_bytes: 10, sha256: "e".repeat(64) },
          ...episodes.map((x) => ({
            path: `${x.episode_id}/joints.bin`,
            episode_id: x.episode_id,
            stream: "joints",
            size_bytes: 1,
            sha256: "f".repeat(64),
          })),
        ],
      },
    ]);
    const org = await createTestOrg();
    await grant(org.id, shared, "1.0.0");
    const own = (await createTestKey(org.id)).secret;
    await withdrawEpisodes(operatorCtx(), { episodeIds: [gone], reason: "sweep" });
    const annotations = ENDPOINTS.find((x) => x.name.includes("annotations"))!;
    const downloads = ENDPOINTS.find((x) => x.name === "POST /api/v1/downloads")!;
    const previews = ENDPOINTS.find((x) => x.name === "POST /api/v1/previews")!;
    expect(
      (
        await call(annotations.handler, `/api/v1/episodes/${gone}/annotations`, {
          key: own,
          params: { episodeId: gone },
        })
      ).status,
    ).toBe(410);
    expect(
      (await send(downloads, { key: own, body: { dataset_id: shared, version: "1.0.0", episode_ids: [gone] } })).status,
    ).toBe(410);
    expect(
      (await send(downloads, { key: own, body: { dataset_id: shared, version: "1.0.0", episode_ids: [kept] } })).json
        .error.code,
    ).toBe("withdrawn_content");
    expect((await send(previews, { key: own, body: { episode_id: gone } })).status).toBe(410);
    expect((await send(previews, { key: own, body: { episode_id: kept } })).status).toBe(422);
    const plan = ENDPOINTS.find((x) => x.name.endsWith("/plan"))!;
    const planOf = (episodeIds: string[]) =>
      call(plan.handler, `/api/v1/datasets/${shared}/versions/1.0.0/plan`, {
        key: own,
        method: "POST",
        body: { episode_ids: episodeIds },
      });
    expect((await planOf([gone])).status).toBe(410);
    const resolve = HUB_ENDPOINTS.find((x) => x.name.startsWith("GET /hub/datasets"))!;
    const sharedFile = await call(resolve.handler, `/hub/datasets/das/${shared}/resolve/main/pack/cam.mp4`, {
      key: own,
    });
    expect(sharedFile.status, sharedFile.text).toBe(422);
    expect(sharedFile.json.error.code).toBe("withdrawn_content");
    const head = HUB_ENDPOINTS.find((x) => x.name.startsWith("HEAD"))!;
    const sharedHead = await call(head.handler, `/hub/datasets/das/${shared}/resolve/main/pack/cam.mp4`, {
      key: own,
      method: "HEAD",
    });
    expect(sharedHead.status).toBe(422);
  });

  it("openapi.json: 200 without a key (the served document is the generated one), 400, 405, 406", async () => {
    const res = await call(catchAllRoute.GET, "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.json).toEqual(JSON.parse(JSON.stringify(doc)));
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.headers.get("ratelimit-limit")).toMatch(/^[0-9]+$/);
    expect((await call(catchAllRoute.GET, "/api/v1/openapi.json?x=1")).status).toBe(400);
    expect((await call(catchAllRoute.POST, "/api/v1/openapi.json", { method: "POST", body: {} })).status).toBe(405);
    expect((await call(catchAllRoute.GET, "/api/v1/openapi.json", { headers: { accept: "text/html" } })).status).toBe(
      406,
    );
  });

  it("an unknown path under /api is the documented 404", async () => {
    const res = await call(catchAllRoute.GET, "/api/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe("not_found");
  });

  it("403 https_required on plain HTTP in production, for every endpoint", async () => {
    const settings = env();
    const before = settings.NODE_ENV;
    (settings as { NODE_ENV: string }).NODE_ENV = "production";
    try {
      const plain = { "x-forwarded-proto": "http" };
      for (const e of [...ENDPOINTS, ...HUB_ENDPOINTS])
        expect((await send(e, { headers: plain })).json.error.code, e.name).toBe("https_required");
      expect((await call(catchAllRoute.GET, "/api/v1/openapi.json", { headers: plain })).status).toBe(403);
    } finally {
      (settings as { NODE_ENV: string }).NODE_ENV = before;
    }
  });

  it("429 with Retry-After once the budget is spent, for every endpoint", async () => {
    const holder = globalThis as unknown as { dasRateLimiters?: RateLimiters };
    const before = holder.dasRateLimiters;
    holder.dasRateLimiters = createRateLimiters({
      perMinute: 1,
      authFailuresPerMinute: 1,
      keyPrefix: `sweep${Date.now()}`,
    });
    try {
      for (const e of [...ENDPOINTS, ...HUB_ENDPOINTS]) {
        const fresh = (await createTestKey((await createTestOrg()).id)).secret;
        await send(e, { key: fresh });
        const res = await send(e, { key: fresh });
        expect(res.status, e.name).toBe(429);
        expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
      }
      const ip = "10.99.99.99";
      await call(catchAllRoute.GET, "/api/v1/openapi.json", { headers: { "x-forwarded-for": ip } });
      expect(
        (await call(catchAllRoute.GET, "/api/v1/openapi.json", { headers: { "x-forwarded-for": ip } })).status,
      ).toBe(429);
    } finally {
      await holder.dasRateLimiters.close();
      holder.dasRateLimiters = before;
    }
  });

  it("503 with Retry-After when the database or the store is unreachable", async () => {
    const holder = globalThis as unknown as { dasDb?: RootDb; dasPresigner?: unknown };
    const db = holder.dasDb;
    try {
      for (const e of [...ENDPOINTS, ...HUB_ENDPOINTS]) {
        // A pool of its own per request: lib/db/client.ts's custom socket leaves a connection that
        // failed to connect stuck, so a second query on the same pool would hang (reported).
        holder.dasDb = createDb("postgres://nobody@127.0.0.1:9/none", { max: 1 });
        const res = await send(e);
        expect(res.status, `${e.name}: ${res.text}`).toBe(503);
        expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
      }
    } finally {
      holder.dasDb = db;
    }
    const presigner = holder.dasPresigner;
    holder.dasPresigner = {
      presignKeys: async () =>
        Promise.reject(Object.assign(new Error("store down"), { name: "StoreUnavailableError" })),
    };
    try {
      const res = await send(ENDPOINTS.find((x) => x.name === "POST /api/v1/downloads")!);
      expect(res.status).toBe(503);
    } finally {
      holder.dasPresigner = presigner;
    }
  });

  // 500 cannot be provoked without breaking the code itself; its body is the same envelope, checked above.
  // A plan of more than 200,000 files (422) is not imported for a sweep; lib/views/plan.ts's cap is one comparison.
  const NOT_PROVOKED = [/ 500$/, /^POST \/api\/v1\/datasets\/\{id\}\/versions\/\{version\}\/plan 422$/];

  it("provoked every documented status of every operation", () => {
    const documented = Object.entries(doc.paths!).flatMap(([p, item]) =>
      Object.entries(item as Record<string, any>).flatMap(([m, op]) =>
        Object.keys(op.responses).map((s) => `${m.toUpperCase()} ${p} ${s}`),
      ),
    );
    const missing = documented.filter((d) => !seen.has(d) && !NOT_PROVOKED.some((re) => re.test(d)));
    expect(missing).toEqual([]);
  });
});

/**
 * OpenAPI links: from each list to the operations that take the ids it returns, and to its next
 * page, so that a client (or schemathesis's stateful phase, scripts/api-fuzz) can walk the API.
 */
describe("links", () => {
  type Operation = { path: string; method: string; op: any };
  const operations = new Map<string, Operation>(
    Object.entries(doc.paths!).flatMap(([p, item]) =>
      Object.entries(item as Record<string, any>).map(([method, op]) => [op.operationId, { path: p, method, op }]),
    ),
  );
  const linksOf = (operationId: string) =>
    Object.entries((operations.get(operationId)!.op.responses["200"]?.links ?? {}) as Record<string, any>);
  const resolved = (schema: any): any => (schema?.$ref ? resolved(pointerInto(doc, schema.$ref.slice(1))) : schema);
  /** Whether a JSON pointer can name a value of `schema` (array indexes through items, any branch of a union). */
  const canHold = (schema: any, tokens: string[]): boolean => {
    const s = resolved(schema);
    if (!tokens.length) return s !== undefined;
    const branches = s?.oneOf ?? s?.anyOf;
    if (branches) return branches.some((b: any) => canHold(b, tokens));
    const [head, ...rest] = tokens as [string, ...string[]];
    if (/^[0-9]+$/.test(head) && s?.items) return canHold(s.items, rest);
    return s?.properties?.[head] !== undefined && canHold(s.properties[head], rest);
  };

  it("name an operation, its parameters and its body's fields, with expressions that the source can satisfy", () => {
    let checked = 0;
    for (const [sourceId, source] of operations) {
      const answer = source.op.responses["200"]?.content?.["application/json"]?.schema;
      const sourceParameters = new Set((source.op.parameters ?? []).map((p: any) => `${p.in}.${p.name}`));
      const satisfiable = (expression: string) => {
        // A constant (the Hub's namespace `das`, a path to ask about) is sent as it is.
        if (!expression.startsWith("$")) return expression !== "";
        const body = /^\$response\.body#\/(.*)$/.exec(expression);
        if (body) return canHold(answer, body[1]!.split("/"));
        const request = /^\$request\.(path|query)\.(.+)$/.exec(expression);
        return request !== null && sourceParameters.has(`${request[1]}.${request[2]}`);
      };
      for (const [name, link] of linksOf(sourceId)) {
        const at = `${sourceId} -> ${name}`;
        const target = operations.get(link.operationId);
        expect(target, at).toBeDefined();
        const targetParameters = new Set((target!.op.parameters ?? []).map((p: any) => `${p.in}.${p.name}`));
        for (const [parameter, expression] of Object.entries(link.parameters ?? {}) as [string, string][]) {
          expect(targetParameters.has(parameter), `${at}: ${parameter}`).toBe(true);
          expect(satisfiable(expression), `${at}: ${expression}`).toBe(true);
        }
        // The body in whichever media type the target takes (paths-info's is a form).
        const [bodyContent] = Object.values(target!.op.requestBody?.content ?? {}) as { schema: any }[];
        const bodySchema = resolved(bodyContent?.schema);
        for (const [field, value] of Object.entries(link.requestBody ?? {}) as [string, string | string[]][]) {
          const fieldSchema = resolved(bodySchema?.properties?.[field]);
          expect(fieldSchema, `${at}: body ${field}`).toBeDefined();
          if (Array.isArray(value)) expect(fieldSchema.type, `${at}: body ${field} is a list`).toBe("array");
          for (const expression of [value].flat()) expect(satisfiable(expression), `${at}: ${expression}`).toBe(true);
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(20);
  });

  it("lead from every list to the operations that take its ids, and to its next page", () => {
    const edges = new Set(
      [...operations.keys()].flatMap((id) => linksOf(id).map(([, link]) => `${id} -> ${link.operationId}`)),
    );
    const lists = ["listDatasets", "listLicences", "listVersions", "listEpisodes", "listAnnotations", "listNotices"];
    expect([...edges]).toEqual(
      expect.arrayContaining([
        ...lists.map((id) => `${id} -> ${id}`),
        "listDatasets -> listVersions",
        "listDatasets -> getManifest",
        "listDatasets -> listEpisodes",
        "listVersions -> getManifest",
        "listVersions -> listEpisodes",
        "listEpisodes -> listAnnotations",
        "listEpisodes -> createPreview",
        "listEpisodes -> createDownload",
        "listNotices -> acknowledgeNotice",
        // The Hub protocol's operations, with real repositories (namespace das, the dataset's id).
        ...["listDatasets", "listLicences"].flatMap((id) =>
          [
            "hubDatasetInfo",
            "hubRefs",
            "hubDatasetInfoAtRevision",
            "hubTree",
            "hubTreeAtPath",
            "hubPathsInfo",
            "hubResolve",
            "hubResolveHead",
          ].map((hub) => `${id} -> ${hub}`),
        ),
        "listVersions -> hubDatasetInfo",
        "listVersions -> hubRefs",
        "getManifest -> hubResolve",
        "getManifest -> hubResolveHead",
        "getManifest -> hubPathsInfo",
      ]),
    );
    const namespaces = [...operations.keys()].flatMap((id) =>
      linksOf(id).flatMap(([, link]) =>
        link.parameters?.["path.namespace"] ? [link.parameters["path.namespace"]] : [],
      ),
    );
    expect(new Set(namespaces)).toEqual(new Set(["das"]));
  });

  it("followed from the lists with real answers, reach every operation that takes an id", async () => {
    const org = await createTestOrg();
    const episodes = randomEpisodes(3, 81);
    const datasetId = await importTestDataset([
      {
        version: "1.0.0",
        episodes,
        annotations: episodes.map((e) => ({ episode_id: e.episode_id, label: "reach", start_s: 0, end_s: 1 })),
        files: episodes.map((e) => ({
          path: `${e.episode_id}/cam.mp4`,
          episode_id: e.episode_id,
          stream: "cam",
          size_bytes: 10,
          sha256: "b".repeat(64),
        })),
      },
    ]);
    await grant(org.id, datasetId, "1.0.0");
    const key = (await createTestKey(org.id)).secret;
    for (let i = 0; i < 2; i++) await insertWithdrawalNotice(org.id);

    const answered = await followLinks(key, [
      { operationId: "listDatasets", params: {}, query: {} },
      { operationId: "listLicences", params: {}, query: {} },
      { operationId: "listNotices", params: {}, query: { limit: "1" } },
    ]);
    const succeeded = (id: string, via?: string) =>
      answered.some((a) => a.operationId === id && (!via || a.via === via) && a.status < 300);
    for (const id of [
      "listVersions",
      "getManifest",
      "listEpisodes",
      "listAnnotations",
      "createPreview",
      "createDownload",
      "acknowledgeNotice",
      "hubDatasetInfo",
      "hubDatasetInfoAtRevision",
      "hubRefs",
      "hubTree",
      "hubPathsInfo",
      "hubResolveHead",
    ])
      expect(succeeded(id), id).toBe(true);
    // The resolve of the manifest's first file: a redirect to the store (after its disclosure).
    expect(answered.filter((a) => a.via === "getManifest -> hubResolve").map((a) => a.status)).toEqual([302]);
    // meta/info.json of a version that is not LeRobot's is not there: the Hub's 404, never a 400.
    expect(
      answered.filter((a) => /-> hub(ResolveInfo|ResolveInfoHead|TreeOfMeta)$/.test(a.via ?? "")).map((a) => a.status),
    ).toEqual([404, 404, 404, 404, 404, 404]);
    // paths-info of the manifest's first file names it; that of a plain version's meta/info.json is empty.
    const pathsInfo = answered.filter((a) => a.operationId === "hubPathsInfo");
    expect(pathsInfo.map((a) => a.json.map((entry: { path: string }) => entry.path)).sort()).toEqual([
      [],
      [],
      [`${episodes[0]!.episode_id}/cam.mp4`],
    ]);
    expect(succeeded("listNotices", "listNotices -> next"), "a next page").toBe(true);
    // A link that makes a request the server refuses as malformed is a broken link.
    expect(answered.filter((a) => a.status === 400)).toEqual([]);
  });

  type Request = { operationId: string; params: Record<string, string>; query: Record<string, string>; body?: unknown };
  type Answer = Request & { via?: string; status: number; json: any };

  /** Follows every link once, breadth first, from `roots`, as a client would (absent values are left out). */
  async function followLinks(key: string, roots: Request[]): Promise<Answer[]> {
    const answered: Answer[] = [];
    const followed = new Set<string>();
    let frontier: (Request & { via?: string })[] = roots;
    for (let depth = 0; depth < 5 && frontier.length; depth++) {
      const next: (Request & { via?: string })[] = [];
      for (const request of frontier) {
        const answer = { ...request, ...(await send(key, request)) };
        answered.push(answer);
        if (answer.status !== 200) continue;
        for (const [name, link] of linksOf(request.operationId)) {
          const via = `${request.operationId} -> ${name}`;
          if (followed.has(via)) continue;
          const made = linkRequest(link, answer);
          if (!made) continue;
          followed.add(via);
          next.push({ ...made, via });
        }
      }
      frontier = next;
    }
    return answered;
  }

  function linkRequest(link: any, source: Answer): Request | undefined {
    const value = (expression: string): string | undefined => {
      if (!expression.startsWith("$")) return expression;
      const body = /^\$response\.body#(\/.*)$/.exec(expression);
      if (body) return pointerInto(source.json, body[1]!) ?? undefined;
      const request = /^\$request\.(path|query)\.(.+)$/.exec(expression);
      return request ? (request[1] === "path" ? source.params : source.query)[request[2]!] : undefined;
    };
    const made: Request = { operationId: link.operationId, params: {}, query: {} };
    for (const [parameter, expression] of Object.entries(link.parameters ?? {}) as [string, string][]) {
      const [where, name] = parameter.split(".") as ["path" | "query", string];
      const v = value(expression);
      if (v === undefined && where === "path") return undefined;
      if (v !== undefined) (where === "path" ? made.params : made.query)[name] = String(v);
    }
    if (link.requestBody)
      made.body = Object.fromEntries(
        Object.entries(link.requestBody).map(([f, e]) => [
          f,
          Array.isArray(e) ? e.map((one) => value(one)) : value(e as string),
        ]),
      );
    else if (link.operationId === "acknowledgeNotice")
      made.body = { statement: "Deleted every copy.", deleted_paths: [] };
    return made;
  }

  async function send(key: string, request: Request): Promise<{ status: number; json: any }> {
    const { path: template, method, op } = operations.get(request.operationId)!;
    const p = template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(request.params[name]!));
    const query = new URLSearchParams(request.query).toString();
    const upper = method.toUpperCase() as "GET" | "POST" | "HEAD";
    const route = p.startsWith("/hub/") ? hubRoute : catchAllRoute;
    const handler = upper === "POST" ? route.POST : upper === "HEAD" ? hubRoute.HEAD : route.GET;
    // A form body (paths-info) is sent as the Hub's clients send it: each list item as its own field.
    const form = op.requestBody?.content?.["application/x-www-form-urlencoded"] !== undefined;
    const res = await call(handler, `${p}${query ? `?${query}` : ""}`, {
      key,
      method: upper,
      ...(form
        ? {
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams(
              Object.entries(request.body as Record<string, unknown>).flatMap(([f, v]) =>
                [v].flat().map((one) => [f, String(one)]),
              ),
            ).toString(),
          }
        : { body: request.body }),
    });
    return { status: res.status, json: res.json };
  }
});

/** The value a JSON pointer (`/a/0/b`) names in `value`, or undefined. */
function pointerInto(value: any, pointer: string): any {
  return pointer
    .split("/")
    .slice(1)
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((node, token) => (node == null ? undefined : node[token]), value);
}

/** A withdrawal notice to the organisation, as lib/notices/withdrawal-notices.ts writes one. */
async function insertWithdrawalNotice(organizationId: string): Promise<string> {
  const sql = getDb().$client;
  const noticeId = `nt_${randomBytes(16).toString("hex")}`;
  const withdrawalId = `wd_links${randomBytes(4).toString("hex")}`;
  await sql`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, episode_count)
    values (${withdrawalId}, 'operator', 'links', 'links (das-admin)', 'links', 1)`;
  await sql`insert into notices (id, organization_id, kind, withdrawal_id, episode_ids, deliveries)
    values (${noticeId}, ${organizationId}, 'withdrawal', ${withdrawalId}, '{e-links}'::text[], '[]'::jsonb)`;
  return noticeId;
}

// Keep the `Contract` class exercised with a document of its own, so a change to the checker cannot hide behind the cache.
describe("Contract", () => {
  it("matches request paths to documented templates", () => {
    const c = new Contract(doc);
    expect(c.pathOf("/api/v1/datasets/abc/versions/1.0.0/episodes")).toBe(
      "/api/v1/datasets/{id}/versions/{version}/episodes",
    );
    expect(c.pathOf("/api/v1/episodes/e-1/annotations")).toBe("/api/v1/episodes/{episode_id}/annotations");
    expect(c.pathOf("/api/v1/datasets/abc/extra")).toBeUndefined();
  });
});

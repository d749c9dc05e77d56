import { addTerms } from "@/lib/admin/terms";
import { setDatasetListing } from "@/lib/admin/listing";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_OPERATIONS } from "@/lib/api/operations";
import { createUser } from "@/lib/admin/users";
import type { UserPrincipal } from "@/lib/auth/principal";
import { getDb } from "@/lib/db/client";
import { createDownload } from "@/lib/downloads/create-download";
import { SEARCH_KEYS } from "@/lib/disclosures/filter";
import { OverviewSearch } from "@/lib/disclosures/overview";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { createTestOrg, grant, importTestDataset, operatorCtx, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";
import { signInOverHttp } from "@/lib/testing/portal-session";
import { rawRequest, type RawResponse } from "@/lib/testing/raw-http";

// Every page and route handler of the app, found on disk, requested over HTTP by every role with
// hostile path segments and query strings: no 500, HTML (or the file) from the portal, JSON from the API.
type Role = "signedOut" | "licensee" | "reviewer" | "admin";
const ROLES: Role[] = ["signedOut", "licensee", "reviewer", "admin"];
const PASSWORD = "correct horse battery";

let server: AppServer;
const cookies: Record<Role, string> = { signedOut: "", licensee: "", reviewer: "", admin: "" };
let datasetId: string;
let inBoth: string; // in licensed 1.0.0 and unlicensed 2.0.0
let onlyLicensed: string; // in licensed 1.0.0 only
let onlyUnlicensed: string; // in unlicensed 2.0.0 only
let contributor: string;
let ownDownload: string;
let otherDownload: string;
let termsSha256: string;

beforeAll(async () => {
  const [org, otherOrg] = [await createTestOrg(), await createTestOrg()];
  const episodes = randomEpisodes(8, 41);
  [inBoth, onlyLicensed, onlyUnlicensed] = [episodes[0]!.episode_id, episodes[1]!.episode_id, episodes[7]!.episode_id];
  contributor = episodes[0]!.contributor;
  const files = (list: typeof episodes) =>
    list.map((e) => ({
      path: `${e.episode_id}/cam.mp4`,
      episode_id: e.episode_id,
      stream: "cam",
      size_bytes: 10,
      sha256: "a".repeat(64),
    }));
  const v1 = episodes.slice(0, 7);
  const v2 = [episodes[0]!, ...episodes.slice(2, 8)];
  datasetId = await importTestDataset([
    {
      version: "1.0.0",
      episodes: v1,
      files: files(v1),
      annotations: [{ episode_id: inBoth, label: "grasp", start_s: 0, end_s: 1 }],
    },
    { version: "2.0.0", episodes: v2, files: files(v2) },
  ]);
  await grant(org.id, datasetId, "1.0.0");
  await grant(otherOrg.id, datasetId, "1.0.0");
  // Listed, with terms: its unlicensed version can be requested, so the request page is fuzzed too.
  await setDatasetListing(operatorCtx(), { datasetId, listing: "listed" });
  termsSha256 = (await addTerms(operatorCtx(), { title: "Terms", body: `# Terms of ${datasetId}`, datasetId })).document
    .sha256;
  const users: Partial<Record<Role | "other", UserPrincipal>> = {};
  const make = async (key: Role | "other", role: "licensee" | "reviewer" | "admin", organizationId: string | null) => {
    const email = `${uniqueId(key)}@errors.example`;
    const created = await createUser(operatorCtx(), { email, role, organizationId, password: PASSWORD });
    users[key] = { kind: "user", userId: created.id, email, role, organizationId };
  };
  await make("licensee", "licensee", org.id);
  await make("other", "licensee", otherOrg.id);
  await make("reviewer", "reviewer", null);
  await make("admin", "admin", null);
  const download = async (user: UserPrincipal) =>
    (
      await createDownload(
        { db: getDb(), principal: user, requestId: "errors" },
        { body: { dataset_id: datasetId, version: "1.0.0" } },
      )
    ).download.download_id;
  ownDownload = await download(users.licensee!);
  otherDownload = await download(users.other!);
  server = await startAppServer();
  for (const role of ["licensee", "reviewer", "admin"] as const)
    cookies[role] = await signInOverHttp(server.url, users[role]!.email, PASSWORD);
});

afterAll(async () => {
  await server?.stop();
});

const get = (target: string, role: Role, method = "GET") =>
  rawRequest(server.url, { method, path: target, headers: cookies[role] ? { cookie: cookies[role] } : {} });
const header = (res: RawResponse, name: string) => String(res.headers[name] ?? "");
const context = (target: string, res: RawResponse) =>
  `${target} → ${res.status} ${header(res, "content-type")} ${res.text.slice(0, 200)}`;

// ---- the app's pages and route handlers, from the filesystem --------------------------------

type Kind = "page" | "route" | "api";
type Template = { template: string; kind: Kind; file: string };

/** Every page.tsx and route.ts under app/, as a URL template (`/datasets/[id]`). */
function appTemplates(): Template[] {
  const found: Template[] = [];
  const walk = (dir: string, segments: string[]) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        // Route groups such as (portal) are not part of the URL.
        walk(path.join(dir, entry.name), /^\(.*\)$/.test(entry.name) ? segments : [...segments, entry.name]);
      } else if (entry.name === "page.tsx" || entry.name === "route.ts") {
        const template = `/${segments.join("/")}`;
        const kind: Kind = template.startsWith("/api") ? "api" : entry.name === "page.tsx" ? "page" : "route";
        found.push({ template, kind, file: path.relative(PROJECT_ROOT, path.join(dir, entry.name)) });
      }
    }
  };
  walk(path.join(PROJECT_ROOT, "app"), []);
  return found;
}

/** Real values for each dynamic segment, so that fuzzing starts from pages that exist. */
const realValues = (): Record<string, string[]> => ({
  id: [datasetId],
  version: ["1.0.0", "2.0.0"],
  episodeId: [inBoth, onlyLicensed, onlyUnlicensed],
  downloadId: [ownDownload, otherDownload],
  format: ["json", "csv", "aria2c", "curl"],
  contributor: [contributor],
  sha256: [termsSha256],
  // The API's one route handler, at every operation's path (the API's own fuzz suite,
  // app/api/[[...path]]/http-contract.test.ts, goes further), and beside them.
  path: [
    ...API_OPERATIONS.map((operation) =>
      operation.path
        .slice("/api/".length)
        .replace("{id}", datasetId)
        .replace("{version}", "1.0.0")
        .replace("{episode_id}", inBoth),
    ),
    "v1",
    "v2/x",
  ],
  nextauth: ["session", "csrf", "providers", "signin", "signout", "callback/credentials", "error"],
});

const segmentNames = (template: string) => [...template.matchAll(/\[\[?(?:\.\.\.)?(\w+)\]?\]/g)].map((m) => m[1]!);
const fill = (template: string, values: Record<string, string>) =>
  template.replace(/\[\[?(?:\.\.\.)?(\w+)\]?\]/g, (_, name: string) => values[name]!);

// What a client might send instead: encodings Next cannot decode, control characters, slashes,
// dot segments, names of Object.prototype, very long and non-ASCII text (all as sent, unnormalised).
const HOSTILE = [
  "%FF",
  "%00",
  "%0A",
  "%2F",
  "%2e%2e",
  "..",
  ".",
  "%",
  "%25",
  "%C3%A9",
  "%E2%80%AE",
  "%F0%9F%98%80",
  "a%20b",
  ";x",
  "constructor",
  "__proto__",
  "x".repeat(3000),
];
const hostileSegment = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@%-]{1,30}$/),
);

/**
 * The names of an object schema's fields, read from source: the top-level keys of each
 * `z.object({ … })` and `.extend({ … })`, and the fields of the shared schemas a file uses.
 */
function schemaFieldNames(source: string): string[] {
  const names: string[] = [];
  for (const match of source.matchAll(/(?:z\.object|\.extend)\(\{/g)) {
    // The object literal's text, split at its own commas (not those of nested calls): `key: …` each.
    const fields: string[] = [""];
    let depth = 0;
    for (const c of source.slice(match.index! + match[0].length)) {
      if ("({[".includes(c)) depth++;
      if (")}]".includes(c) && depth-- === 0) break;
      if (c === "," && depth === 0) fields.push("");
      else fields[fields.length - 1] += c;
    }
    names.push(...fields.flatMap((field) => /^\s*([\w$]+)\s*:/.exec(field)?.[1] ?? []));
  }
  if (/\bDisclosureSearch\b/.test(source)) names.push(...SEARCH_KEYS);
  if (/\bOverviewSearch\b/.test(source)) names.push(...Object.keys(OverviewSearch.shape));
  return names;
}

/**
 * Every query parameter a page or route handler reads, taken from their schemas, so that a new one
 * is fuzzed as soon as it exists; and a name none of them reads.
 */
const QUERY_NAMES = [
  ...new Set([
    ...appTemplates().flatMap(({ file }) => schemaFieldNames(readFileSync(path.join(PROJECT_ROOT, file), "utf8"))),
    "x",
  ]),
];
const queryValue = fc.oneof(
  fc.constantFrom(
    "",
    "1",
    "-1",
    "1e3",
    "csv",
    "jsonl",
    "1.0.0",
    "2.0.0",
    "2026-01-01",
    "failure",
    "%00",
    "%0A",
    "%FF",
    "%C3%A9",
    "__proto__",
    "x".repeat(2000),
  ),
  fc.stringMatching(/^[A-Za-z0-9._~%-]{0,30}$/),
);
// Up to four parameters; names repeat by chance, as a hand-edited link might.
const query = fc
  .array(fc.tuple(fc.constantFrom(...QUERY_NAMES), queryValue), { maxLength: 4 })
  .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}` : ""));

const PAGE_STATUSES = [200, 302, 303, 307, 400, 401, 403, 404];

/** What every answer must be, by what the address names after Next's own normalisation of dot segments. */
function expectSensible(target: string, kind: Kind, res: RawResponse) {
  const where = context(target, res);
  expect(res.status, where).toBeLessThan(500);
  const normalised = new URL(target, "http://x").pathname;
  if (/^\/api\/auth\/./.test(normalised)) {
    // Auth.js's endpoints: its browser flows redirect to the sign-in page and its sign-out page is
    // HTML; anything it refuses or does not have is the API's envelope.
    expect([200, 302, 400, 404, 405], where).toContain(res.status);
    if (res.status >= 400) expect(header(res, "content-type"), where).toMatch(/^application\/json/);
    return;
  }
  // The API and the Hub protocol answer JSON everywhere, an address neither has included.
  if (/^\/(api|hub)(\/|$)/.test(normalised)) {
    expect(header(res, "content-type"), where).toMatch(/^application\/json/);
    return;
  }
  expect(PAGE_STATUSES, where).toContain(res.status);
  const type = header(res, "content-type");
  if (res.status >= 400) expect(type, where).toMatch(/^text\/(html|plain)/);
  if (
    kind === "page" &&
    normalised === target.split("?")[0] &&
    res.status !== 302 &&
    res.status !== 303 &&
    res.status !== 307
  ) {
    expect(type, where).toMatch(/^text\/html/);
  }
  // An error after the page began streaming would show the error boundary under a 200.
  expect(res.text, where).not.toContain("This page could not be loaded");
}

describe("every page and route handler over HTTP, as every role", () => {
  const templates = appTemplates();

  it("fuzzes every query parameter the pages and route handlers read, found in their schemas", () => {
    expect(QUERY_NAMES).toEqual(
      expect.arrayContaining([
        "outcome",
        "environment",
        "cursor",
        "limit",
        "version",
        "before",
        "episodes_after",
        "channel",
        "contributor",
        "org",
        "from",
        "to",
        "granularity",
        "format",
        "callbackUrl",
        "error",
        "role",
        "status",
        "organization",
      ]),
    );
    expect(
      QUERY_NAMES.every((name) => /^\w+$/.test(name)),
      QUERY_NAMES.join(),
    ).toBe(true);
  });

  it("finds the app's pages and route handlers on disk, and has a real value for each of their segments", () => {
    const kinds = new Set(templates.map((t) => t.kind));
    expect(kinds).toEqual(new Set(["page", "route", "api"]));
    expect(templates.map((t) => t.template)).toEqual(
      expect.arrayContaining([
        "/login",
        "/datasets/[id]/[version]",
        "/review/contributors/[contributor]/export",
        "/api/[[...path]]",
      ]),
    );
    const values = realValues();
    for (const { template, file } of templates) {
      for (const name of segmentNames(template))
        expect(values[name], `${file}: give this suite real values for [${name}]`).toBeDefined();
    }
  });

  for (const role of ROLES) {
    it(`as ${role}: hostile segments and query strings on every address give no 500, HTML from the portal, JSON from the API`, async () => {
      const values = realValues();
      const requested = new Set<string>();
      for (const { template, kind } of templates) {
        const names = segmentNames(template);
        const segments = fc.record(
          Object.fromEntries(
            names.map((name) => [
              name,
              fc.oneof(
                { weight: 2, arbitrary: fc.constantFrom(...values[name]!) },
                { weight: 1, arbitrary: hostileSegment },
              ),
            ]),
          ),
        );
        await fc.assert(
          fc.asyncProperty(segments, query, async (chosen, search) => {
            const target = `${fill(template, chosen as Record<string, string>)}${search}`;
            const res = await get(target, role);
            requested.add(template);
            expectSensible(target, kind, res);
          }),
          // Deterministic: the same requests on every run, so a failure can be repeated.
          { numRuns: names.length ? 16 : 8, seed: 20261122 },
        );
      }
      expect([...requested].sort()).toEqual(templates.map((t) => t.template).sort());
      // About 350 requests per role: minutes, not seconds, on a loaded two-core machine.
    }, 300_000);
  }

  it("answers methods Next does not dispatch without a 500, on pages and on the API", async () => {
    for (const method of ["TRACE", "PROPFIND", "MKCOL", "OPTIONS", "PUT", "DELETE", "PATCH"]) {
      for (const target of [
        "/login",
        "/datasets",
        `/datasets/${datasetId}/1.0.0`,
        "/review/disclosures/export?format=csv",
        "/api/v1/datasets",
        "/api",
      ]) {
        for (const role of ["signedOut", "admin"] as const) {
          const res = await get(target, role, method);
          expect(res.status, `${method} ${context(target, res)}`).toBeLessThan(500);
          if (target.startsWith("/api"))
            expect(header(res, "content-type"), `${method} ${target}`).toMatch(/^application\/json/);
        }
      }
    }
  });
});

describe("portal answers that were 500s", () => {
  const status = async (target: string, role: Role = "licensee") => {
    const res = await get(target, role);
    expectSensible(target, "page", res);
    return res.status;
  };

  it("shows the 403 page for a visible dataset's unlicensed version", async () => {
    expect(await status(`/datasets/${datasetId}/2.0.0`)).toBe(403);
  });

  it("answers an episode pinned to an unlicensed version the same whether or not the version holds it", async () => {
    const holds = await get(`/episodes/${inBoth}?version=2.0.0`, "licensee");
    const lacks = await get(`/episodes/${onlyLicensed}?version=2.0.0`, "licensee");
    expect(holds.status, context("holds", holds)).toBe(403);
    expect(lacks.status, context("lacks", lacks)).toBe(403);
    // What a person (or a scraper) reads: the markup without its scripts. The scripts carry a nonce
    // of each response's own, and Next streams its 403 row into the RSC payload at a point that
    // depends on timing; neither says anything about the episode.
    const comparable = (res: RawResponse, id: string) =>
      res.text
        .replaceAll(id, "EPISODE")
        .replace(/<script\b[^>]*>[\s\S]*?<\/script>/g, "")
        .replace(/ nonce="[^"]*"/g, "");
    expect(comparable(holds, inBoth)).toBe(comparable(lacks, onlyLicensed));
    // An episode only in the unlicensed version is as invisible as one that does not exist.
    expect(await status(`/episodes/${onlyUnlicensed}?version=2.0.0`)).toBe(404);
    expect(await status(`/episodes/${uniqueId("nope")}?version=2.0.0`)).toBe(404);
    expect(await status(`/episodes/${inBoth}?version=1.0.0`)).toBe(200);
  });

  it.each([
    [`/datasets/DATASET/1.0.0?outcome=%00`, "licensee"],
    [`/datasets/DATASET/1.0.0?environment=lab%0A`, "licensee"],
    [`/datasets/DATASET/1.0.0?outcome=a&outcome=b`, "licensee"],
    [`/datasets/DATASET?version=1.0.0&version=2.0.0`, "licensee"],
    [`/episodes/EPISODE?version=%00`, "licensee"],
    ["/review/disclosures?org=%00", "reviewer"],
    ["/review/disclosures?episode=%00", "reviewer"],
    ["/review/disclosures?contributor=%01", "reviewer"],
    ["/review/disclosures?from=2026-01-01&from=2026-02-01", "reviewer"],
    ["/review/disclosures/export?format=csv&org=%00", "reviewer"],
    ["/review/overview?from=%00", "reviewer"],
    ["/review/overview?granularity=day&granularity=week", "reviewer"],
    ["/review/disclosures/export?format=csv&format=jsonl", "reviewer"],
    ["/admin/audit?before=1&before=2", "admin"],
    ["/datasets/%FF", "licensee"],
    ["/episodes/%FF", "licensee"],
    ["/datasets/DATASET/%FF", "licensee"],
    ["/downloads/%FF", "licensee"],
    ["/downloads/%FF/json", "licensee"],
    ["/review/contributors/%FF", "reviewer"],
    ["/review/contributors/%00", "reviewer"],
    ["/review/contributors/%FF/export", "reviewer"],
    ["/datasets/%FF", "signedOut"],
  ] as [string, Role][])("answers %s (as %s) with the 400 page", async (template, role) => {
    const target = template.replace("DATASET", datasetId).replace("EPISODE", inBoth);
    const res = await get(target, role);
    expect(res.status, context(target, res)).toBe(400);
    expect(header(res, "content-type")).toMatch(/^text\/html/);
    expect(res.text).toContain("This address is not valid");
    expect(header(res, "strict-transport-security")).toContain("max-age=");
  });

  it("names the problem on the 400 page, escaped", async () => {
    const res = await get(`/datasets?%3Cscript%3E=1&%3Cscript%3E=2`, "licensee");
    expect(res.status).toBe(400);
    expect(res.text).toContain("Query parameter &#39;&lt;script&gt;&#39; was given more than once.");
    expect(res.text).not.toContain("<script>");
  });

  it("keeps a value a page cannot use from breaking it: unknown page sizes and stale cursors are pages, not errors", async () => {
    expect(await status(`/datasets/${datasetId}/1.0.0?limit=abc`)).toBe(200);
    expect(await status(`/datasets/${datasetId}/1.0.0?cursor=stale`)).toBe(200);
    expect(await status(`/review/disclosures?from=yesterday`, "reviewer")).toBe(200);
  });

  it("answers file lists in a format named after Object.prototype with 404, not a 500", async () => {
    for (const format of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const res = await get(`/downloads/${ownDownload}/${format}`, "licensee");
      expect(res.status, context(format, res)).toBe(404);
    }
  });

  it("shows a contributor whose name holds a percent sign, title included", async () => {
    const res = await get("/review/contributors/%25", "reviewer");
    expect(res.status).toBe(200);
    expect(res.text).toContain("<title>Recipients of %");
    expect(server.output()).not.toContain("URIError");
  });
});

import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import * as route from "../../app/api/[[...path]]/route";
import { DATASET_ID_PATTERN, EPISODE_ID_PATTERN } from "../catalog/identifiers";
import { VERSION_PATTERN } from "../catalog/semver";
import { CURSOR_MAX_LENGTH, CURSOR_PATTERN, encodeCursor, queryBinding } from "../cursor";
import { getDb } from "../db/client";
import { contract } from "../testing/contract";
import { createTestKey, createTestOrg, grant, importTestDataset, randomEpisodes } from "../testing/fixtures";
import { call } from "../testing/http";
import { openApiDocument } from "./openapi";

/**
 * The OpenAPI document says exactly what the server accepts: for each rule a request must follow,
 * a value the document allows is accepted by the server and a value it refuses is refused (400).
 * The document is read with the JSON Schema validator the contract tests use (code points for
 * lengths, ECMAScript patterns), the server is the real route handler on a real database.
 */

const doc = openApiDocument() as any;
const pointerPart = (part: string) => part.replace(/~/g, "~0").replace(/\//g, "~1");
const EPISODES = "/api/v1/datasets/{id}/versions/{version}/episodes";

/** The pointer to a parameter's schema in the document. */
function parameterSchema(path: string, method: string, name: string): string {
  const index = (doc.paths[path][method].parameters as { name: string }[]).findIndex((p) => p.name === name);
  if (index < 0) throw new Error(`${method} ${path} has no parameter ${name}`);
  return `/paths/${pointerPart(path)}/${method}/parameters/${index}/schema`;
}
const bodySchema = (path: string) => `/paths/${pointerPart(path)}/post/requestBody/content/application~1json/schema`;
const allows = (at: string, value: unknown) => contract().validate(at, value).length === 0;

let key: string;
let organizationId: string;
let datasetId: string;
let episodeIds: string[];
let outcome: string;

beforeAll(async () => {
  const org = await createTestOrg();
  organizationId = org.id;
  const episodes = randomEpisodes(6, 34);
  episodeIds = episodes.map((e) => e.episode_id);
  outcome = episodes[0]!.outcome;
  datasetId = await importTestDataset([
    {
      version: "1.0.0",
      episodes,
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
  key = (await createTestKey(org.id)).secret;
}, 120_000);

const episodesOf = (query: Record<string, string>) =>
  call(route.GET, `/api/v1/datasets/${datasetId}/versions/1.0.0/episodes?${new URLSearchParams(query)}`, { key });

/** A withdrawal notice to the organisation, as lib/withdrawals writes one: each acknowledgement below gets its own. */
async function newNotice(): Promise<string> {
  const sql = getDb().$client;
  const noticeId = `nt_${randomBytes(16).toString("hex")}`;
  const withdrawalId = `wd_req${randomBytes(6).toString("hex")}`;
  await sql`insert into withdrawals (id, actor_kind, actor_id, actor_label, reason, episode_count)
    values (${withdrawalId}, 'operator', 'requests-test', 'requests test (das-admin)', 'test', 1)`;
  await sql`insert into notices (id, organization_id, kind, withdrawal_id, episode_ids, deliveries)
    values (${noticeId}, ${organizationId}, 'withdrawal', ${withdrawalId}, '{e-requests}'::text[], '[]'::jsonb)`;
  return noticeId;
}

describe("cursor", () => {
  const lists = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    item.get?.parameters?.some((p: { name: string }) => p.name === "cursor") ? [path] : [],
  );

  it("has the shape of every cursor the service issues, on every list and every next_cursor", () => {
    expect(lists.length).toBeGreaterThanOrEqual(6);
    for (const path of lists)
      expect(doc.paths[path].get.parameters.find((p: any) => p.name === "cursor").schema.pattern, path).toBe(
        CURSOR_PATTERN.source,
      );
    const at = parameterSchema(EPISODES, "get", "cursor");
    // Every sort key a list pages by: a dataset or episode id, a version, a licence's, a span's, a notice's.
    const sortKey = fc.oneof(
      fc.tuple(fc.stringMatching(DATASET_ID_PATTERN)),
      fc.tuple(fc.stringMatching(EPISODE_ID_PATTERN)),
      fc.tuple(fc.stringMatching(VERSION_PATTERN)),
      fc.tuple(fc.stringMatching(DATASET_ID_PATTERN), fc.nat(), fc.nat(), fc.nat()),
      fc.tuple(fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 40 })),
      fc.tuple(
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        fc.stringMatching(/^nt_[0-9a-f]{32}$/),
      ),
    );
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 8 }), sortKey, (parts, sortKeyValues) => {
        const cursor = encodeCursor(queryBinding(parts), sortKeyValues);
        expect(cursor.length).toBeLessThanOrEqual(CURSOR_MAX_LENGTH);
        expect(contract().validate(at, cursor)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses with 400 invalid_cursor a cursor of that shape it did not issue, and with 400 any other string", async () => {
    const at = parameterSchema(EPISODES, "get", "cursor");
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.stringMatching(CURSOR_PATTERN), fc.string({ unit: "binary", minLength: 1 })),
        async (cursor) => {
          const res = await episodesOf({ cursor });
          expect(res.status).toBe(400);
          if (allows(at, cursor)) expect(res.json.error.code).toBe("invalid_cursor");
        },
      ),
      { numRuns: 60, examples: [["0"], ["0.0000000000000000000000"], ["a\u0001.bbbbbbbbbbbbbbbbbbbbbb"]] },
    );
  });
});

describe("duration bounds", () => {
  const MIN = parameterSchema(EPISODES, "get", "min_duration_s");

  it("are numbers as the document says: any way of writing one it allows is accepted, any other refused", async () => {
    // JavaScript's, an exponent's and a fixed-point spelling of the same number.
    const spellings = (x: number) => [String(x), x.toExponential(), x.toFixed(12)];
    await fc.assert(
      fc.asyncProperty(fc.double({ noNaN: true, min: -1e12, max: 1e12 }), async (x) => {
        for (const text of spellings(x)) {
          const res = await episodesOf({ min_duration_s: text });
          expect(res.status, `${text}: ${res.text}`).toBe(allows(MIN, Number(text)) ? 200 : 400);
        }
      }),
      { numRuns: 40, examples: [[5e-7], [0], [-0], [1e9], [1e9 + 1], [-1e-300], [123.456]] },
    );
  });

  it("refuses a range whose minimum exceeds its maximum, as the document says in words", async () => {
    expect(doc.paths[EPISODES].get.parameters.find((p: any) => p.name === "max_duration_s").description).toMatch(
      /minimum exceeds its maximum is 400 `invalid_parameter`/,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        async (low, high) => {
          const res = await episodesOf({ min_duration_s: String(low), max_duration_s: String(high) });
          expect(res.status).toBe(low > high ? 400 : 200);
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe("query values", () => {
  it("with a control character are refused by the document and by the server, for every string parameter", async () => {
    const checked: string[] = [];
    for (const [path, item] of Object.entries(doc.paths) as [string, any][]) {
      for (const parameter of item.get?.parameters ?? []) {
        if (parameter.in !== "query" || parameter.schema.type !== "string") continue;
        const at = parameterSchema(path, "get", parameter.name);
        expect(allows(at, "x\u0001y"), `${path} ${parameter.name}`).toBe(false);
        const url = path
          .replace("{id}", datasetId)
          .replace("{version}", "1.0.0")
          .replace("{episode_id}", episodeIds[0]!);
        const res = await call(route.GET, `${url}?${new URLSearchParams({ [parameter.name]: "x\u0001y" })}`, { key });
        expect(res.status, `${path} ${parameter.name}`).toBe(400);
        checked.push(`${path} ${parameter.name}`);
      }
    }
    expect(checked).toContain("/api/v1/episodes/{episode_id}/annotations version");
    expect(checked.length).toBeGreaterThanOrEqual(11);
  });

  it("count characters as the document does (code points): a filter of 200 emoji is a filter, 201 are too many", async () => {
    const at = parameterSchema(EPISODES, "get", "outcome");
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", minLength: 1, maxLength: 210 }), async (value) => {
        const res = await episodesOf({ outcome: value });
        expect(res.status, JSON.stringify(value)).toBe(allows(at, value) ? 200 : 400);
      }),
      {
        numRuns: 60,
        examples: [
          ["__proto__"],
          ["constructor"],
          ["\u{1F600}".repeat(200)],
          ["\u{1F600}".repeat(201)],
          ["a\u202eb"],
          ["tab\t"],
        ],
      },
    );
  });
});

describe("POST /api/v1/downloads", () => {
  const at = bodySchema("/api/v1/downloads");
  const download = (body: object) =>
    call(route.POST, "/api/v1/downloads", {
      key,
      method: "POST",
      body: { dataset_id: datasetId, version: "1.0.0", ...body },
    });

  it.each([
    ["episode_ids and filter together", 400, { episode_ids: ["first"], filter: { outcome: "first" } }],
    ["an empty filter", 400, { filter: {} }],
    ["episode_ids", 201, { episode_ids: ["first"] }],
    ["a filter", 201, { filter: { outcome: "first" } }],
    ["neither (the whole version)", 201, {}],
  ] as const)("%s: the document and the server agree (%i)", async (_, status, shape) => {
    const body: Record<string, unknown> = structuredClone(shape) as never;
    if (body.episode_ids) body.episode_ids = [episodeIds[0]];
    if ((body.filter as { outcome?: string })?.outcome) body.filter = { outcome };
    expect(allows(at, { dataset_id: datasetId, version: "1.0.0", ...body })).toBe(status !== 400);
    expect((await download(body)).status).toBe(status);
  });

  it("counts an identifier's characters as the document does: 100 emoji are an unknown dataset, not a bad body", async () => {
    const body = { dataset_id: "\u{1F600}".repeat(100), version: "1.0.0" };
    expect(allows(at, body)).toBe(true);
    expect((await call(route.POST, "/api/v1/downloads", { key, method: "POST", body })).status).toBe(404);
    expect(allows(at, { ...body, dataset_id: "\u{1F600}".repeat(101) })).toBe(false);
  });
});

describe("POST /api/v1/notices/{notice_id}/acknowledgements", () => {
  const at = bodySchema("/api/v1/notices/{notice_id}/acknowledgements");
  const EDGES = [
    " ",
    "\u000b",
    " Deleted.\u000b",
    "Deleted\u0007.",
    "\ufeff",
    "\u3000Deleted.",
    "Deleted\u202e.",
    "Deleted:\n- every copy\r\n\t- and the backups",
    "\u{1F5D1}".repeat(4000),
    "a".repeat(4001),
  ];

  it("a statement the document allows is recorded, one it refuses is refused", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ unit: "binary", minLength: 1, maxLength: 40 }), fc.constantFrom(...EDGES)),
        async (statement) => {
          const body = { statement, deleted_paths: [] };
          const res = await call(route.POST, `/api/v1/notices/${await newNotice()}/acknowledgements`, {
            key,
            method: "POST",
            body,
          });
          expect(res.status, `${JSON.stringify(statement).slice(0, 80)}: ${res.text}`).toBe(
            allows(at, body) ? 201 : 400,
          );
        },
      ),
      { numRuns: 60, examples: EDGES.map((edge) => [edge]) },
    );
  });
});

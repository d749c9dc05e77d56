import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { rawRequest } from "@/lib/testing/raw-http";
import { grant, importTestDataset, randomEpisodes } from "@/lib/testing/fixtures";
import { entriesOf, hubCall, hubCaller, plainRepo, sha256, type PlainRepo } from "@/lib/testing/hub-fixtures";
import { TREE_PAGE } from "@/lib/hub/tree";

// The Hub protocol over real HTTP, through the production build: Next's routing and the proxy
// (nothing under /hub goes to the portal's sign-in), the request guard, percent-encoded revisions
// and paths as the clients send them, and a revision's sha the same on another instance.
let server: AppServer;
let caller: Awaited<ReturnType<typeof hubCaller>>;
let plain: PlainRepo;

beforeAll(async () => {
  caller = await hubCaller();
  plain = await plainRepo(caller.organizationId);
  server = await startAppServer({ RATE_LIMIT_PER_MINUTE: "1000000", AUTH_FAILURES_PER_MINUTE: "1000000" });
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

const get = (path: string, method = "GET", headers: Record<string, string> = {}) =>
  rawRequest(server.url, {
    method,
    path,
    headers: { authorization: `Bearer ${caller.key}`, accept: "*/*", ...headers },
  });

/** A segment a Hub client might send, or a hostile one, sent unnormalised. */
const segment = (real: string[]) =>
  fc.oneof(
    fc.constantFrom(
      ...real,
      "..",
      ".",
      "%",
      "%2F",
      "%2E%2E%2Fx",
      "%00",
      "%0A",
      "%ZZ",
      "%E0%A4%A",
      "%C3%BC",
      "x".repeat(1100),
    ),
    fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@%-]{1,40}$/),
  );

describe("every Hub answer over HTTP", () => {
  it.each(["GET", "HEAD"])(
    "%s of random repositories, revisions and paths: JSON, a redirect to the store, or a 4xx with X-Error-Code, never a 5xx",
    async (method) => {
      const files = plain.files.map((f) => f.path);
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("api/datasets", "datasets"),
          segment(["das", "someone"]),
          segment([plain.datasetId, "no-such-dataset"]),
          fc.constantFrom("revision", "tree", "refs", "resolve", "paths-info", "blob"),
          segment(["main", "1.0.0", "2.0.0", "v3.0", "refs%2Fconvert%2Fparquet"]),
          fc.array(segment([...files.flatMap((f) => f.split("/")), "meta"]), { maxLength: 4 }),
          fc.constantFrom("", "?recursive=true", "?expand=True&cursor=x.y", "?blobs=%01"),
          async (area, namespace, name, kind, revision, path, query) => {
            const target = `/hub/${area}/${namespace}/${name}/${kind}/${revision}${path.length ? `/${path.join("/")}` : ""}${query}`;
            const res = await rawRequest(server.url, {
              method,
              path: target,
              headers: { authorization: `Bearer ${caller.key}` },
            });
            const context = `${method} ${target.slice(0, 200)} -> ${res.status}: ${res.text.slice(0, 200)}`;
            expect(res.status, context).toBeLessThan(500);
            expect(res.headers["x-request-id"], context).toMatch(/^req_/);
            if (res.status === 302)
              expect(String(res.headers.location), context).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
            else if (res.status >= 400) expect(res.headers["x-error-message"], context).toBeTruthy();
            if (method === "GET" && res.status !== 302) {
              expect(res.headers["content-type"], context).toMatch(/^application\/json/);
              JSON.parse(res.text);
            }
          },
        ),
        { numRuns: 300 },
      );
    },
  );
});

describe("the Hub protocol over HTTP", () => {
  it("names the same revision on another instance as in this process", async () => {
    const here = await hubCall(caller.key, `/hub/api/datasets/das/${plain.datasetId}/refs`);
    const there = await get(`/hub/api/datasets/das/${plain.datasetId}/refs`);
    expect(there.status).toBe(200);
    expect(JSON.parse(there.text)).toEqual(here.json);
  });

  it("takes revisions and paths percent-encoded, as the clients send them", async () => {
    const file = plain.files.find((f) => f.episode_id)!;
    const folder = file.path.slice(0, file.path.lastIndexOf("/"));
    const tree = await get(
      `/hub/api/datasets/das/${plain.datasetId}/tree/1.0.0/${encodeURIComponent(folder)}?recursive=False&expand=False`,
    );
    expect(tree.status, tree.text).toBe(200);
    expect(JSON.parse(tree.text).map((e: { path: string }) => e.path)).toContain(file.path);
    const convert = await get(`/hub/api/datasets/das/${plain.datasetId}/revision/refs%2Fconvert%2Fparquet`);
    expect(convert.status).toBe(404);
    expect(convert.headers["x-error-code"]).toBe("RevisionNotFound");
    const head = await get(`/hub/datasets/das/${plain.datasetId}/resolve/1.0.0/${file.path}`, "HEAD");
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    expect(head.headers["x-linked-size"]).toBe(String(file.size_bytes));
    expect(head.headers.location).toBeUndefined();
    const redirect = await get(`/hub/datasets/das/${plain.datasetId}/resolve/1.0.0/${encodeURIComponent(file.path)}`);
    expect(redirect.status).toBe(302);
    const bytes = Buffer.from(await (await fetch(redirect.headers.location!)).arrayBuffer());
    expect(sha256(bytes)).toBe(file.sha256);
  });

  it("refuses a dot segment before it is resolved into another path, and discloses nothing", async () => {
    const reader = await hubCaller();
    for (const path of [
      `/hub/datasets/das/${plain.datasetId}/resolve/main/episodes/../README.md`,
      `/hub/datasets/das/${plain.datasetId}/resolve/main/episodes/%2e%2E/README.md`,
      `/hub/datasets/das/${plain.datasetId}/resolve/main/./README.md`,
    ]) {
      const answer = await rawRequest(server.url, { path, headers: { authorization: `Bearer ${reader.key}` } });
      expect(answer.status, path).toBe(400);
      expect(answer.headers["x-error-code"]).toBe("EntryNotFound");
      expect(JSON.parse(answer.text).error.code).toBe("invalid_parameter");
      expect(answer.headers.location).toBeUndefined();
    }
    expect(await entriesOf(reader.keyId)).toEqual([]);
  });

  it("answers every other path under /hub in JSON, never with the portal's sign-in", async () => {
    for (const path of [
      "/hub/api/models/someone/model",
      "/hub/nothing",
      `/hub/datasets/das/${plain.datasetId}/blob/main/README.md`,
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.headers["content-type"]).toMatch(/^application\/json/);
      expect(answer.headers["x-error-code"]).toBe("RepoNotFound");
    }
    const malformed = await get(`/hub/api/datasets/das/%E0%A4%A`);
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.text).error.code).toBe("invalid_parameter");
    const anonymous = await rawRequest(server.url, { path: `/hub/api/datasets/das/${plain.datasetId}` });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.location).toBeUndefined();
  });

  it("links the next page of a tree at the address the client used", async () => {
    const episodes = randomEpisodes(1, 95).map((e) => ({ ...e, streams: ["s"] }));
    const datasetId = await importTestDataset([
      {
        version: "1.0.0",
        episodes,
        files: Array.from({ length: TREE_PAGE + 1 }, (_, i) => ({
          path: `f/${String(i).padStart(5, "0")}.bin`,
          episode_id: episodes[0]!.episode_id,
          stream: "s",
          size_bytes: 1,
          sha256: "c".repeat(64),
        })),
      },
    ]);
    await grant(caller.organizationId, datasetId, "1.0.0");
    // The suite plays the one trusted proxy in front: the client's scheme and the host it named.
    const answer = await get(`/hub/api/datasets/das/${datasetId}/tree/main/f`, "GET", {
      host: "das.example:8443",
      "x-forwarded-proto": "https",
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toHaveLength(TREE_PAGE);
    const link = String(answer.headers.link ?? "");
    const next = /^<(https:\/\/das\.example:8443\/hub\/api\/datasets\/das\/[^>]+)>; rel="next"$/.exec(link);
    expect(next, link).not.toBeNull();
    const url = new URL(next![1]!);
    const last = await get(`${url.pathname}${url.search}`);
    expect(JSON.parse(last.text).map((e: { path: string }) => e.path)).toEqual([
      `f/${String(TREE_PAGE).padStart(5, "0")}.bin`,
    ]);
    expect(last.headers.link).toBeUndefined();
  });
});

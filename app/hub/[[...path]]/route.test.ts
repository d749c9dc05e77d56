import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { withdrawEpisodes } from "@/lib/withdrawals/withdraw";
import { importTestDataset, operatorCtx, randomEpisodes, grant } from "@/lib/testing/fixtures";
import { disclosureEpisodes } from "@/lib/testing/downloads";
import {
  entriesOf,
  hubCall,
  hubCaller,
  leRobotRepo,
  plainRepo,
  removeRepoDir,
  sha256,
  type LeRobotRepo,
  type PlainRepo,
} from "@/lib/testing/hub-fixtures";
import { viewSha } from "@/lib/views/view";
import { grantLicence } from "@/lib/admin/licences";
import { call } from "@/lib/testing/http";
import { GET as apiGet } from "@/app/api/[[...path]]/route";
import { MAX_PATH_CHARACTERS } from "@/lib/hub/entries";
import { TREE_PAGE } from "@/lib/hub/tree";

// The Hub protocol as its clients use it (the clients themselves run in clients/python/tests/test_hub.py):
// what discloses and what does not, revisions and their shas, withdrawals, refusals and bad input.

type Caller = Awaited<ReturnType<typeof hubCaller>>;
const DAY = 86_400_000;
let caller: Caller;
let plain: PlainRepo;
const repoApi = (datasetId: string, tail = "") => `/hub/api/datasets/das/${datasetId}${tail}`;
const resolveUrl = (datasetId: string, revision: string, path: string) =>
  `/hub/datasets/das/${datasetId}/resolve/${revision}/${path}`;

beforeAll(async () => {
  caller = await hubCaller();
  plain = await plainRepo(caller.organizationId);
}, 120_000);

const episodeFile = () => plain.files.find((f) => f.episode_id !== null)!;

describe("what discloses", () => {
  it("info, refs, tree, paths-info and HEAD on every file disclose nothing", async () => {
    const reader = await hubCaller();
    await grant(reader.organizationId, plain.datasetId, "1.0.0");
    const answers = [
      await hubCall(reader.key, repoApi(plain.datasetId)),
      await hubCall(reader.key, repoApi(plain.datasetId, "/revision/1.0.0?blobs=true")),
      await hubCall(reader.key, repoApi(plain.datasetId, "/refs")),
      await hubCall(reader.key, repoApi(plain.datasetId, "/tree/main?recursive=true&expand=true")),
      await hubCall(reader.key, repoApi(plain.datasetId, "/paths-info/main"), {
        method: "POST",
        form: plain.files.map((f) => ["paths", f.path]),
      }),
      ...(await Promise.all(
        plain.files.map((f) => hubCall(reader.key, resolveUrl(plain.datasetId, "main", f.path), { method: "HEAD" })),
      )),
    ];
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);
    expect(await entriesOf(reader.keyId)).toEqual([]);
  });

  it("HEAD answers the file's metadata without a redirect", async () => {
    const file = episodeFile();
    const head = await hubCall(caller.key, resolveUrl(plain.datasetId, "main", file.path), { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("location")).toBeNull();
    expect(head.headers.get("x-linked-etag")).toBe(`"${file.sha256}"`);
    expect(head.headers.get("etag")).toBe(`"${file.sha256}"`);
    expect(head.headers.get("x-linked-size")).toBe(String(file.size_bytes));
    expect(head.headers.get("x-repo-commit")).toMatch(/^[0-9a-f]{40}$/);
    expect(head.text).toBe("");
  });

  it("a GET of a file that carries episodes is one entry of channel hub, written before the redirect, reused while its URL is valid", async () => {
    const reader = await hubCaller();
    await grant(reader.organizationId, plain.datasetId, "1.0.0");
    const file = episodeFile();
    const url = resolveUrl(plain.datasetId, "main", file.path);
    const first = await hubCall(reader.key, url);
    expect(first.status).toBe(302);
    expect(first.text).toBe("");
    const [entry] = await entriesOf(reader.keyId);
    expect(entry).toMatchObject({
      channel: "hub",
      requested_scope: { paths: [file.path] },
      episode_count: 1,
      file_count: 1,
    });
    expect(await disclosureEpisodes(entry!.id)).toEqual([file.episode_id]);
    const location = first.headers.get("location")!;
    expect(location).toContain(`/${plain.datasetId}/1.0.0/${file.path}?`);
    const bytes = Buffer.from(await (await fetch(location)).arrayBuffer());
    expect(sha256(bytes)).toBe(file.sha256);
    // Range works through the redirect: the store answers 206 with the slice.
    const ranged = await fetch(location, { headers: { Range: "bytes=10-19" } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(plain.content.get(file.path)!.subarray(10, 20));
    // A retry or a resumed download: the same URL, no new entry.
    const again = await hubCall(reader.key, url);
    expect(again.headers.get("location")).toBe(location);
    expect(await entriesOf(reader.keyId)).toHaveLength(1);
    // Another key is another recipient.
    const other = await hubCaller();
    await grant(other.organizationId, plain.datasetId, "1.0.0");
    expect((await hubCall(other.key, url)).status).toBe(302);
    expect(await entriesOf(other.keyId)).toHaveLength(1);
  });

  it("a GET of a file of no episode is an entry of no episode, reused as well", async () => {
    const reader = await hubCaller();
    await grant(reader.organizationId, plain.datasetId, "1.0.0");
    const readme = await hubCall(reader.key, resolveUrl(plain.datasetId, "main", "README.md"));
    expect(readme.status).toBe(302);
    const bytes = Buffer.from(await (await fetch(readme.headers.get("location")!)).arrayBuffer());
    expect(bytes).toEqual(plain.content.get("README.md"));
    const again = await hubCall(reader.key, resolveUrl(plain.datasetId, "1.0.0", "README.md"));
    expect(again.headers.get("location")).toBe(readme.headers.get("location"));
    const entries = await entriesOf(reader.keyId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ channel: "hub", requested_scope: { paths: ["README.md"] }, episode_count: 0 });
    expect(await disclosureEpisodes(entries[0]!.id)).toEqual([]);
  });
});

describe("revisions", () => {
  it("main is the newest version the key may read now; each readable version is a tag; the sha names the revision", async () => {
    const refs = await hubCall(caller.key, repoApi(plain.datasetId, "/refs"));
    // 2.0.0's licence ended yesterday, 3.0.0's starts tomorrow.
    expect(refs.json.tags.map((t: { name: string }) => t.name)).toEqual(["1.0.0"]);
    const sha = refs.json.branches[0].targetCommit;
    expect(refs.json.branches).toEqual([{ name: "main", ref: "refs/heads/main", targetCommit: sha }]);
    expect(refs.json.converts).toEqual([]);
    const info = await hubCall(caller.key, repoApi(plain.datasetId));
    expect(info.json.sha).toBe(sha);
    expect(info.json.cardData).toEqual({ license: "other", tags: ["robotics"] });
    const atSha = await hubCall(caller.key, repoApi(plain.datasetId, `/revision/${sha}`));
    expect(atSha.json.sha).toBe(sha);
    const head = await hubCall(caller.key, resolveUrl(plain.datasetId, sha, "README.md"), { method: "HEAD" });
    expect(head.headers.get("x-repo-commit")).toBe(sha);
  });

  it("a revision's sha is derived from the version's content and withdrawals alone", async () => {
    const [row] = await getDb().$client<{ content_sha256: string }[]>`
      select content_sha256 from dataset_versions where dataset_id = ${plain.datasetId} and version = '1.0.0'`;
    const expected = viewSha({
      datasetId: plain.datasetId,
      version: "1.0.0",
      contentSha256: row!.content_sha256,
      withdrawn: [],
    });
    const info = await hubCall(caller.key, repoApi(plain.datasetId, "/revision/1.0.0"));
    expect(info.json.sha).toBe(expected);
    // Another caller, another licence of the same version: the same revision.
    const other = await hubCaller();
    await grant(other.organizationId, plain.datasetId, "1.0.0");
    expect((await hubCall(other.key, repoApi(plain.datasetId, "/revision/1.0.0"))).json.sha).toBe(expected);
  });

  it("a version outside the licence's term is GatedRepo saying when it ended or starts", async () => {
    const ended = await hubCall(caller.key, repoApi(plain.datasetId, "/revision/2.0.0"));
    expect(ended.status).toBe(403);
    expect(ended.headers.get("x-error-code")).toBe("GatedRepo");
    expect(ended.headers.get("x-error-message")).toMatch(/your licence ended on \d{4}-/);
    expect(ended.json.error.code).toBe("version_not_licensed");
    const later = await hubCall(caller.key, resolveUrl(plain.datasetId, "3.0.0", episodeFile().path));
    expect(later.status).toBe(403);
    expect(later.headers.get("x-error-message")).toMatch(/starts on \d{4}-/);
    expect(later.headers.get("location")).toBeNull();
  });

  it("a dataset whose every licence is out of its term is GatedRepo saying when each ended or starts, on every request", async () => {
    const holder = await hubCaller();
    const episodes = randomEpisodes(1, 97).map((e) => ({ ...e, streams: ["s"] }));
    const files = [
      { path: "a.bin", episode_id: episodes[0]!.episode_id, stream: "s", size_bytes: 1, sha256: "d".repeat(64) },
    ];
    const datasetId = await importTestDataset(["1.0.0", "2.0.0"].map((version) => ({ version, episodes, files })));
    const ended = new Date(Date.now() - DAY);
    const starts = new Date(Date.now() + DAY);
    await grantLicence(operatorCtx(), {
      organizationId: holder.organizationId,
      datasetId,
      version: "1.0.0",
      startsAt: new Date(Date.now() - 3 * DAY),
      endsAt: ended,
    });
    await grantLicence(operatorCtx(), {
      organizationId: holder.organizationId,
      datasetId,
      version: "2.0.0",
      startsAt: starts,
    });
    const requests: [string, Parameters<typeof hubCall>[2]][] = [
      [repoApi(datasetId), {}],
      [repoApi(datasetId, "/refs"), {}],
      [repoApi(datasetId, "/revision/main"), {}],
      [repoApi(datasetId, "/tree/main?recursive=true"), {}],
      [repoApi(datasetId, "/paths-info/main"), { method: "POST", form: [["paths", "a.bin"]] }],
      [resolveUrl(datasetId, "main", "a.bin"), { method: "HEAD" }],
      [resolveUrl(datasetId, "1.0.0", "a.bin"), {}],
    ];
    for (const [url, options] of requests) {
      const answer = await hubCall(holder.key, url, options);
      expect(answer.status, url).toBe(403);
      expect(answer.headers.get("x-error-code")).toBe("GatedRepo");
      expect(answer.headers.get("location")).toBeNull();
      const message = answer.headers.get("x-error-message")!;
      expect(message).toContain(`your licence to version 1.0.0 ended on ${ended.toISOString()}`);
      expect(message).toContain(`your licence to version 2.0.0 starts on ${starts.toISOString()}`);
      if (options?.method !== "HEAD")
        expect(answer.json.error).toMatchObject({ code: "version_not_licensed", message });
    }
    expect(await entriesOf(holder.keyId)).toEqual([]);
    // /api/v1 is unchanged: a dataset with no version usable now does not exist for the key.
    const api = await call(apiGet, `/api/v1/datasets/${datasetId}`, { key: holder.key });
    expect(api.status).toBe(404);
    expect(api.json.error.code).toBe("not_found");
  });

  it("refuses what the key may not read as RepoNotFound, the same as what does not exist", async () => {
    const stranger = await hubCaller();
    const hidden = await hubCall(stranger.key, repoApi(plain.datasetId));
    const missing = await hubCall(stranger.key, repoApi("no-such-dataset"));
    for (const answer of [hidden, missing]) {
      expect(answer.status).toBe(404);
      expect(answer.headers.get("x-error-code")).toBe("RepoNotFound");
    }
    expect(hidden.json.error.message).toBe(missing.json.error.message);
    expect(hidden.headers.get("x-error-message")).toBe(missing.headers.get("x-error-message"));
    expect(hidden.text.replace(hidden.json.error.request_id, "")).toBe(
      missing.text.replace(missing.json.error.request_id, ""),
    );
    const resolve = await hubCall(stranger.key, resolveUrl(plain.datasetId, "main", episodeFile().path));
    expect(resolve.status).toBe(404);
    expect(await entriesOf(stranger.keyId)).toEqual([]);
  });
});

describe("withdrawals", () => {
  let own: PlainRepo;
  let reader: Caller;
  beforeAll(async () => {
    reader = await hubCaller();
    own = await plainRepo(reader.organizationId);
  });

  it("give the revision a new sha; the withdrawn episode's files leave the tree and are EntryNotFound", async () => {
    const before = (await hubCall(reader.key, repoApi(own.datasetId, "/refs"))).json.branches[0].targetCommit;
    const gone = own.episodes[0]!;
    await withdrawEpisodes(operatorCtx(), { episodeIds: [gone], reason: "hub test" });
    const after = (await hubCall(reader.key, repoApi(own.datasetId, "/refs"))).json.branches[0].targetCommit;
    expect(after).not.toBe(before);
    const stale = await hubCall(reader.key, repoApi(own.datasetId, `/revision/${before}`));
    expect(stale.status).toBe(404);
    expect(stale.headers.get("x-error-code")).toBe("RevisionNotFound");
    const tree = await hubCall(reader.key, repoApi(own.datasetId, "/tree/main?recursive=true"));
    const paths = tree.json.map((e: { path: string }) => e.path);
    expect(paths.some((p: string) => p.includes(gone))).toBe(false);
    expect(paths).toContain(`episodes/${own.episodes[1]}/cam.bin`);
    for (const method of ["HEAD", "GET"] as const) {
      const file = await hubCall(reader.key, resolveUrl(own.datasetId, "main", `episodes/${gone}/cam.bin`), { method });
      expect(file.status).toBe(404);
      expect(file.headers.get("x-error-code")).toBe("EntryNotFound");
    }
    expect(await entriesOf(reader.keyId)).toEqual([]);
  });
});

describe("a LeRobot v3.0 version with a withdrawn episode", () => {
  let repo: LeRobotRepo;
  let reader: Caller;
  beforeAll(async () => {
    reader = await hubCaller();
    repo = await leRobotRepo(reader.organizationId, { version: "v3.0", episodes: 6, episodesPerFile: 2 });
    await withdrawEpisodes(operatorCtx(), { episodeIds: [`${repo.datasetId}-000001`], reason: "hub test" });
  }, 180_000);
  afterAll(() => removeRepoDir(repo));

  it("serves meta/ rendered for the episodes still whole, and refuses the files shared with the withdrawn one", async () => {
    const tags = (await hubCall(reader.key, repoApi(repo.datasetId, "/refs"))).json.tags;
    expect(tags.map((t: { name: string }) => t.name)).toEqual(["1.0.0", "v3.0"]);
    const tree = await hubCall(reader.key, repoApi(repo.datasetId, "/tree/v3.0/meta?recursive=true"));
    expect(tree.status, tree.text).toBe(200);
    const info = tree.json.find((e: { path: string }) => e.path === "meta/info.json");
    const get = await hubCall(reader.key, resolveUrl(repo.datasetId, "v3.0", "meta/info.json"));
    expect(get.status).toBe(302);
    const bytes = Buffer.from(await (await fetch(get.headers.get("location")!)).arrayBuffer());
    expect(sha256(bytes)).toBe(info.lfs.oid);
    const rendered = JSON.parse(bytes.toString("utf8"));
    // Episode 1 withdrawn; episode 0 shares its data and video files: four episodes are whole.
    expect(rendered.total_episodes).toBe(4);
    expect(rendered.total_frames).toBe(repo.fixture.episodes.slice(2).reduce((n, e) => n + e.length, 0));
    const shared = await hubCall(reader.key, resolveUrl(repo.datasetId, "v3.0", "data/chunk-000/file-000.parquet"));
    expect(shared.status).toBe(422);
    expect(shared.json.error.code).toBe("withdrawn_content");
    expect(shared.headers.get("location")).toBeNull();
    const kept = await hubCall(reader.key, resolveUrl(repo.datasetId, "v3.0", "data/chunk-000/file-001.parquet"));
    expect(kept.status).toBe(302);
    // meta/info.json (no episode) and the data file of episodes 2 and 3; nothing for the refused file.
    const entries = await entriesOf(reader.keyId);
    expect(entries.map((e) => e.requested_scope.paths)).toEqual([
      ["meta/info.json"],
      ["data/chunk-000/file-001.parquet"],
    ]);
    expect(await disclosureEpisodes(entries[1]!.id)).toEqual([`${repo.datasetId}-000002`, `${repo.datasetId}-000003`]);
  });
});

describe("paging", () => {
  it("pages a tree by Link headers, every entry once, folders before what they hold", async () => {
    const episodes = randomEpisodes(1, 93).map((e) => ({ ...e, streams: ["s"] }));
    const count = TREE_PAGE * 2 + 37;
    const files = Array.from({ length: count }, (_, i) => ({
      path: `chunk-${String(i % 7).padStart(3, "0")}/${String(i).padStart(5, "0")}.bin`,
      episode_id: episodes[0]!.episode_id,
      stream: "s",
      size_bytes: 1,
      sha256: "c".repeat(64),
    }));
    const datasetId = await importTestDataset([{ version: "1.0.0", episodes, files }]);
    const reader = await hubCaller();
    await grant(reader.organizationId, datasetId, "1.0.0");
    const seen: { type: string; path: string }[] = [];
    let url: string | null = repoApi(datasetId, "/tree/main?recursive=True");
    let pages = 0;
    while (url) {
      const page = await hubCall(reader.key, url);
      expect(page.status, page.text).toBe(200);
      seen.push(...page.json);
      const link = page.headers.get("link");
      url = link
        ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!).pathname + new URL(/^<([^>]+)>/.exec(link)![1]!).search
        : null;
      pages++;
    }
    expect(pages).toBe(3);
    const filesSeen = seen.filter((e) => e.type === "file").map((e) => e.path);
    expect(filesSeen).toEqual(files.map((f) => f.path).sort());
    expect(seen.filter((e) => e.type === "directory").map((e) => e.path)).toEqual(
      Array.from({ length: 7 }, (_, i) => `chunk-${String(i).padStart(3, "0")}`),
    );
    // The root folder alone: its seven folders, no file.
    const root = await hubCall(reader.key, repoApi(datasetId, "/tree/main"));
    expect(root.json.map((e: { type: string; path: string }) => `${e.type} ${e.path}`)).toEqual(
      Array.from({ length: 7 }, (_, i) => `directory chunk-${String(i).padStart(3, "0")}`),
    );
    expect(root.headers.get("link")).toBeNull();
    // A folder named with %2F, as huggingface_hub's list_repo_tree sends it.
    const folder = await hubCall(reader.key, repoApi(datasetId, "/tree/main/chunk-003"));
    expect(folder.json.length).toBe(files.filter((f) => f.path.startsWith("chunk-003/")).length);
  });
});

describe("bad input is a clear 4xx with X-Error-Code, and nothing is disclosed", () => {
  const cases: [string, (id: string) => string, number, string][] = [
    ["another namespace", (id) => `/hub/datasets/someone/${id}/resolve/main/README.md`, 404, "RepoNotFound"],
    [
      "a name no dataset can have",
      () => "/hub/datasets/das/Not%20A%20Dataset/resolve/main/README.md",
      404,
      "RepoNotFound",
    ],
    [
      "a revision that is not a ref",
      (id) => `/hub/datasets/das/${id}/resolve/bad..rev/README.md`,
      400,
      "RevisionNotFound",
    ],
    [
      "a revision with a control character",
      (id) => `/hub/datasets/das/${id}/resolve/main%01/README.md`,
      400,
      "RevisionNotFound",
    ],
    [
      "an over-long revision",
      (id) => `/hub/datasets/das/${id}/resolve/${"v".repeat(300)}/README.md`,
      400,
      "RevisionNotFound",
    ],
    ["an unknown revision", (id) => `/hub/datasets/das/${id}/resolve/4.0.0/README.md`, 404, "RevisionNotFound"],
    // As huggingface_hub sends a path in one segment (quoted with safe=""): a dot segment in the URL
    // itself is resolved by every URL parser before any handler runs (and refused by the request
    // guard before Next, lib/http/request-guard.ts).
    ["a path with ..", (id) => `/hub/datasets/das/${id}/resolve/main/episodes%2F..%2FREADME.md`, 400, "EntryNotFound"],
    ["an absolute path", (id) => `/hub/datasets/das/${id}/resolve/main/%2Fetc%2Fpasswd`, 400, "EntryNotFound"],
    [
      "a path with a control character",
      (id) => `/hub/datasets/das/${id}/resolve/main/READ%0AME.md`,
      400,
      "EntryNotFound",
    ],
    [
      "an over-long path",
      (id) => `/hub/datasets/das/${id}/resolve/main/${"a".repeat(MAX_PATH_CHARACTERS + 1)}`,
      400,
      "EntryNotFound",
    ],
    ["a path that is not there", (id) => `/hub/datasets/das/${id}/resolve/main/nothing.bin`, 404, "EntryNotFound"],
  ];

  it.each(cases)("%s", async (_, url, status, code) => {
    const reader = await hubCaller();
    await grant(reader.organizationId, plain.datasetId, "1.0.0");
    for (const method of ["GET", "HEAD"] as const) {
      const answer = await hubCall(reader.key, url(plain.datasetId), { method });
      expect(answer.status, answer.text).toBe(status);
      expect(answer.headers.get("x-error-code")).toBe(code);
      expect(answer.headers.get("x-error-message")).toBeTruthy();
      expect(answer.headers.get("location")).toBeNull();
      expect(answer.json.error.request_id).toBe(answer.headers.get("x-request-id"));
    }
    expect(await entriesOf(reader.keyId)).toEqual([]);
  });

  it("a bad path in a tree or paths-info is the same refusal", async () => {
    const tree = await hubCall(caller.key, repoApi(plain.datasetId, "/tree/main/episodes%2F..%2F.."));
    expect(tree.status).toBe(400);
    expect(tree.headers.get("x-error-code")).toBe("EntryNotFound");
    const info = await hubCall(caller.key, repoApi(plain.datasetId, "/paths-info/main"), {
      method: "POST",
      form: [["paths", "../README.md"]],
    });
    expect(info.status).toBe(400);
    expect(info.headers.get("x-error-code")).toBe("EntryNotFound");
  });

  it("a missing key is a 401 the clients show as bad credentials", async () => {
    const answer = await hubCall(undefined, repoApi(plain.datasetId));
    expect(answer.status).toBe(401);
    expect(answer.headers.get("x-error-message")).toBe("Invalid credentials in Authorization header");
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });
});

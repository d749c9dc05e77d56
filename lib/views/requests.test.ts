import { describe, expect, it } from "vitest";
import { planRequests, requestedWith } from "./requests";

// How a plan's files are split into download requests (POST /api/v1/downloads): what das pull
// decided on the client until the service planned pulls (decision 0123), the same rules.

type File = { path: string; episode_id: string | null; episode_ids: string[]; stream: string | null };

const file = (p: string, episode: string | null, stream: string | null = "cam"): File => ({
  path: p,
  episode_id: episode,
  episode_ids: episode === null ? [] : [episode],
  stream,
});

describe("planning download requests", () => {
  const scope = { datasetId: "ds", version: "1.0.0" };
  // 6 episodes of 2 files (cam, joints) and one file of the whole version.
  const files = [
    file("README.md", null, null),
    ...["a", "b", "c", "d", "e", "f"].flatMap((e) => [file(`${e}/cam`, e), file(`${e}/joints`, e, "joints")]),
  ];

  it("asks for the whole version at once when it fits", () => {
    const { requests } = planRequests(scope, files, files, { limit: 13 });
    expect(requests).toEqual([{ body: { dataset_id: "ds", version: "1.0.0" }, files }]);
  });

  it("splits into requests that each resolve to at most `limit` files and together cover every file once", () => {
    const inScope = files.filter((f) => f.episode_id !== null);
    const { requests, unplannable } = planRequests(
      { ...scope, episodeIds: ["a", "b", "c", "d", "e", "f"] },
      inScope,
      inScope,
      { limit: 5 },
    );
    expect(unplannable).toEqual([]);
    // Whole episodes of 2 files each: 2 episodes per request.
    expect(requests.map((r) => r.body.episode_ids)).toEqual([
      ["a", "b"],
      ["c", "d"],
      ["e", "f"],
    ]);
    expect(requests.flatMap((r) => r.files)).toEqual(inScope);
  });

  it("sizes a request by everything its episodes resolve to, not only the missing files", () => {
    const inScope = files.filter((f) => f.episode_id !== null);
    const pending = inScope.filter((f) => f.stream === "cam"); // the joints files are on disk already
    const { requests } = planRequests({ ...scope, episodeIds: ["a", "b", "c", "d", "e", "f"] }, inScope, pending, {
      limit: 4,
    });
    expect(requests.map((r) => r.body.episode_ids)).toEqual([
      ["a", "b"],
      ["c", "d"],
      ["e", "f"],
    ]);
    expect(requests.flatMap((r) => r.files)).toEqual(pending);
  });

  it("keeps the user's filter and streams when one request covers the scope", () => {
    const inScope = files.filter((f) => f.stream === "cam");
    const { requests } = planRequests(
      { ...scope, filter: { outcome: "failure" }, streams: ["cam"] },
      inScope,
      inScope,
      { filterCovers: true, limit: 10 },
    );
    expect(requests.map((r) => r.body)).toEqual([
      { dataset_id: "ds", version: "1.0.0", streams: ["cam"], filter: { outcome: "failure" } },
    ]);
  });

  it("fetches a missing file of the whole version with a whole-version request, or reports that it cannot", () => {
    const readme = files[0]!;
    expect(planRequests(scope, files, [readme], { limit: 13 }).requests).toEqual([
      { body: { dataset_id: "ds", version: "1.0.0" }, files: [readme] },
    ]);
    const tooBig = planRequests(scope, files, [readme, files[1]!], { limit: 12 });
    expect(tooBig.unplannable.map((u) => u.file)).toEqual([readme]);
    expect(tooBig.unplannable[0]!.reason).toContain("13 files (more than 12)");
    expect(tooBig.requests).toEqual([
      { body: { dataset_id: "ds", version: "1.0.0", episode_ids: ["a"] }, files: [files[1]] },
    ]);
  });

  it("splits an episode larger than a request by stream", () => {
    const big = [file("x/1", "x"), file("x/2", "x"), file("x/3", "x", "joints")];
    const { requests } = planRequests({ ...scope, episodeIds: ["x"] }, big, big, { limit: 2 });
    expect(requests.map((r) => r.body)).toEqual([
      { dataset_id: "ds", version: "1.0.0", episode_ids: ["x"], streams: ["cam"] },
      { dataset_id: "ds", version: "1.0.0", episode_ids: ["x"], streams: ["joints"] },
    ]);
  });

  it("fetches a file shared by several chosen episodes once, with the first of them, and sizes requests by what they resolve to", () => {
    const shared = (p: string, episodes: string[], stream = "cam"): File => ({
      ...file(p, episodes.length === 1 ? episodes[0]! : null, stream),
      episode_ids: episodes,
    });
    const files = [
      shared("v0", ["a", "b"]),
      shared("d0", ["a", "b"], "joints"),
      shared("v1", ["c", "d"]),
      shared("d1", ["c"], "joints"),
      shared("d2", ["d"], "joints"),
    ];
    const chosen = new Set(["a", "b", "c", "d"]);
    const { requests, unplannable } = planRequests({ ...scope, episodeIds: [...chosen] }, files, files, {
      limit: 3,
      episodes: chosen,
    });
    expect(unplannable).toEqual([]);
    // a and b resolve to the same two files; c and d to v1, d1, d2 (three).
    expect(requests.map((r) => r.body.episode_ids)).toEqual([["a"], ["c", "d"]]);
    expect(requests.map((r) => r.files.map((f) => f.path))).toEqual([
      ["v0", "d0"],
      ["v1", "d1", "d2"],
    ]);
    // Only chosen episodes are named, even where a file holds others.
    const one = planRequests({ ...scope, episodeIds: ["b"] }, files.slice(0, 2), files.slice(0, 2), {
      limit: 10,
      episodes: new Set(["b"]),
    });
    expect(one.requests.map((r) => r.body)).toEqual([{ dataset_id: "ds", version: "1.0.0", episode_ids: ["b"] }]);
  });

  it("with includeVersionFiles, asks for the files of the whole version along with an episode request, whatever the streams", () => {
    const meta = file("meta/info.json", null, null);
    const inScope = [meta, ...files.slice(1, 5)]; // a and b, cam and joints
    const chosen = new Set(["a", "b"]);
    const whole = planRequests({ ...scope, episodeIds: ["a", "b"], includeVersionFiles: true }, inScope, inScope, {
      limit: 13,
      episodes: chosen,
    });
    expect(whole.requests.map((r) => r.body)).toEqual([
      { dataset_id: "ds", version: "1.0.0", episode_ids: ["a", "b"], include_version_files: true },
    ]);
    expect(whole.requests[0]!.files).toEqual([...files.slice(1, 5), meta]);
    // Only meta/ left to fetch: a request of the smallest chosen episode carries it.
    const rest = planRequests(
      { ...scope, episodeIds: ["a", "b"], streams: ["cam"], includeVersionFiles: true },
      inScope,
      [meta],
      { limit: 13, episodes: chosen },
    );
    expect(rest.requests).toEqual([
      {
        body: { dataset_id: "ds", version: "1.0.0", streams: ["cam"], episode_ids: ["a"], include_version_files: true },
        files: [meta],
      },
    ]);
  });

  it("names the episode a file is requested with: the first of its chosen ones, or of all when every episode is chosen", () => {
    const shared = { ...file("v0", null), episode_ids: ["a", "b"] };
    expect(requestedWith(shared, null)).toBe("a");
    expect(requestedWith(shared, new Set(["b"]))).toBe("b");
    expect(requestedWith(file("README.md", null, null), null)).toBeNull();
  });
});

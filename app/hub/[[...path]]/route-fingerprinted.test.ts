import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { grant, operatorCtx } from "@/lib/testing/fixtures";
import { ctxOf, userOfRole } from "@/lib/testing/admin";
import { disclosureEpisodes } from "@/lib/testing/downloads";
import {
  copiesOf,
  entriesOf,
  fingerprint,
  hubCall,
  hubCaller,
  leRobotRepo,
  licenceOf,
  removeRepoDir,
  sha256,
  type LeRobotRepo,
} from "@/lib/testing/hub-fixtures";
import { filesDigest } from "@/lib/disclosures/chain";
import { setFingerprinting } from "@/lib/fingerprints/admin";
import { traceFile } from "@/lib/fingerprints/trace";
import { copyToken, markKey } from "@/lib/marks/key";
import { trailerToken } from "@/lib/marks/trailer";
import { viewSha } from "@/lib/views/view";
import { withdrawEpisodes } from "@/lib/withdrawals/withdraw";

// The Hub view of a fingerprinted version (decision 0124): each licence is shown and handed its own
// copies, under a revision of its own, and the log records the sha256 of what left. Copies are made
// in-process here (lib/testing/hub-fixtures.ts, `fingerprint`), as the copy job makes them.

type Holder = Awaited<ReturnType<typeof hubCaller>> & { licenceId: string };
type Entry = { type: string; path: string; size: number; lfs?: { oid: string; size: number } };

let repo: LeRobotRepo;
const holders: Holder[] = [];
let late: Holder;
const VERSION = "1.0.0";
const repoApi = (tail = "") => `/hub/api/datasets/das/${repo.datasetId}${tail}`;
const resolveUrl = (revision: string, path: string) =>
  `/hub/datasets/das/${repo.datasetId}/resolve/${revision}/${path}`;
// Episodes 2 and 3: no withdrawal below touches it.
const DATA_FILE = "data/chunk-000/file-001.parquet";

async function holder(): Promise<Holder> {
  const caller = await hubCaller();
  await grant(caller.organizationId, repo.datasetId, VERSION);
  return { ...caller, licenceId: await licenceOf(caller.organizationId, repo.datasetId, VERSION) };
}

const shaOf = async (h: Holder) => (await hubCall(h.key, repoApi("/refs"))).json.branches[0].targetCommit as string;

async function unfingerprintedSha(withdrawn: string[]): Promise<string> {
  const [row] = await getDb().$client<{ content_sha256: string }[]>`
    select content_sha256 from dataset_versions where dataset_id = ${repo.datasetId} and version = ${VERSION}`;
  return viewSha({ datasetId: repo.datasetId, version: VERSION, contentSha256: row!.content_sha256, withdrawn });
}

beforeAll(async () => {
  const first = await hubCaller();
  repo = await leRobotRepo(first.organizationId, { version: "v3.0", episodes: 6, episodesPerFile: 2 });
  holders.push({ ...first, licenceId: await licenceOf(first.organizationId, repo.datasetId, VERSION) });
  holders.push(await holder());
  await fingerprint(repo.datasetId, VERSION);
  // Granted once the version is fingerprinted: its copies are enqueued, and not made here.
  late = await holder();
}, 240_000);

afterAll(() => removeRepoDir(repo));

describe("a fingerprinted version on the Hub", () => {
  it("lists each licence's own copies (lfs.oid and size) in the tree, paths-info and info, under a sha of its own", async () => {
    const shas = new Set<string>();
    for (const h of holders) {
      const copies = await copiesOf(h.licenceId);
      const expected = Object.fromEntries([...copies].map(([p, c]) => [p, [c.sha256, c.size_bytes]]));
      const tree = await hubCall(h.key, repoApi("/tree/main?recursive=true"));
      expect(tree.status, tree.text).toBe(200);
      const files = (tree.json as Entry[]).filter((e) => e.type === "file");
      expect(Object.fromEntries(files.map((e) => [e.path, [e.lfs!.oid, e.size]]))).toEqual(expected);
      expect(files.every((e) => e.lfs!.size === e.size)).toBe(true);
      const paths = await hubCall(h.key, repoApi("/paths-info/main"), {
        method: "POST",
        form: [...copies.keys()].map((p) => ["paths", p]),
      });
      expect(Object.fromEntries((paths.json as Entry[]).map((e) => [e.path, [e.lfs!.oid, e.size]]))).toEqual(expected);
      const info = await hubCall(h.key, repoApi(`/revision/${VERSION}?blobs=true`));
      const siblings = info.json.siblings as { rfilename: string; size: number; lfs: { sha256: string } }[];
      expect(Object.fromEntries(siblings.map((s) => [s.rfilename, [s.lfs.sha256, s.size]]))).toEqual(expected);
      const head = await hubCall(h.key, resolveUrl("main", DATA_FILE), { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers.get("etag")).toBe(`"${copies.get(DATA_FILE)!.sha256}"`);
      expect(head.headers.get("x-linked-etag")).toBe(`"${copies.get(DATA_FILE)!.sha256}"`);
      expect(head.headers.get("x-linked-size")).toBe(String(copies.get(DATA_FILE)!.size_bytes));
      const sha = await shaOf(h);
      expect(info.json.sha).toBe(sha);
      expect(head.headers.get("x-repo-commit")).toBe(sha);
      shas.add(sha);
    }
    // A sha per licence, neither of them the version's shared one.
    expect(shas.size).toBe(2);
    expect(shas.has(await unfingerprintedSha([]))).toBe(false);
    // One licence's revision is not another's to read.
    const other = await hubCall(holders[1]!.key, repoApi(`/revision/${await shaOf(holders[0]!)}`));
    expect(other.status).toBe(404);
    expect(other.headers.get("x-error-code")).toBe("RevisionNotFound");
    expect(await entriesOf(holders[0]!.keyId)).toEqual([]);
  });

  it("redirects a GET to the licence's own copy and records its sha256; a retry gets the same copy's URL", async () => {
    const digests = new Set<string>();
    for (const h of holders) {
      const copy = (await copiesOf(h.licenceId)).get(DATA_FILE)!;
      const first = await hubCall(h.key, resolveUrl("main", DATA_FILE));
      expect(first.status, first.text).toBe(302);
      expect(first.headers.get("x-linked-etag")).toBe(`"${copy.sha256}"`);
      const location = first.headers.get("location")!;
      expect(new URL(location).pathname).toContain(`/copies/${h.licenceId}/`);
      const bytes = Buffer.from(await (await fetch(location)).arrayBuffer());
      expect(sha256(bytes)).toBe(copy.sha256);
      expect(bytes.length).toBe(copy.size_bytes);
      const again = await hubCall(h.key, resolveUrl(VERSION, DATA_FILE));
      expect(again.headers.get("location")).toBe(location);
      const entries = await entriesOf(h.keyId);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        channel: "hub",
        requested_scope: { paths: [DATA_FILE] },
        file_count: 1,
        total_bytes: copy.size_bytes,
        files_sha256: filesDigest([{ path: DATA_FILE, sha256: copy.sha256 }]),
      });
      expect(await disclosureEpisodes(entries[0]!.id)).toEqual([
        `${repo.datasetId}-000002`,
        `${repo.datasetId}-000003`,
      ]);
      const recorded = await getDb().$client`
        select path, sha256 from disclosure_files where disclosure_id = ${entries[0]!.id}`;
      expect([...recorded]).toEqual([{ path: DATA_FILE, sha256: copy.sha256 }]);
      digests.add(copy.sha256);
    }
    expect(digests.size).toBe(2);
  });

  it("answers 503 with Retry-After for any size or sha256 while a licence's copies are being made, and discloses nothing", async () => {
    for (const [url, options] of [
      [resolveUrl("main", DATA_FILE), { method: "HEAD" }],
      [resolveUrl("main", DATA_FILE), {}],
      [repoApi("/tree/main?recursive=true"), {}],
      [repoApi("/paths-info/main"), { method: "POST", form: [["paths", DATA_FILE]] }],
      [repoApi("/revision/main?blobs=true"), {}],
    ] as const) {
      const answer = await hubCall(late.key, url, options as Parameters<typeof hubCall>[2]);
      expect(answer.status, url).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("30");
      expect(answer.headers.get("location")).toBeNull();
    }
    // The refs and the info without blobs name paths and the licence's own sha, no bytes: they
    // answer, so a client goes on to each file and retries its 503 on its own.
    const refs = await hubCall(late.key, repoApi("/refs"));
    expect(refs.status).toBe(200);
    const info = await hubCall(late.key, repoApi());
    expect(info.status, info.text).toBe(200);
    expect(info.json.sha).toBe(refs.json.branches[0].targetCommit);
    expect(info.json.siblings.map((s: { rfilename: string }) => s.rfilename).sort()).toEqual(
      [...(await copiesOf(holders[0]!.licenceId)).keys()].sort(),
    );
    expect(await entriesOf(late.keyId)).toEqual([]);
  });

  it("renders meta/ after a withdrawal for each licence, carrying its token; trace names the licence", async () => {
    await withdrawEpisodes(operatorCtx(), { episodeIds: [`${repo.datasetId}-000001`], reason: "hub copies test" });
    const rendered: { json: unknown; sha: string }[] = [];
    for (const h of holders) {
      const tree = await hubCall(h.key, repoApi("/tree/main/meta?recursive=true"));
      expect(tree.status, tree.text).toBe(200);
      const info = (tree.json as Entry[]).find((e) => e.path === "meta/info.json")!;
      const get = await hubCall(h.key, resolveUrl("main", "meta/info.json"));
      expect(get.status, get.text).toBe(302);
      const bytes = Buffer.from(await (await fetch(get.headers.get("location")!)).arrayBuffer());
      expect(sha256(bytes)).toBe(info.lfs!.oid);
      const json = JSON.parse(bytes.toString("utf8"));
      expect(json.total_episodes).toBe(4);
      const token = copyToken(markKey(process.env.APP_SECRET!, h.licenceId), "meta/info.json");
      expect(trailerToken(bytes)?.toString("hex")).toBe(token.toString("hex"));
      // Rendered for this view, not one of the licence's stored copies.
      expect((await copiesOf(h.licenceId)).get("meta/info.json")!.sha256).not.toBe(info.lfs!.oid);
      const entry = (await entriesOf(h.keyId)).at(-1)!;
      expect(entry).toMatchObject({
        requested_scope: { paths: ["meta/info.json"] },
        files_sha256: filesDigest([{ path: "meta/info.json", sha256: info.lfs!.oid }]),
      });
      const traced = await traceFile(ctxOf(await userOfRole("reviewer")), { name: "info.json", bytes });
      expect(traced.verdict).toBe("copy");
      expect(traced.licences.map((l) => l.licence_id)).toEqual([h.licenceId]);
      expect(traced.licences[0]!.deliveries.map((d) => d.id)).toEqual([entry.id]);
      rendered.push({ json, sha: info.lfs!.oid });
    }
    expect(rendered[0]!.json).toEqual(rendered[1]!.json);
    expect(rendered[0]!.sha).not.toBe(rendered[1]!.sha);
  });

  it("hands out the originals under the shared sha once fingerprinting is off, never on a copy's earlier entry", async () => {
    const h = holders[0]!;
    const before = (await entriesOf(h.keyId)).length;
    await setFingerprinting(operatorCtx(), { datasetId: repo.datasetId, version: VERSION, on: false });
    const shared = await unfingerprintedSha([`${repo.datasetId}-000001`]);
    expect(await shaOf(h)).toBe(shared);
    const [original] = await getDb().$client<{ sha256: string }[]>`
      select f.sha256 from files f join dataset_versions v on v.id = f.version_id
      where v.dataset_id = ${repo.datasetId} and v.version = ${VERSION} and f.path = ${DATA_FILE}`;
    const get = await hubCall(h.key, resolveUrl("main", DATA_FILE));
    expect(get.status).toBe(302);
    expect(get.headers.get("x-linked-etag")).toBe(`"${original!.sha256}"`);
    expect(new URL(get.headers.get("location")!).pathname).not.toContain("/copies/");
    // The copy's entry is still valid, but it delivered other bytes: the original is a new entry.
    const entries = await entriesOf(h.keyId);
    expect(entries).toHaveLength(before + 1);
    expect(entries.at(-1)).toMatchObject({ requested_scope: { paths: [DATA_FILE] }, files_sha256: null });
  });
});

import { createHash } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { openParquet, rewriteParquet } from "../lerobot/parquet";
import type { Plan, PlannedFile } from "../views/plan";
import * as api from "../../app/api/[[...path]]/route";
import * as hub from "../../app/hub/[[...path]]/route";
import { randomIp } from "./http";

/**
 * A client that carries out a plan (POST /api/v1/datasets/{id}/versions/{version}/plan) and
 * decides nothing: every download the plan lists, every file fetched from where the plan says,
 * checked against its size and SHA-256, and written where the plan says, transformed as it says.
 * What `das pull` and the Python client are to become; here it shows that the plan is enough.
 */
export async function carryOutPlan(plan: Plan, dir: string, key: string): Promise<{ downloads: string[] }> {
  const urls: Map<string, string>[] = [];
  const downloads: string[] = [];
  for (const body of plan.downloads) {
    const answer = await inProcess(key, "/api/v1/downloads", { method: "POST", body: JSON.stringify(body) });
    if (answer.status !== 201) throw new Error(`download refused: ${answer.status} ${await answer.text()}`);
    const document = (await answer.json()) as { download_id: string; files: { path: string; url: string }[] };
    downloads.push(document.download_id);
    urls.push(new Map(document.files.map((f) => [f.path, f.url])));
  }
  for (const file of plan.files) {
    const url = "download" in file.get ? urls[file.get.download]!.get(file.path) : file.get.url;
    if (!url) throw new Error(`${file.path}: its download did not deliver it`);
    const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
    if (bytes.length !== file.size_bytes || sha256(bytes) !== file.sha256)
      throw new Error(`${file.path}: not the bytes the plan names`);
    const target = path.join(dir, ...file.path.split("/"));
    await mkdir(path.dirname(target), { recursive: true });
    if (file.transform) await writeTransformed(bytes, target, file);
    else await writeFile(target, bytes);
  }
  return { downloads };
}

/** A v3.0 data file as the plan's transform says: rows of dropped episodes left out, the others' episode_index and index moved. */
async function writeTransformed(bytes: Buffer, target: string, file: PlannedFile): Promise<void> {
  const transform = file.transform!;
  const fetched = `${target}.fetched`;
  await writeFile(fetched, bytes);
  try {
    const byEpisode = new Map(transform.episodes.map((e) => [e.episode_index, e]));
    const dropped = new Set(transform.dropped_episode_indices);
    await rewriteParquet(await openParquet(fetched), target, (rows) =>
      rows.map((row) => {
        const episode = Number(row.episode_index);
        if (dropped.has(episode)) return null;
        const e = byEpisode.get(episode)!;
        const index = e.new_index_from + (Number(row.index) - e.index_from);
        return { ...row, episode_index: like(row.episode_index, e.new_episode_index), index: like(row.index, index) };
      }),
    );
  } finally {
    await rm(fetched, { force: true });
  }
}

const like = (original: unknown, value: number) => (typeof original === "bigint" ? BigInt(value) : value);
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** The service's own routes in-process, for a client given this as its `fetch`; other URLs (the store's) over HTTP. */
export function inProcessFetch(): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (!url.pathname.startsWith("/api/") && !url.pathname.startsWith("/hub/")) return fetch(request);
    const headers = new Headers(request.headers);
    headers.set("x-forwarded-for", randomIp());
    const routed = new Request(url, {
      method: request.method,
      headers,
      body: request.body,
      duplex: "half",
    } as RequestInit);
    const routes = url.pathname.startsWith("/hub/") ? hub : api;
    const handler = request.method === "POST" ? routes.POST : routes.GET;
    return handler(routed, { params: Promise.resolve({}) });
  }) as typeof fetch;
}

function inProcess(key: string, pathname: string, init: { method: string; body?: string }): Promise<Response> {
  return inProcessFetch()(`http://localhost${pathname}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  });
}

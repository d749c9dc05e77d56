import type { ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { spawnCli, type CliRun } from "./cli";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { getDb, sqlOf } from "../db/client";
import type { EpisodeLine, FileLine } from "../catalog/import/records";
import { s3Client, putObject } from "../storage/client";
import { objectKey, storeLocation } from "../storage/config";
import { createTestKey, createTestOrg, grant, importTestDataset, randomEpisodes } from "./fixtures";

/** A licensed version whose files really are in the run's object store, for `das pull` tests. */
export type StoredVersion = {
  datasetId: string;
  version: string;
  episodes: EpisodeLine[];
  files: (FileLine & { episode_id: string | null; stream: string | null })[];
  content: Map<string, Buffer>;
  key: string;
  keyId: string;
};

export async function storedVersion(options: {
  episodes: number;
  seed: number;
  fileBytes: [number, number];
  streams?: string[];
}): Promise<StoredVersion> {
  const streams = options.streams ?? ["cam", "joints"];
  const episodes = randomEpisodes(options.episodes, options.seed).map((e) => ({ ...e, streams }));
  const content = new Map<string, Buffer>();
  const files: StoredVersion["files"] = [];
  const add = (p: string, episodeId: string | null, stream: string | null) => {
    const [min, max] = options.fileBytes;
    const body = randomBytes(min + Math.floor(Math.random() * (max - min + 1)));
    content.set(p, body);
    files.push({
      path: p,
      episode_id: episodeId,
      stream,
      size_bytes: body.length,
      sha256: createHash("sha256").update(body).digest("hex"),
    });
  };
  add("README.md", null, null);
  for (const e of episodes) for (const s of streams) add(`episodes/${e.episode_id}/${s}.bin`, e.episode_id, s);
  const datasetId = await importTestDataset([{ version: "1.0.0", episodes, files }]);
  const client = s3Client(storeLocation());
  const { bucket } = storeLocation();
  await Promise.all(
    files.map((f) => putObject(client, bucket, objectKey(datasetId, "1.0.0", f.path), content.get(f.path)!)),
  );
  client.destroy();
  const org = await createTestOrg();
  await grant(org.id, datasetId, "1.0.0");
  const key = await createTestKey(org.id);
  return { datasetId, version: "1.0.0", episodes, files, content, key: key.secret, keyId: key.id };
}

/** The disclosure-log entries made with a key, oldest first. */
export async function disclosuresOf(keyId: string) {
  return sqlOf(getDb())<
    {
      id: string;
      file_count: number;
      requested_scope: { episode_ids?: string[]; filter?: object; streams?: string[] };
    }[]
  >`
    select id, file_count, requested_scope from disclosures where api_key_id = ${keyId} order by seq`;
}

/** Every file under `dir`, relative, with `/` separators: what was pulled, without the provenance das pull writes beside it. */
export function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[])
    .filter((d) => d.isFile())
    .map((d) => path.relative(dir, path.join(d.parentPath, d.name)).split(path.sep).join("/"))
    .filter((relative) => relative !== "das-provenance.json")
    .sort();
}

export const sha256Of = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

export type DasRun = CliRun;

/** Starts the `das` binary as a user would run it. */
export function spawnDas(args: string[], env: Record<string, string>): { child: ChildProcess; done: Promise<DasRun> } {
  return spawnCli("das", args, { env: { ...process.env, ...env } });
}

export const das = (args: string[], env: Record<string, string>) => spawnDas(args, env).done;

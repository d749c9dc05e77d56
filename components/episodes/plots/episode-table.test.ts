import http from "node:http";
import type { AddressInfo } from "node:net";
import { parquetMetadata } from "hyparquet";
import { parquetWriteBuffer } from "hyparquet-writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEpisodeTable } from "./episode-table";
import { markKey } from "@/lib/marks/key";
import { markParquet } from "@/lib/marks/parquet-mark";
import { steps32 } from "@/lib/marks/ulp";

/**
 * The page's reader of an episode's data over real HTTP with Range support, on a LeRobot v3.0-like
 * file of several episodes (a row group each, as LeRobot's writer leaves them), and on files that
 * are not what they should be.
 */
const EPISODES = 5;
const FRAMES = 300;
const DIMENSIONS = 8;

const list = (name: string) => [
  { name, repetition_type: "OPTIONAL" as const, num_children: 1, converted_type: "LIST" as const },
  { name: "list", repetition_type: "REPEATED" as const, num_children: 1 },
  { name: "element", type: "FLOAT" as const, repetition_type: "OPTIONAL" as const },
];
const rows = EPISODES * FRAMES;
const value = (e: number, f: number, d: number) => Math.fround(e * 100 + f / 10 + d);
const table = Buffer.from(
  parquetWriteBuffer({
    schema: [
      { name: "schema", num_children: 6 },
      ...list("observation.state"),
      { name: "gripper_force", type: "DOUBLE", repetition_type: "OPTIONAL" },
      { name: "timestamp", type: "FLOAT", repetition_type: "OPTIONAL" },
      { name: "episode_index", type: "INT64", repetition_type: "OPTIONAL" },
      { name: "index", type: "INT64", repetition_type: "OPTIONAL" },
      { name: "note", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" },
    ],
    columnData: [
      {
        name: "observation.state",
        data: Array.from({ length: rows }, (_, r) =>
          Array.from({ length: DIMENSIONS }, (_, d) => value(Math.floor(r / FRAMES), r % FRAMES, d)),
        ),
      },
      { name: "gripper_force", data: Array.from({ length: rows }, (_, r) => r % 7) },
      { name: "timestamp", data: Array.from({ length: rows }, (_, r) => Math.fround((r % FRAMES) / 30)) },
      { name: "episode_index", data: Array.from({ length: rows }, (_, r) => BigInt(Math.floor(r / FRAMES))) },
      { name: "index", data: Array.from({ length: rows }, (_, r) => BigInt(r)) },
      { name: "note", data: Array.from({ length: rows }, () => "not a number") },
    ],
    rowGroupSize: FRAMES,
  }),
);
const groups = parquetMetadata(table.buffer.slice(table.byteOffset, table.byteOffset + table.length)).row_groups.map(
  (group) => {
    const starts = group.columns.map((c) =>
      Number(c.meta_data!.dictionary_page_offset ?? c.meta_data!.data_page_offset),
    );
    const ends = group.columns.map((c, i) => starts[i]! + Number(c.meta_data!.total_compressed_size));
    return { start: Math.min(...starts), end: Math.max(...ends) };
  },
);

// The same rows as LeRobot keys them (with frame_index), and a licence's marked copy of them
// (lib/marks): what the page reads for a fingerprinted version.
const keyed = Buffer.from(
  parquetWriteBuffer({
    schema: [
      { name: "schema", num_children: 4 },
      ...list("observation.state"),
      { name: "timestamp", type: "FLOAT", repetition_type: "OPTIONAL" },
      { name: "frame_index", type: "INT64", repetition_type: "OPTIONAL" },
      { name: "episode_index", type: "INT64", repetition_type: "OPTIONAL" },
    ],
    columnData: [
      {
        name: "observation.state",
        data: Array.from({ length: rows }, (_, r) =>
          Array.from({ length: DIMENSIONS }, (_, d) => value(Math.floor(r / FRAMES), r % FRAMES, d) + 0.25),
        ),
      },
      { name: "timestamp", data: Array.from({ length: rows }, (_, r) => Math.fround((r % FRAMES) / 30)) },
      { name: "frame_index", data: Array.from({ length: rows }, (_, r) => BigInt(r % FRAMES)) },
      { name: "episode_index", data: Array.from({ length: rows }, (_, r) => BigInt(Math.floor(r / FRAMES))) },
    ],
    rowGroupSize: FRAMES,
  }),
);

const files: Record<string, Buffer> = {
  "/table.parquet": table,
  "/not-parquet.parquet": Buffer.from("This is not a parquet file at all, only text.\n".repeat(20)),
  "/keyed.parquet": keyed,
};
let asked: { path: string; start: number; end: number }[] = [];
let origin = "";
const server = http.createServer((request, response) => {
  const path = new URL(request.url!, "http://x").pathname;
  const file = files[path];
  if (!file) return response.writeHead(404).end();
  const match = /^bytes=(\d+)-(\d+)$/.exec(request.headers.range ?? "");
  if (!match) {
    asked.push({ path, start: 0, end: file.length });
    return response.writeHead(200).end(file);
  }
  const start = Number(match[1]);
  const end = Math.min(Number(match[2]) + 1, file.length);
  asked.push({ path, start, end });
  response
    .writeHead(206, { "Content-Range": `bytes ${start}-${end - 1}/${file.length}` })
    .end(file.subarray(start, end));
});
beforeAll(async () => {
  const copy = await markParquet(new Uint8Array(keyed), markKey("a test secret", "lic_plots"), "0".repeat(32));
  files["/marked.parquet"] = Buffer.from(copy.bytes);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

const read = (path: string, episodeIndex: number | null, size = files[path]?.length ?? 1000) =>
  readEpisodeTable({
    url: `${origin}${path}`,
    size,
    episodeIndex,
    names: { "observation.state": Array.from({ length: DIMENSIONS }, (_, d) => `joint_${d}`) },
    duration: 10,
  });

describe("reading an episode's data in the browser", () => {
  it("reads only the episode's rows and numeric columns, named, on the episode's own clock", async () => {
    const data = await read("/table.parquet", 3);
    expect(data.time.length).toBe(FRAMES);
    expect(data.time[0]).toBe(0);
    expect(data.time[30]).toBeCloseTo(1, 5);
    expect(data.features.map((f) => f.key)).toEqual(["observation.state", "gripper_force"]);
    const [state, force] = data.features;
    expect(state!.names).toEqual(Array.from({ length: DIMENSIONS }, (_, d) => `joint_${d}`));
    expect(state!.dimensions[2]![10]).toBeCloseTo(value(3, 10, 2), 4);
    expect(force!.names).toEqual(["gripper_force"]);
    expect(force!.dimensions[0]![1]).toBe((3 * FRAMES + 1) % 7);
  });

  it("fetches the footer and the episode's row group only, by range requests, never the others", async () => {
    asked = [];
    await read("/table.parquet", 1);
    expect(asked.length).toBeGreaterThan(0);
    const mine = groups[1]!;
    for (const range of asked) {
      expect(range.end - range.start).toBeLessThan(table.length);
      groups.forEach((other, i) => {
        if (i !== 1)
          expect(range.end <= other.start || range.start >= other.end, `${JSON.stringify(range)} vs group ${i}`).toBe(
            true,
          );
      });
    }
    // And the episode's own pages were among them.
    expect(asked.some((r) => r.start < mine.end && r.end > mine.start)).toBe(true);
    const fetched = asked.reduce((sum, r) => sum + r.end - r.start, 0);
    expect(fetched).toBeLessThan(table.length / 2);
  });

  it("plots a licence's marked copy: the episode's rows, each value within one float step of the original's", async () => {
    const [original, marked] = [await read("/keyed.parquet", 3), await read("/marked.parquet", 3)];
    expect(marked.time).toEqual(original.time);
    const a = original.features[0]!.dimensions;
    const b = marked.features[0]!.dimensions;
    let moved = 0;
    for (let d = 0; d < DIMENSIONS; d++)
      for (let i = 0; i < FRAMES; i++) {
        const steps = steps32(a[d]![i]!, b[d]![i]!, 1_000_000)!;
        expect(Math.abs(steps)).toBeLessThanOrEqual(1);
        if (steps) moved++;
      }
    expect(moved).toBeGreaterThan((DIMENSIONS * FRAMES) / 8);
  });

  it("names what is wrong with a file that is missing, not parquet, or holds none of the episode", async () => {
    await expect(read("/missing.parquet", 0)).rejects.toThrow("could not be fetched (it is missing from the store)");
    await expect(read("/not-parquet.parquet", 0)).rejects.toThrow("not a parquet file");
    await expect(read("/table.parquet", 99)).rejects.toThrow("holds no rows of this episode");
  });

  it("names the store's CORS as the likely cause when a fetch fails without an answer", async () => {
    // What a browser's fetch does when the store does not allow the portal's origin: it rejects
    // with a TypeError and no status, as Node's does for a port where nothing listens.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const error = await readEpisodeTable({
      url: `http://127.0.0.1:${port}/table.parquet`,
      size: table.length,
      episodeIndex: 0,
      names: {},
      duration: 10,
    }).catch((e) => e);
    expect(error.message).toContain("could not be fetched");
    expect(error.message).toContain("no CORS rule that lets this portal read it");
    expect(error.message).toContain("das-admin store check");
  });

  it("numbers the dimensions of a feature info.json does not name, and takes every row without an episode index", async () => {
    const data = await readEpisodeTable({
      url: `${origin}/table.parquet`,
      size: table.length,
      episodeIndex: null,
      names: {},
      duration: 10,
    });
    expect(data.time.length).toBe(rows);
    expect(data.features[0]!.names.slice(0, 2)).toEqual(["observation.state[0]", "observation.state[1]"]);
  });
});

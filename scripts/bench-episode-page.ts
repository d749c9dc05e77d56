// npm run bench:episode -- [--frames 10000] [--dimensions 40] [--seconds 5] [--runs 3]
// The episode page's plots in Debian's Chromium: a data table of N frames x D dimensions (one
// feature, float32 lists, LeRobot's columns) served with Range support, read by the page's own
// reader (hyparquet by range requests) and drawn by the page's own plot (uPlot), with the
// playback engine's clock driving the cursor from a stand-in video. Prints the time from the last
// byte arriving to the plot drawn (target: within 1 s for 10,000 x 40) and, over a stretch of
// playback, the animation frames longer than 1.5 of the display's frame (dropped); and, in a page
// of its own, uPlot alone drawing the same arrays into the same width: the page's drawing over
// that is its ratio (drawing_to_uplot_ratio, the median over the runs). Then one JSON line (the
// last line of stdout).
import http from "node:http";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { parquetWriteBuffer } from "hyparquet-writer";
import { chromium } from "@playwright/test";

const { values } = parseArgs({
  options: {
    frames: { type: "string", default: "10000" },
    dimensions: { type: "string", default: "40" },
    seconds: { type: "string", default: "5" },
    runs: { type: "string", default: "3" },
  },
});
const FRAMES = Number(values.frames);
const DIMENSIONS = Number(values.dimensions);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const work = mkdtempSync(path.join(os.tmpdir(), "das-bench-episode-"));

/** LeRobot's frame columns at 30 fps: a float32 list of D per frame, the timestamp and the episode's index. */
function table(): Buffer {
  const state = Array.from({ length: FRAMES }, (_, f) =>
    Array.from({ length: DIMENSIONS }, (_, d) => Math.fround(Math.sin(f / 50 + d) * (1 + d / 10))),
  );
  const list = (name: string) => [
    { name, repetition_type: "OPTIONAL" as const, num_children: 1, converted_type: "LIST" as const },
    { name: "list", repetition_type: "REPEATED" as const, num_children: 1 },
    { name: "element", type: "FLOAT" as const, repetition_type: "OPTIONAL" as const },
  ];
  const bytes = parquetWriteBuffer({
    schema: [
      { name: "schema", num_children: 3 },
      ...list("observation.state"),
      { name: "timestamp", type: "FLOAT", repetition_type: "OPTIONAL" },
      { name: "episode_index", type: "INT64", repetition_type: "OPTIONAL" },
    ],
    columnData: [
      { name: "observation.state", data: state },
      { name: "timestamp", data: Array.from({ length: FRAMES }, (_, f) => Math.fround(f / 30)) },
      { name: "episode_index", data: Array.from({ length: FRAMES }, () => 0n) },
    ],
  });
  return Buffer.from(bytes);
}

const ENTRY = `
import { createRoot } from "react-dom/client";
import { createElement } from "react";
import { readEpisodeTable } from "@/components/episodes/plots/episode-table";
import { FeaturePlot } from "@/components/episodes/plots/feature-plot";
import { PlaybackEngine } from "@/components/episodes/player/engine";
import uPlot from "uplot";

const SIZE = Number(new URLSearchParams(location.search).get("size"));
// The limit: uPlot alone, given the same arrays the page's reader made, drawing one line per
// dimension into the same width, with nothing of the page around it; timed to the next frame, as
// the page's drawing is.
window.benchAlone = async () => {
  const data = await readEpisodeTable({ url: "/data.parquet", size: SIZE, episodeIndex: 0, names: {}, duration: 0 });
  const host = document.getElementById("root");
  const feature = data.features[0];
  const started = performance.now();
  new uPlot({ width: Math.max(200, host.clientWidth), height: 180, legend: { show: false }, scales: { x: { time: false } },
    series: [{}, ...feature.names.map(() => ({ stroke: "#2563eb", width: 1, points: { show: false } }))] },
    [data.time, ...feature.dimensions], host);
  const drawn = await new Promise((resolve) => requestAnimationFrame(() => resolve(performance.now())));
  return { drawnMs: drawn - started };
};
window.bench = async (seconds) => {
  let lastByte = 0;
  const realFetch = window.fetch;
  window.fetch = async (...args) => {
    const answer = await realFetch(...args);
    const body = await answer.arrayBuffer();
    lastByte = performance.now();
    return new Response(body, { status: answer.status, headers: answer.headers });
  };
  const started = performance.now();
  const data = await readEpisodeTable({ url: "/data.parquet", size: SIZE, episodeIndex: 0, names: {}, duration: 0 });
  const read = performance.now();
  const length = data.time[data.time.length - 1];
  // A stand-in video: its clock runs on the wall clock from when it is played.
  let playedAt = 0;
  const video = { currentTime: 0, playbackRate: 1, readyState: 4, paused: true, seeking: false, ended: false, error: null,
    play() { playedAt = performance.now(); this.paused = false; return Promise.resolve(); }, pause() { this.paused = true; } };
  const engine = new PlaybackEngine("front", length);
  engine.setStreams([{ stream: "front", start_s: 0, end_s: length }]);
  engine.attach("front", video);
  const host = document.getElementById("root");
  const drawn = new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      if (host.querySelector("canvas")) { observer.disconnect(); requestAnimationFrame(() => resolve(performance.now())); }
    });
    observer.observe(host, { childList: true, subtree: true });
  });
  const spans = [{ annotation_id: "a", label: "reach", start_s: 0, end_s: length / 3, attributes: {} },
    { annotation_id: "b", label: "grasp", start_s: length / 3, end_s: length, attributes: {} }];
  createRoot(host).render(createElement(FeaturePlot, { feature: data.features[0], time: data.time, spans, engine, length }));
  const plotted = await drawn;
  // Playback: the engine's tick every animation frame, as the player runs it; the cursor follows.
  engine.play();
  const gaps = [];
  await new Promise((resolve) => {
    let last = performance.now();
    const end = last + seconds * 1000;
    const tick = (now) => {
      video.currentTime = (now - playedAt) / 1000;
      engine.tick();
      gaps.push(now - last);
      last = now;
      if (now < end) requestAnimationFrame(tick); else resolve();
    };
    requestAnimationFrame(tick);
  });
  const head = Number(host.querySelector("[data-playhead]").dataset.time);
  return { fetchAndParseMs: read - started, lastByteToDrawnMs: plotted - lastByte, readToDrawnMs: plotted - read,
    frames: data.time.length, dimensions: data.features[0].dimensions.length, gaps, playhead: head, clock: video.currentTime };
};
`;

async function main() {
  const bytes = table();
  writeFileSync(path.join(work, "entry.ts"), ENTRY);
  await build({
    entryPoints: [path.join(work, "entry.ts")],
    bundle: true,
    minify: true,
    format: "esm",
    outdir: work,
    alias: { "@": root },
    nodePaths: [path.join(root, "node_modules")],
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "error",
  });
  const files: Record<string, [string, Buffer]> = {
    "/": [
      "text/html",
      Buffer.from(
        '<!doctype html><html><head><link rel="stylesheet" href="/entry.css"></head><body style="width:1200px"><div id="root"></div><script type="module" src="/entry.js"></script></body></html>',
      ),
    ],
    "/entry.js": ["text/javascript", readFileSync(path.join(work, "entry.js"))],
    "/entry.css": ["text/css", readFileSync(path.join(work, "entry.css"))],
    "/data.parquet": ["application/vnd.apache.parquet", bytes],
  };
  const ranges: string[] = [];
  const server = http.createServer((request, response) => {
    const file = files[new URL(request.url!, "http://x").pathname];
    if (!file) return response.writeHead(404).end();
    const match = /bytes=(\d+)-(\d*)/.exec(request.headers.range ?? "");
    if (!match) return response.writeHead(200, { "Content-Type": file[0] }).end(file[1]);
    ranges.push(request.headers.range!);
    const start = Number(match[1]);
    const end = match[2] ? Number(match[2]) + 1 : file[1].length;
    response
      .writeHead(206, { "Content-Type": file[0], "Content-Range": `bytes ${start}-${end - 1}/${file[1].length}` })
      .end(file[1].subarray(start, end));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu"],
  });
  const results: Record<string, number>[] = [];
  try {
    for (let run = 0; run < Number(values.runs); run++) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`http://127.0.0.1:${port}/?size=${bytes.length}`);
      await page.waitForFunction(() => "bench" in window);
      const result = await page.evaluate(
        (seconds) => (window as unknown as { bench: (s: number) => Promise<Record<string, unknown>> }).bench(seconds),
        Number(values.seconds),
      );
      const gaps = (result.gaps as number[]).slice(1).sort((a, b) => a - b);
      const frame = gaps[Math.floor(gaps.length / 2)]!;
      const dropped = gaps.filter((g) => g > frame * 1.5).length;
      results.push({
        run: run + 1,
        fetch_and_parse_ms: Math.round(result.fetchAndParseMs as number),
        last_byte_to_drawn_ms: Math.round(result.lastByteToDrawnMs as number),
        read_to_drawn_ms: Math.round(result.readToDrawnMs as number),
        animation_frames: gaps.length,
        median_frame_ms: Number(frame.toFixed(2)),
        dropped_frames: dropped,
        worst_frame_ms: Number(gaps.at(-1)!.toFixed(1)),
        cursor_lag_s: Number(Math.abs((result.clock as number) - (result.playhead as number)).toFixed(3)),
      });
      await page.close();
      // uPlot alone, in a fresh page of its own (nothing warmed up by the page's run).
      const alone = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await alone.goto(`http://127.0.0.1:${port}/?size=${bytes.length}`);
      await alone.waitForFunction(() => "benchAlone" in window);
      const { drawnMs } = await alone.evaluate(() =>
        (window as unknown as { benchAlone: () => Promise<{ drawnMs: number }> }).benchAlone(),
      );
      results.at(-1)!.uplot_alone_ms = Math.round(drawnMs);
      await alone.close();
    }
  } finally {
    await browser.close();
    server.close();
    rmSync(work, { recursive: true, force: true });
  }
  console.log(`${FRAMES} frames x ${DIMENSIONS} dimensions, ${(bytes.length / 1024).toFixed(0)} KiB of parquet`);
  console.table(results);
  console.log(`range requests per run: ${ranges.length / results.length}`);
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const ratio = median(results.map((r) => r.read_to_drawn_ms! / Math.max(1, r.uplot_alone_ms!)));
  console.log(`the page's drawing over uPlot's alone (median of the runs): ${ratio.toFixed(2)}`);
  console.log(
    JSON.stringify({
      drawing_to_uplot_ratio: Math.round(ratio * 100) / 100,
      frames: FRAMES,
      dimensions: DIMENSIONS,
      bytes: bytes.length,
      runs: results,
    }),
  );
}

await main();

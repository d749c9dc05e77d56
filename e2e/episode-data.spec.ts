import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, type Page } from "@playwright/test";
import { parquetMetadata } from "hyparquet";
import { runCli } from "../lib/testing/cli";
import { buildLeRobotFixture, type LeRobotFixture } from "../lib/testing/lerobot-fixtures";
import { E2E_DATA_DIR } from "./playwright.config";
import { shot, signIn, test } from "./support";

/**
 * The episode page with the robot's data: the `data` stream read in the browser by range requests
 * and plotted in step with the video, on a LeRobot v2.1 dataset (a data file per episode) and a
 * v3.0 one (several episodes per file); the dataset card; hostile text made inert.
 */

const STATE_NAMES = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];
/** Names that would run script if any of them reached the page as markup. */
const HOSTILE_NAMES = [
  '<img src=x onerror="window.__pwned=1">',
  "</script><script>window.__pwned=2</script>",
  '"><svg onload="window.__pwned=3">',
  "javascript:window.__pwned=4",
  "elbow_flex",
  "{{constructor.constructor('window.__pwned=5')()}}",
];
const HOSTILE_README = `---
license: apache-2.0
tags: [robotics]
---
# Hostile card

<script>window.__pwned = "script"</script>
<img src="x" onerror="window.__pwned = 'img'">
<a href="#" onclick="window.__pwned = 'onclick'">a handler</a>

[a javascript link](javascript:window.__pwned='link')
[a data link](data:text/html,<script>alert(1)</script>)
![a tracking pixel](http://127.0.0.1:9/pixel.png?who=viewer)

| joint | unit |
| ----- | ---- |
| elbow | rad  |

A [real link](https://huggingface.co/lerobot).
`;

const playerVideo = (page: Page) => page.locator("video[data-main]");
const currentTime = (page: Page) => playerVideo(page).evaluate((v: HTMLVideoElement) => v.currentTime);
const playhead = (page: Page, feature: string) =>
  page.locator(`[data-feature="${feature}"] [data-playhead]`).evaluate((e) => Number((e as HTMLElement).dataset.time));

async function importForAcme(f: LeRobotFixture, datasetId: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, DAS_DATA_DIR: E2E_DATA_DIR };
  for (const name of [
    "DATABASE_URL",
    "S3_BUCKET",
    "S3_ENDPOINT",
    "S3_ACCESS_KEY_ID",
    "S3_SECRET_ACCESS_KEY",
    "APP_SECRET",
  ])
    delete env[name];
  const imported = await runCli(
    "das-admin",
    ["import", f.root, "--dataset", datasetId, "--version", "1.0.0", "--title", `Data ${datasetId}`, "--upload"],
    { env },
  );
  expect(imported.code, imported.stderr).toBe(0);
  const granted = await runCli("das-admin", ["licence", "grant", "acme-robotics", datasetId, "1.0.0"], { env });
  expect(granted.code, granted.stderr).toBe(0);
}

/** The byte ranges [start, end) of every row group's column chunks, by the episode_index its rows hold. */
function rowGroupRanges(file: string): { episode: number; start: number; end: number }[] {
  const bytes = readFileSync(file);
  const metadata = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  return metadata.row_groups.map((group) => {
    const starts = group.columns.map((c) =>
      Number(c.meta_data!.dictionary_page_offset ?? c.meta_data!.data_page_offset),
    );
    const ends = group.columns.map((c, i) => starts[i]! + Number(c.meta_data!.total_compressed_size));
    const index = group.columns.find((c) => c.meta_data!.path_in_schema[0] === "episode_index")!;
    return {
      episode: Number(index.meta_data!.statistics!.min_value),
      start: Math.min(...starts),
      end: Math.max(...ends),
    };
  });
}

/** Every Range a page asked of a URL whose path ends with `suffix`. */
function rangesAsked(page: Page, suffix: string): { start: number; end: number }[] {
  const asked: { start: number; end: number }[] = [];
  page.on("request", (request) => {
    if (!new URL(request.url()).pathname.endsWith(suffix)) return;
    const match = /bytes=(\d+)-(\d*)/.exec(request.headers().range ?? "");
    // A request without a Range would be the whole file.
    asked.push(
      match
        ? { start: Number(match[1]), end: match[2] ? Number(match[2]) + 1 : Infinity }
        : { start: 0, end: Infinity },
    );
  });
  return asked;
}

test("the robot's data of a LeRobot v3.0 episode is plotted in step with the video, from its own byte ranges only", async ({
  page,
  browser,
}) => {
  test.setTimeout(240_000);
  const root = mkdtempSync(path.join(os.tmpdir(), "das-e2e-data-v3-"));
  try {
    const f = await buildLeRobotFixture(root, {
      version: "v3.0",
      episodes: 4,
      episodesPerFile: 2,
      fps: 10,
      length: () => 40,
    });
    const datasetId = `lr-data-${Date.now()}`;
    await importForAcme(f, datasetId);
    // The second episode of the first data file.
    const dataFile = f.files.find((file) => file.stream === "data" && file.episodes.includes(1))!;
    expect(dataFile.episodes.length).toBeGreaterThan(1);
    const others = rowGroupRanges(path.join(root, dataFile.path)).filter((g) => g.episode !== 1);
    expect(others.length).toBeGreaterThan(0);
    const asked = rangesAsked(page, dataFile.path);

    await signIn(page, "alice@acme.example");
    await page.goto(`/episodes/${datasetId}-000001`);
    await expect(page.locator('[data-table-pending="data"]')).toBeVisible();
    expect(asked).toEqual([]); // nothing fetched before play
    await page.getByRole("button", { name: "Play episode" }).click();

    // A plot per numeric feature, its lines named from info.json.
    for (const feature of ["observation.state", "action"]) {
      const plot = page.locator(`[data-feature="${feature}"]`);
      await expect(plot).toBeVisible({ timeout: 20_000 });
      await expect(plot.locator("button[data-dimension]")).toHaveText(STATE_NAMES);
      await expect(plot.locator("canvas")).toHaveCount(1);
    }
    // The cursor follows playback.
    await expect.poll(() => currentTime(page), { timeout: 20_000 }).toBeGreaterThan(4.5);
    await expect.poll(() => playhead(page, "observation.state")).toBeGreaterThan(0.5);
    const video = (await currentTime(page)) - 4;
    expect(Math.abs((await playhead(page, "observation.state")) - video)).toBeLessThan(0.5);
    await shot(page, "episode-data-v3");

    // A click on a plot seeks the video: three quarters along is 3 s of the 4 s episode, the file's 7 s.
    await page.getByRole("button", { name: "Pause" }).click();
    const over = page.locator('[data-feature="action"] .u-over');
    // A mouse click lands only inside the viewport: the plot may be below the fold.
    await over.scrollIntoViewIfNeeded();
    const box = (await over.boundingBox())!;
    await page.mouse.click(box.x + box.width * 0.75, box.y + box.height / 2);
    await expect.poll(() => currentTime(page)).toBeCloseTo(7, 0);
    expect(Math.abs((await currentTime(page)) - 7)).toBeLessThan(0.15);
    expect(Math.abs((await playhead(page, "action")) - 3)).toBeLessThan(0.15);
    // A legend entry hides its line and says so.
    const first = page.locator('[data-feature="action"] button[data-dimension]').first();
    await first.click();
    await expect(first).toHaveAttribute("aria-pressed", "false");

    // Only the episode's own pages were fetched: no range touches another episode's row group.
    expect(asked.length).toBeGreaterThan(0);
    for (const range of asked) {
      expect(range.end, "no request for the whole file").not.toBe(Infinity);
      for (const other of others) expect(range.end <= other.start || range.start >= other.end).toBe(true);
    }

    // Played again (another page load), still one preview in the log, which covers the data file.
    await page.reload();
    await page.getByRole("button", { name: "Play episode" }).click();
    await expect(page.locator('[data-feature="action"]')).toBeVisible({ timeout: 20_000 });
    const reviewer = await browser.newPage();
    await signIn(reviewer, "reviewer@das.example");
    await reviewer.goto(`/review/disclosures?episode=${datasetId}-000001`);
    const rows = reviewer.locator("table tbody tr", { hasText: "alice@acme.example" }).filter({ hasText: "preview" });
    await expect(rows).toHaveCount(1);
    await reviewer.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a LeRobot v2.1 episode is plotted; hostile names and a hostile README are inert; a missing data file is named while the video plays", async ({
  page,
}) => {
  test.setTimeout(240_000);
  const root = mkdtempSync(path.join(os.tmpdir(), "das-e2e-data-v21-"));
  try {
    const f = await buildLeRobotFixture(root, {
      version: "v2.1",
      episodes: 2,
      fps: 10,
      length: () => 40,
      extraFiles: { "README.md": HOSTILE_README },
    });
    const infoPath = path.join(root, "meta/info.json");
    const info = JSON.parse(readFileSync(infoPath, "utf8"));
    info.features["observation.state"].names = HOSTILE_NAMES;
    writeFileSync(infoPath, JSON.stringify(info, null, 2));
    const datasetId = `lr-hostile-${Date.now()}`;
    await importForAcme(f, datasetId);
    const pixel: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes("127.0.0.1:9")) pixel.push(request.url());
    });

    await signIn(page, "alice@acme.example");
    // The dataset card: rendered, and inert.
    await page.goto(`/datasets/${datasetId}`);
    const card = page.locator("[data-dataset-card]");
    await expect(card.getByRole("heading", { name: "Hostile card" })).toBeVisible();
    await expect(card.locator("table")).toContainText("elbow");
    await expect(card.getByRole("link", { name: "real link" })).toHaveAttribute(
      "href",
      "https://huggingface.co/lerobot",
    );
    await expect(card.locator("script, img, svg, [onclick], [onerror]")).toHaveCount(0);
    await expect(card.locator('a[href^="javascript"], a[href^="data"]')).toHaveCount(0);
    await expect(card.locator("[data-image-not-loaded]")).toContainText(
      "a tracking pixel (image not loaded: http://127.0.0.1:9/pixel.png?who=viewer)",
    );
    await expect(card).not.toContainText("license: apache-2.0");
    await shot(page, "dataset-card");

    // Episode 0: hostile dimension names, shown as the text they are.
    await page.goto(`/episodes/${datasetId}-000000`);
    await page.getByRole("button", { name: "Play episode" }).click();
    const state = page.locator('[data-feature="observation.state"]');
    await expect(state.locator("button[data-dimension]")).toHaveText(HOSTILE_NAMES, { timeout: 20_000 });
    await expect(state.locator("img, script, svg")).toHaveCount(0);
    await expect.poll(() => currentTime(page), { timeout: 20_000 }).toBeGreaterThan(1);

    // Episode 1: its data file is gone from the store. The page names it; the video plays on.
    const dataFile = f.files.find((file) => file.stream === "data" && file.episodes.includes(1))!;
    const stored = findStored(path.join(E2E_DATA_DIR, "s3"), `${datasetId}/1.0.0/${dataFile.path}`);
    unlinkSync(stored);
    await page.goto(`/episodes/${datasetId}-000001`);
    await page.getByRole("button", { name: "Play episode" }).click();
    const failure = page.getByRole("alert").filter({ hasText: "Can't plot data" });
    await expect(failure).toContainText("could not be fetched", { timeout: 20_000 });
    await expect(failure).toContainText("The video plays on without it.");
    await expect.poll(() => currentTime(page), { timeout: 20_000 }).toBeGreaterThan(1);
    await expect(page.getByRole("button", { name: "Pause" })).toBeVisible();

    expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(pixel).toEqual([]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the episode and dataset pages at desktop and phone widths", async ({ page }) => {
  await signIn(page, "alice@acme.example");
  for (const [width, height, name] of [
    [1440, 1000, "desktop"],
    [390, 844, "phone"],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.goto("/datasets/kitchen-pick-place");
    await shot(page, `dataset-page-${name}`);
    await page.goto("/datasets/kitchen-pick-place/1.1.0");
    await shot(page, `explorer-${name}`);
    const first = page.locator('a[href^="/episodes/"]').first();
    await page.goto((await first.getAttribute("href"))!);
    await shot(page, `episode-page-${name}`);
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
    ).toBeLessThanOrEqual(0);
  }
});

/** The local store's file for an object key (s3rver keeps each object as `<key>._S3rver_object`). */
function findStored(dir: string, key: string): string {
  const base = path.basename(key);
  const walk = (at: string): string | null => {
    for (const name of readdirSync(at)) {
      const full = path.join(at, name);
      if (statSync(full).isDirectory()) {
        const found = walk(full);
        if (found) return found;
      } else if (name.startsWith(base) && name.endsWith("_S3rver_object") && full.includes(path.dirname(key)))
        return full;
    }
    return null;
  };
  const found = walk(dir);
  if (!found) throw new Error(`no stored object for ${key}`);
  return found;
}

import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, type APIRequestContext, type Locator, type Page } from "@playwright/test";
import { runCli } from "../lib/testing/cli";
import { buildLeRobotFixture } from "../lib/testing/lerobot-fixtures";
import { E2E_DATA_DIR } from "./playwright.config";
import { demo, shot, signIn, test } from "./support";

type Span = { annotation_id: string; label: string; start_s: number; end_s: number };

/** A demo episode of 1.1.0 long enough to watch a span change, with its spans in time order. */
async function episodeToWatch(request: APIRequestContext): Promise<{ id: string; contributor: string; spans: Span[] }> {
  const headers = { authorization: `Bearer ${demo.key("acme-robotics")}`, accept: "application/json" };
  const listed = await (await request.get("/api/v1/datasets/kitchen-pick-place/versions/1.1.0/episodes?limit=50", { headers })).json();
  for (const episode of listed.episodes as { episode_id: string; duration_s: number; contributor: string }[]) {
    if (episode.duration_s < 30) continue;
    const { annotations } = await (await request.get(`/api/v1/episodes/${episode.episode_id}/annotations?version=1.1.0`, { headers })).json();
    const phases = (annotations as Span[]).filter((a) => a.label !== "recovery");
    if (phases.length >= 4 && phases.length === annotations.length) return { id: episode.episode_id, contributor: episode.contributor, spans: phases };
  }
  throw new Error("no demo episode to watch");
}

const currentTime = (video: Locator) => video.evaluate((v: HTMLVideoElement) => v.currentTime);
const spanButton = (page: Page, span: Span) => page.locator(`button[data-span="${span.annotation_id}"]`);

test("a licensee watches an episode in step with its subtask timeline, on a desktop and on a phone", async ({ page, request }) => {
  const { id, spans } = await episodeToWatch(request);
  await signIn(page, "alice@acme.example");
  await page.goto(`/episodes/${id}?version=1.1.0`);
  await expect(page.getByRole("heading", { name: id })).toBeVisible();
  // Nothing is fetched, so nothing is disclosed, until play is pressed.
  await expect(page.locator("video")).toHaveCount(0);
  await expect(page.getByRole("listitem").filter({ hasText: "joint_states" })).toContainText(/KiB|B$/);

  await page.getByRole("button", { name: "Play episode" }).click();
  const main = page.locator("video[data-main]");
  await expect(main).toHaveAttribute("data-stream", "wrist_cam");
  await expect.poll(() => currentTime(main), { timeout: 20_000 }).toBeGreaterThan(1);
  await expect(page.getByRole("button", { name: "Pause" })).toBeVisible();

  // The third span: a seek to its start, within one frame (the demo clips run at 10 frames a second).
  await page.getByRole("button", { name: "Pause" }).click();
  const third = spans[2]!;
  await spanButton(page, third).click();
  await expect.poll(async () => Math.abs((await currentTime(main)) - third.start_s)).toBeLessThanOrEqual(0.1);
  await expect(spanButton(page, third)).toHaveAttribute("data-active", "true");
  await expect(page.locator("[data-current-span]")).toContainText(third.label);
  await shot(page, "player");

  // The highlight follows playback from the third span into the fourth.
  const fourth = spans[3]!;
  await main.evaluate((v: HTMLVideoElement, t: number) => (v.currentTime = t), third.end_s - 0.6);
  await page.getByRole("button", { name: "Play", exact: true }).click();
  await expect(spanButton(page, fourth)).toHaveAttribute("data-active", "true", { timeout: 10_000 });
  await expect(spanButton(page, third)).not.toHaveAttribute("data-active", "true");
  await expect(page.locator("[data-current-span]")).toContainText(fourth.label);

  // The second stream (AV1, where the first is H.264) becomes the large one and stays in step.
  await page.getByRole("group", { name: "Large stream" }).getByRole("button", { name: "head_cam" }).click();
  await expect(main).toHaveAttribute("data-stream", "head_cam");
  const [head, wrist] = [page.locator('video[data-stream="head_cam"]'), page.locator('video[data-stream="wrist_cam"]')];
  expect(await head.evaluate((v: HTMLVideoElement) => v.videoWidth)).toBe(320);
  await expect.poll(async () => (await currentTime(head)) > fourth.start_s + 0.5).toBe(true);
  const drift = await page.evaluate(() => {
    const [h, w] = ["head_cam", "wrist_cam"].map((s) => document.querySelector<HTMLVideoElement>(`video[data-stream="${s}"]`)!);
    return Math.abs(h!.currentTime - w!.currentTime);
  });
  expect(drift).toBeLessThan(0.35);
  expect(await wrist.evaluate((v: HTMLVideoElement) => v.paused)).toBe(false);

  // The keyboard: space pauses, → steps a second, [ and ] go between spans.
  await page.getByRole("group", { name: /^Video player/ }).focus();
  await page.keyboard.press("Space");
  await expect(page.getByRole("button", { name: "Play", exact: true })).toBeVisible();
  const before = await currentTime(head);
  await page.keyboard.press("ArrowRight");
  await expect.poll(() => currentTime(head)).toBeCloseTo(before + 1, 1);
  await page.keyboard.press("[");
  await expect.poll(() => currentTime(head)).toBeCloseTo(fourth.start_s, 1);
  await page.keyboard.press("]");
  await expect.poll(() => currentTime(head)).toBeCloseTo(spans[4]?.start_s ?? fourth.start_s, 1);
  await page.getByLabel("Playback speed").selectOption("2");
  expect(await head.evaluate((v: HTMLVideoElement) => v.playbackRate)).toBe(2);
  await shot(page, "player-second-stream");

  // A phone: the same player, one column; playing again within the URLs' lifetime is the same preview.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await page.getByRole("button", { name: "Play episode" }).click();
  await expect.poll(() => currentTime(page.locator("video[data-main]")), { timeout: 20_000 }).toBeGreaterThan(0.5);
  const box = await page.locator("video[data-main]").boundingBox();
  expect(box!.width).toBeLessThanOrEqual(390);
  expect(box!.width).toBeGreaterThan(250);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, "player-phone");
});

test("a reviewer finds the licensee's preview in the log, once, by episode and by contributor, and watches it as themselves", async ({ page, browser, request }) => {
  const { id, contributor } = await episodeToWatch(request);
  // The licensee watched this episode in the test before (twice); make sure here, in a context of their own.
  const licensee = await browser.newPage();
  await signIn(licensee, "alice@acme.example");
  await licensee.goto(`/episodes/${id}?version=1.1.0`);
  await licensee.getByRole("button", { name: "Play episode" }).click();
  await expect(licensee.locator("video[data-main]")).toHaveCount(1);
  await licensee.close();

  await signIn(page, "reviewer@das.example");
  await page.goto(`/review/disclosures?episode=${id}`);
  await expect(page.getByText("Hash chain intact")).toBeVisible();
  const rows = page.locator("table tbody tr", { hasText: "alice@acme.example" }).filter({ hasText: "preview" });
  await expect(rows).toHaveCount(1);
  await shot(page, "disclosure-log-preview");

  // The contributor's report counts previews apart from downloads.
  await page.goto(`/review/contributors/${contributor}`);
  const listed = page.locator("table tbody tr");
  await expect(listed.filter({ hasText: "alice@acme.example" }).filter({ has: page.getByText("preview", { exact: true }) })).toHaveCount(1);
  const stat = (label: string) => page.locator("dt", { hasText: new RegExp(`^${label}$`) }).locator("xpath=following-sibling::dd[1]");
  const previewCount = await listed.filter({ has: page.getByText("preview", { exact: true }) }).count();
  expect(previewCount).toBeGreaterThanOrEqual(1);
  await expect(stat("Previews")).toHaveText(String(previewCount));
  await expect(stat("Downloads")).toHaveText(String((await listed.count()) - previewCount));
  await shot(page, "contributor-previews");

  await rows.first().getByRole("link").first().click();
  await expect(page.getByText("Preview id")).toBeVisible();
  await page.getByRole("link", { name: `Watch ${id} in 1.1.0` }).click();
  await expect(page.getByRole("heading", { name: id })).toBeVisible();
  await page.getByRole("button", { name: "Play episode" }).click();
  await expect.poll(() => currentTime(page.locator("video[data-main]")), { timeout: 20_000 }).toBeGreaterThan(0.5);
  await shot(page, "review-player");

  await page.goto(`/review/disclosures?episode=${id}`);
  const own = page.locator("table tbody tr", { hasText: "reviewer@das.example" });
  await expect(own).toHaveCount(1);
  await expect(own).toContainText("reviewer (no licence)");
});

test("an episode of a LeRobot v3.0 file that holds several plays only its own range, on the episode's own clock", async ({ page }) => {
  test.setTimeout(240_000);
  // An operator imports a LeRobot v3.0 dataset (two 4 s episodes per video file) into this
  // installation and licenses it to the demo licensee, as das-admin does it.
  const root = mkdtempSync(path.join(os.tmpdir(), "das-e2e-lerobot-"));
  try {
    const f = await buildLeRobotFixture(root, { version: "v3.0", episodes: 4, episodesPerFile: 2, fps: 10, length: () => 40 });
    const datasetId = `lr-e2e-${Date.now()}`;
    const env: NodeJS.ProcessEnv = { ...process.env, DAS_DATA_DIR: E2E_DATA_DIR };
    for (const name of ["DATABASE_URL", "S3_BUCKET", "S3_ENDPOINT", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "APP_SECRET"]) delete env[name];
    const imported = await runCli("das-admin", ["import", f.root, "--dataset", datasetId, "--version", "1.0.0", "--title", "LeRobot shared files", "--upload"], { env });
    expect(imported.code, imported.stderr).toBe(0);
    const granted = await runCli("das-admin", ["licence", "grant", "acme-robotics", datasetId, "1.0.0"], { env });
    expect(granted.code, granted.stderr).toBe(0);

    // The second episode of the first file: from 4 s to 8 s of it.
    const range = f.videoRanges.get(1)!;
    expect(range.from).toBeCloseTo(4, 6);
    const episodeId = `${datasetId}-000001`;
    await signIn(page, "alice@acme.example");
    await page.goto(`/episodes/${episodeId}`);
    await page.getByRole("button", { name: "Play episode" }).click();
    const main = page.locator("video[data-main]");
    // It starts at the episode's start in the file, never before, and the clock reads the episode's time.
    await expect.poll(() => currentTime(main), { timeout: 20_000 }).toBeGreaterThan(range.from + 0.3);
    await expect(page.locator("[data-clock]")).toContainText(/^0:0\d\.\d \/ 0:04\.0$/);
    // It stops at the episode's end, not playing on into the next episode of the file.
    await expect(page.getByRole("button", { name: "Play", exact: true })).toBeVisible({ timeout: 20_000 });
    const stopped = await currentTime(main);
    expect(stopped).toBeGreaterThan(range.to - 0.2);
    expect(stopped).toBeLessThanOrEqual(range.to + 0.15);
    await expect(page.locator("[data-clock]")).toContainText("0:04.0 / 0:04.0");
    await shot(page, "player-lerobot-shared-file");
    // Back to the start: the file's 4 s, the episode's 0.
    await page.getByRole("group", { name: /^Video player/ }).focus();
    await page.keyboard.press("[");
    await expect.poll(() => currentTime(main)).toBeCloseTo(range.from, 1);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, type APIRequestContext, type Locator, type Page } from "@playwright/test";
import { runCli } from "../lib/testing/cli";
import { buildLeRobotFixture, type LeRobotFixture } from "../lib/testing/lerobot-fixtures";
import { E2E_DATA_DIR } from "./playwright.config";
import { demo, shot, signIn, test } from "./support";

type Span = { annotation_id: string; label: string; start_s: number; end_s: number };

/** A demo episode of 1.1.0 long enough to watch a span change, with its spans in time order. */
async function episodeToWatch(request: APIRequestContext): Promise<{ id: string; contributor: string; spans: Span[] }> {
  const headers = { authorization: `Bearer ${demo.key("acme-robotics")}`, accept: "application/json" };
  const listed = await (
    await request.get("/api/v1/datasets/kitchen-pick-place/versions/1.1.0/episodes?limit=50", { headers })
  ).json();
  for (const episode of listed.episodes as { episode_id: string; duration_s: number; contributor: string }[]) {
    if (episode.duration_s < 30) continue;
    const { annotations } = await (
      await request.get(`/api/v1/episodes/${episode.episode_id}/annotations?version=1.1.0`, { headers })
    ).json();
    const phases = (annotations as Span[]).filter((a) => a.label !== "recovery");
    if (phases.length >= 4 && phases.length === annotations.length)
      return { id: episode.episode_id, contributor: episode.contributor, spans: phases };
  }
  throw new Error("no demo episode to watch");
}

const currentTime = (video: Locator) => video.evaluate((v: HTMLVideoElement) => v.currentTime);
const playerGroup = (page: Page) => page.getByRole("group", { name: /^Video player/ });
/** How far the page is wider than the window (0 or less: no sideways scrolling). */
const overflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** Imports a LeRobot dataset into this run's installation and licenses it to the demo licensee, as an operator does it with das-admin. */
async function importForAcme(f: LeRobotFixture, datasetId: string, title: string) {
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
    ["import", f.root, "--dataset", datasetId, "--version", "1.0.0", "--title", title, "--upload"],
    { env },
  );
  expect(imported.code, imported.stderr).toBe(0);
  const granted = await runCli("das-admin", ["licence", "grant", "acme-robotics", datasetId, "1.0.0"], { env });
  expect(granted.code, granted.stderr).toBe(0);
}

const FRONT = "observation.images.front";
const WRIST = "observation.images.wrist";
/** The most a label may hold, 10,000 characters, opening with one word of 2,000 that no space can break. */
const LONG_LABEL =
  `${"regrasp".repeat(286)}x ${"then wait for the gripper to settle before lifting; ".repeat(200)}`.slice(0, 10_000);

let edgeCases: Promise<string> | undefined;
/**
 * A small LeRobot dataset of the cases real imports bring (imported once per worker; its id):
 * episode 0 has a 10,000-character label between two short ones; in episode 1 the wrist camera's
 * file is not a video at all; in episode 2 the front (first, so large) camera's, and it has no spans.
 */
function importEdgeCases(): Promise<string> {
  return (edgeCases ??= (async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "das-e2e-edge-"));
    try {
      const f = await buildLeRobotFixture(root, {
        version: "v3.0",
        episodes: 3,
        episodesPerFile: 1,
        cameras: [FRONT, WRIST],
        fps: 10,
        length: () => 60,
        subtasks: {
          source: "language_persistent",
          labels: (e) => [["reach", LONG_LABEL, "lift"], ["reach", "grasp"], []][e]!,
        },
      });
      const garbage = Buffer.from("These bytes are stored as an mp4 but are not a video.\n".repeat(100));
      for (const [camera, episode] of [
        [WRIST, 1],
        [FRONT, 2],
      ] as const) {
        writeFileSync(
          path.join(root, f.files.find((file) => file.stream === camera && file.episodes.includes(episode))!.path),
          garbage,
        );
      }
      const datasetId = `lr-edge-${Date.now()}`;
      await importForAcme(f, datasetId, "LeRobot edge cases");
      return datasetId;
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  })());
}
const spanButton = (page: Page, span: Span) => page.locator(`button[data-span="${span.annotation_id}"]`);

test("a licensee watches an episode in step with its subtask timeline, on a desktop and on a phone", async ({
  page,
  request,
}) => {
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
  // The Play button is gone: its focus went to the player, so the keys work without a click.
  await expect(playerGroup(page)).toBeFocused();
  await expect.poll(() => currentTime(main), { timeout: 20_000 }).toBeGreaterThan(1);
  await expect(page.getByRole("button", { name: "Pause" })).toBeVisible();
  await page.keyboard.press("Space");
  await expect(page.getByRole("button", { name: "Play", exact: true })).toBeVisible();

  // The third span: a seek to its start, within one frame (the demo clips run at 10 frames a second).
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
    const [h, w] = ["head_cam", "wrist_cam"].map(
      (s) => document.querySelector<HTMLVideoElement>(`video[data-stream="${s}"]`)!,
    );
    return Math.abs(h!.currentTime - w!.currentTime);
  });
  expect(drift).toBeLessThan(0.35);
  expect(await wrist.evaluate((v: HTMLVideoElement) => v.paused)).toBe(false);

  // The keyboard, after a click on the video (which puts the focus on the player): space pauses,
  // the arrows step a second, with shift a frame (a tenth of a second here), [ and ] go between spans.
  await head.click();
  await expect(playerGroup(page)).toBeFocused();
  await page.keyboard.press("Space");
  await expect(page.getByRole("button", { name: "Play", exact: true })).toBeVisible();
  const before = await currentTime(head);
  await page.keyboard.press("ArrowRight");
  await expect.poll(() => currentTime(head)).toBeCloseTo(before + 1, 1);
  await page.keyboard.press("ArrowLeft");
  await expect.poll(() => currentTime(head)).toBeCloseTo(before, 1);
  await page.keyboard.press("Shift+ArrowRight");
  await expect.poll(async () => (await currentTime(head)) - before).toBeGreaterThan(0.05);
  expect((await currentTime(head)) - before).toBeLessThan(0.2);
  await page.keyboard.press("Shift+ArrowLeft");
  await expect.poll(() => currentTime(head)).toBeCloseTo(before, 2);
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
  expect(await overflow(page)).toBeLessThanOrEqual(0);
  await shot(page, "player-phone");
});

test("a reviewer finds the licensee's preview in the log, once, by episode and by contributor, and watches it as themselves", async ({
  page,
  browser,
  request,
}) => {
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
  const entry = page.locator(`a[href="${await rows.first().getByRole("link").first().getAttribute("href")}"]`);

  // The same entry from the log's own filters: previews only, then that contributor's previews.
  await page.goto("/review/disclosures");
  await page.getByLabel("Channel").selectOption("preview");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(/[?&]channel=preview(&|$)/);
  await expect(entry).toBeVisible();
  // Every entry listed is a preview (the channel's badge), none a download.
  const listedEntries = page.locator("table tbody tr");
  expect(await listedEntries.count()).toBeGreaterThanOrEqual(1);
  await expect(listedEntries.filter({ has: page.getByText("preview", { exact: true }) })).toHaveCount(
    await listedEntries.count(),
  );
  await expect(listedEntries.filter({ has: page.getByText(/^(api|portal)$/) })).toHaveCount(0);
  await page.getByLabel("Contributor").fill(contributor);
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(new RegExp(`contributor=${contributor}`));
  await expect(page).toHaveURL(/[?&]channel=preview(&|$)/);
  await expect(entry).toBeVisible();

  // The contributor's report counts previews apart from downloads.
  await page.goto(`/review/contributors/${contributor}`);
  const listed = page.locator("table tbody tr");
  await expect(
    listed.filter({ hasText: "alice@acme.example" }).filter({ has: page.getByText("preview", { exact: true }) }),
  ).toHaveCount(1);
  const stat = (label: string) =>
    page.locator("dt", { hasText: new RegExp(`^${label}$`) }).locator("xpath=following-sibling::dd[1]");
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

test("an episode of a LeRobot v3.0 file that holds several plays only its own range, on the episode's own clock", async ({
  page,
}) => {
  test.setTimeout(240_000);
  // An operator imports a LeRobot v3.0 dataset (two 4 s episodes per video file) into this
  // installation and licenses it to the demo licensee, as das-admin does it.
  const root = mkdtempSync(path.join(os.tmpdir(), "das-e2e-lerobot-"));
  try {
    const f = await buildLeRobotFixture(root, {
      version: "v3.0",
      episodes: 4,
      episodesPerFile: 2,
      fps: 10,
      length: () => 40,
    });
    const datasetId = `lr-e2e-${Date.now()}`;
    await importForAcme(f, datasetId, "LeRobot shared files");

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
    await main.click();
    await page.keyboard.press("[");
    await expect.poll(() => currentTime(main)).toBeCloseTo(range.from, 1);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a stream this browser cannot play is named with what it holds, and the others play on; if it was the large one, another takes its place", async ({
  page,
}) => {
  test.setTimeout(240_000);
  const datasetId = await importEdgeCases();
  await signIn(page, "alice@acme.example");

  // Episode 1: the small wrist stream is not a video. The front one plays, in step with the clock.
  await page.goto(`/episodes/${datasetId}-000001`);
  await page.getByRole("button", { name: "Play episode" }).click();
  const failure = page.getByRole("alert").filter({ hasText: `Can't play ${WRIST}` });
  await expect(failure).toContainText(`Can't play ${WRIST} (video/mp4, codec h264)`);
  await expect(failure).toContainText("The other streams play on without it.");
  await expect(page.locator(`[data-failed-stream="${WRIST}"]`)).toBeVisible();
  await expect(page.locator(`video[data-stream="${WRIST}"]`)).toHaveCount(0);
  const front = page.locator("video[data-main]");
  await expect(front).toHaveAttribute("data-stream", FRONT);
  await expect.poll(() => currentTime(front), { timeout: 20_000 }).toBeGreaterThan(1);
  expect(await front.evaluate((v: HTMLVideoElement) => v.paused)).toBe(false);
  await expect(page.getByRole("button", { name: "Pause" })).toBeVisible();
  await expect(page.getByRole("group", { name: "Large stream" }).getByRole("button", { name: WRIST })).toBeDisabled();
  await expect(page.getByRole("alert").filter({ hasText: `Can't play ${FRONT}` })).toHaveCount(0);
  await shot(page, "player-stream-failed");

  // Episode 2: the large front stream is not a video; the wrist one is shown large and plays. It has no spans, and the card says so.
  await page.goto(`/episodes/${datasetId}-000002`);
  await expect(page.getByText("with no subtask spans in this version. Press play to watch it.")).toBeVisible();
  await expect(page.getByText("Choose a span")).toHaveCount(0);
  await page.getByRole("button", { name: "Play episode" }).click();
  await expect(
    page.getByRole("alert").filter({ hasText: `Can't play ${FRONT} (video/mp4, codec h264)` }),
  ).toContainText(`${WRIST} is shown large instead.`);
  const wrist = page.locator("video[data-main]");
  await expect(wrist).toHaveAttribute("data-stream", WRIST);
  await expect.poll(() => currentTime(wrist), { timeout: 20_000 }).toBeGreaterThan(1);
  await expect(page.getByRole("button", { name: "Pause" })).toBeVisible();
  await expect(page.locator("[data-clock]")).not.toContainText(/^0:00\.0 /);
  await shot(page, "player-main-stream-failed");
});

test("a stream whose file could not be fetched can be tried again, and joins the others at the playhead", async ({
  page,
}) => {
  test.setTimeout(240_000);
  const datasetId = await importEdgeCases();
  await signIn(page, "alice@acme.example");

  // Episode 0: both streams are videos, but the network refuses the wrist camera's file, as a dropped connection would.
  const wristFile = (url: URL) => decodeURIComponent(url.pathname).includes(`/videos/${WRIST}/`);
  await page.route(wristFile, (route) => route.abort("connectionfailed"));
  await page.goto(`/episodes/${datasetId}-000000`);
  await page.getByRole("button", { name: "Play episode" }).click();
  const failure = page.getByRole("alert").filter({ hasText: `Can't play ${WRIST}` });
  await expect(failure).toContainText(/network failed/i);
  await expect(failure).toContainText("The other streams play on without it.");
  const front = page.locator("video[data-main]");
  await expect(front).toHaveAttribute("data-stream", FRONT);
  await expect.poll(() => currentTime(front), { timeout: 20_000 }).toBeGreaterThan(1);
  await page.getByRole("button", { name: "Pause" }).click();
  await expect(page.getByRole("group", { name: "Large stream" }).getByRole("button", { name: WRIST })).toBeDisabled();

  // The network is back: trying again brings the stream back at the playhead, and it plays with the others.
  await page.unroute(wristFile);
  await failure.getByRole("button", { name: `Try ${WRIST} again` }).click();
  await expect(failure).toHaveCount(0);
  const wrist = page.locator(`video[data-stream="${WRIST}"]`);
  await expect
    .poll(() => wrist.evaluate((v: HTMLVideoElement) => v.readyState), { timeout: 20_000 })
    .toBeGreaterThan(0);
  const paused = await currentTime(front);
  await expect.poll(async () => Math.abs((await currentTime(wrist)) - paused)).toBeLessThan(0.05);
  await expect(page.getByRole("group", { name: "Large stream" }).getByRole("button", { name: WRIST })).toBeEnabled();
  await page.getByRole("button", { name: "Play", exact: true }).click();
  await expect.poll(() => currentTime(wrist), { timeout: 20_000 }).toBeGreaterThan(paused + 0.5);
  expect(await wrist.evaluate((v: HTMLVideoElement) => v.paused)).toBe(false);
  await shot(page, "player-stream-retried");
});

test("a 10,000-character label wraps and is cut short where it must be, whole in the spans table, without widening the page on a desktop or a phone", async ({
  page,
}) => {
  test.setTimeout(240_000);
  const datasetId = await importEdgeCases();
  await signIn(page, "alice@acme.example");
  for (const [width, height, name] of [
    [1280, 900, "player-long-label"],
    [390, 844, "player-long-label-phone"],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.goto(`/episodes/${datasetId}-000000`);
    const long = page.locator("button[data-span]").nth(1);
    await expect(long).toHaveAttribute("aria-label", /^regrasp.*…: 2\.00 s to 4\.00 s\. Play from its start$/);
    // Its tooltip, on keyboard focus: a few lines within the timeline, not one line 10,000 characters wide.
    await long.focus();
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Tab");
    await expect(long).toBeFocused();
    const tooltip = long.getByRole("tooltip");
    await expect(tooltip).toBeVisible();
    const tip = (await tooltip.boundingBox())!;
    expect(tip.x).toBeGreaterThanOrEqual(0);
    expect(tip.x + tip.width).toBeLessThanOrEqual(width);
    expect(tip.height).toBeLessThan(100);
    expect(await overflow(page)).toBeLessThanOrEqual(0);

    // Played from its start, then paused there: the line under the video holds two lines of it, the full text in its title.
    await long.click();
    await page.getByRole("button", { name: "Pause" }).click();
    await long.click();
    const now = page.locator("[data-current-span]");
    await expect(now).toContainText("Now: regrasp");
    await expect(now).toContainText("(span 2 of 3)");
    expect((await now.boundingBox())!.height).toBeLessThan(60);
    expect(await now.locator("[title]").getAttribute("title")).toMatch(/^regrasp/);
    // Clicked, not focused from the keyboard: once the pointer leaves, the tooltip no longer covers that line.
    await page.mouse.move(0, 0);
    await expect(tooltip).toBeHidden();
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await shot(page, name);

    // The spans table shows its start, and all of it on request, wrapped within the page.
    const row = page.getByRole("table", { name: "Subtask spans" }).locator("tbody tr").nth(1);
    await row.getByRole("button", { name: "Show all 10,000 characters" }).click();
    await expect(row).toContainText(LONG_LABEL);
    await expect(row.getByRole("button", { name: "Show less" })).toHaveAttribute("aria-expanded", "true");
    expect(await overflow(page)).toBeLessThanOrEqual(0);
  }
});

test("another organisation's licensee and a signed-out visitor get no player for an episode they may not see, and nothing is disclosed", async ({
  page,
  browser,
  request,
}) => {
  // An episode of warehouse-bin-picking 1.2.0, which Acme licenses and Globex does not.
  const headers = { authorization: `Bearer ${demo.key("acme-robotics")}`, accept: "application/json" };
  const listed = await (
    await request.get("/api/v1/datasets/warehouse-bin-picking/versions/1.2.0/episodes?limit=1", { headers })
  ).json();
  const id: string = listed.episodes[0].episode_id;

  await signIn(page, "bob@globex.example");
  for (const address of [`/episodes/${id}`, `/episodes/${id}?version=1.2.0`]) {
    const response = await page.goto(address);
    expect(response?.status(), address).toBe(404);
    await expect(page.getByRole("heading", { name: "Nothing here" })).toBeVisible();
    await expect(page.locator("video")).toHaveCount(0);
    await expect(page.getByRole("button", { name: "Play episode" })).toHaveCount(0);
  }
  await shot(page, "episode-not-licensed");

  const visitor = await browser.newPage();
  await visitor.goto(`/episodes/${id}`);
  await expect(visitor).toHaveURL(/\/login\?callbackUrl=%2Fepisodes%2F/);
  await expect(visitor.locator("video")).toHaveCount(0);
  await visitor.close();

  // The log holds no preview (nor anything else) of the episode.
  const reviewer = await browser.newPage();
  await signIn(reviewer, "reviewer@das.example");
  await reviewer.goto(`/review/disclosures?episode=${id}`);
  await expect(reviewer.getByText("No entry matches this search")).toBeVisible();
  await expect(reviewer.locator("table tbody tr")).toHaveCount(0);
  await reviewer.close();
});

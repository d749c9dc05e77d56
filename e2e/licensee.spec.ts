import { createHash } from "node:crypto";
import { expect } from "@playwright/test";
import { demo, shot, signIn, test } from "./support";

test("a licensee filters to failures in one environment, opens a timeline, requests a download and fetches a file", async ({
  page,
}) => {
  await signIn(page, "alice@acme.example");
  await expect(page).toHaveURL(/\/datasets$/);
  await expect(page.getByRole("heading", { name: "Datasets" })).toBeVisible();
  await shot(page, "datasets");

  await page.getByRole("link", { name: /Kitchen pick-and-place/ }).click();
  await expect(page.getByRole("heading", { name: "Kitchen pick-and-place", level: 1 })).toBeVisible();
  await expect(page.getByText("not licensed")).toBeVisible();
  await shot(page, "dataset");

  await page.getByRole("link", { name: /Explore episodes of 1\.1\.0/ }).click();
  await page.getByLabel("Outcome").selectOption("failure");
  await expect(page).toHaveURL(/outcome=failure/);
  await page.getByLabel("Environment").selectOption("kitchen_osaka");
  await expect(page).toHaveURL(/environment=kitchen_osaka/);
  const rows = page.locator("table tbody tr");
  await expect(rows.first()).toContainText("kitchen_osaka");
  const count = await rows.count();
  expect(count).toBeGreaterThan(1);
  for (let i = 0; i < count; i++) {
    await expect(rows.nth(i)).toContainText("failure");
    await expect(rows.nth(i)).toContainText("kitchen_osaka");
  }
  await expect(page.getByText(new RegExp(`^${count} of \\d+ episodes match`))).toBeVisible();
  await shot(page, "episode-explorer");

  // The timeline of the first episode: spans on a time axis, times shown on keyboard focus (each a
  // button that plays the episode from its start: the demo episodes have video).
  const first = rows.first().getByRole("link");
  const episodeId = (await first.textContent())!.trim();
  await first.click();
  await expect(page.getByRole("heading", { name: episodeId })).toBeVisible();
  const spans = page.getByRole("button", { name: / s to / });
  expect(await spans.count()).toBeGreaterThan(1);
  // Reached from the keyboard: focus that follows a click shows no tooltip, which would stay over the player's line.
  await spans.first().focus();
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("Tab");
  await expect(spans.first()).toBeFocused();
  await expect(page.getByRole("tooltip").first()).toBeVisible();
  await shot(page, "episode-timeline");
  await page.goBack();

  // Two episodes, without the head camera.
  await page.getByLabel(`Select ${episodeId}`).check();
  const second = (await rows.nth(1).getByRole("link").textContent())!.trim();
  await page.getByLabel(`Select ${second}`).check();
  await page.getByRole("checkbox", { name: "head_cam" }).uncheck();
  await page.getByRole("button", { name: "Download selected (2)" }).click();
  await page.waitForURL(/\/downloads\/dl_/);
  await expect(page.getByRole("heading", { name: /Download of kitchen-pick-place 1\.1\.0/ })).toBeVisible();
  await expect(page.getByText(/^1[0-4]:\d\d$/)).toBeVisible(); // the countdown, just under 15 minutes
  const table = page.locator("table tbody tr");
  const files = await table.count();
  expect(files).toBeGreaterThan(0);
  for (let i = 0; i < files; i++) await expect(table.nth(i)).not.toContainText("head_cam");
  await shot(page, "download");

  // A signed URL really downloads the file whose checksum the manifest states.
  const row = table.first();
  const url = await row.getByRole("link", { name: "Open" }).getAttribute("href");
  const expected = await row.getByTitle(/^[0-9a-f]{64}$/).getAttribute("title");
  const response = await page.request.get(url!);
  expect(response.status()).toBe(200);
  expect(
    createHash("sha256")
      .update(await response.body())
      .digest("hex"),
  ).toBe(expected);
});

test("a licensee narrows the explorer by task, contributor, recovery and a duration range; the URL and the count follow", async ({
  page,
  request,
}) => {
  await signIn(page, "alice@acme.example");
  await page.goto("/datasets/kitchen-pick-place/1.1.0");
  const rows = page.locator("table tbody tr");
  const matching = page.getByText(/^[\d,]+ of [\d,]+ episodes match/);
  const matchCount = async () => Number((await matching.textContent())!.match(/^([\d,]+) of/)![1]!.replace(/,/g, ""));
  /** Each shown row's cells, by the explorer's columns. */
  const shown = () =>
    rows.evaluateAll((trs) =>
      trs.map((tr) => {
        const cells = [...tr.querySelectorAll("td")].map((td) => (td.textContent ?? "").trim());
        return {
          id: cells[1]!,
          task: cells[2]!,
          duration: Number.parseFloat(cells[4]!),
          recovery: cells[6]!,
          contributor: cells[7]!,
        };
      }),
    );

  const unfiltered = await matchCount();
  // Task: the option's count is the number that match, and every row is of that task.
  const taskOption = (await page
    .getByLabel("Task")
    .locator("option", { hasText: /^open_drawer \(/ })
    .textContent())!;
  await page.getByLabel("Task").selectOption("open_drawer");
  await expect(page).toHaveURL(/[?&]task=open_drawer(&|$)/);
  // (Each choice navigates: the count changes once the new page has rendered.)
  await expect.poll(matchCount).not.toBe(unfiltered);
  const byTask = await matchCount();
  expect(taskOption).toBe(`open_drawer (${byTask})`);
  expect(byTask).toBeGreaterThan(0);
  for (const row of await shown()) expect(row.task).toBe("open_drawer");

  // Contributor, on top of the task.
  await page.getByLabel("Contributor").selectOption("contrib-ams-01");
  await expect(page).toHaveURL(/[?&]contributor=contrib-ams-01(&|$)/);
  await expect(page).toHaveURL(/[?&]task=open_drawer(&|$)/);
  await expect.poll(matchCount).not.toBe(byTask);
  const byContributor = await matchCount();
  expect(byContributor).toBeLessThan(byTask);
  for (const row of await shown()) expect([row.task, row.contributor]).toEqual(["open_drawer", "contrib-ams-01"]);

  // Only episodes with a recovery.
  await page.getByLabel("Recovery").selectOption("true");
  await expect(page).toHaveURL(/[?&]has_recovery=true(&|$)/);
  await expect.poll(matchCount).not.toBe(byContributor);
  const withRecovery = await matchCount();
  expect(withRecovery).toBeGreaterThan(0);
  expect(withRecovery).toBeLessThan(byContributor);
  const before = await shown();
  expect(before).toHaveLength(withRecovery);
  for (const row of before) expect(row.recovery).toBe("recovery");

  // A duration range, typed and applied: only the episodes inside it (both bounds included) stay.
  await page.getByLabel("Min. seconds").fill("50");
  await page.getByLabel("Max. seconds").fill("65");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/[?&]min_duration_s=50(&|$)/);
  await expect(page).toHaveURL(/[?&]max_duration_s=65(&|$)/);
  const inRange = before.filter((row) => row.duration >= 50 && row.duration <= 65);
  // The demo's data has episodes on both sides of the range, so the range really narrows.
  expect(inRange.length).toBeGreaterThan(0);
  expect(inRange.length).toBeLessThan(before.length);
  await expect(matching).toHaveText(new RegExp(`^${inRange.length} of `));
  const after = await shown();
  expect(after.map((row) => row.id).sort()).toEqual(inRange.map((row) => row.id).sort());
  for (const row of after) {
    expect(row.duration).toBeGreaterThanOrEqual(50);
    expect(row.duration).toBeLessThanOrEqual(65);
    expect([row.task, row.contributor, row.recovery]).toEqual(["open_drawer", "contrib-ams-01", "recovery"]);
  }
  await shot(page, "episode-explorer-filters");

  // The address is the filter: opened afresh it shows the same episodes, and the API's list with
  // the same query parameters answers with exactly them.
  const address = page.url();
  await page.goto(address);
  await expect(matching).toHaveText(new RegExp(`^${inRange.length} of `));
  // (The form sends its blank fields and the page size too: the API takes only the filters given.)
  const query = new URLSearchParams(
    [...new URL(address).searchParams].filter(([name, value]) => value !== "" && name !== "limit"),
  );
  const api = await request.get(`/api/v1/datasets/kitchen-pick-place/versions/1.1.0/episodes?${query}`, {
    headers: { authorization: `Bearer ${demo.key("acme-robotics")}`, accept: "application/json" },
  });
  expect(api.status()).toBe(200);
  const body = await api.json();
  expect(body.total).toBe(inRange.length);
  expect(body.episodes.map((e: { episode_id: string }) => e.episode_id).sort()).toEqual(
    inRange.map((row) => row.id).sort(),
  );

  // A range upside down matches nothing: the page says so in the form's words and lists nothing.
  await page.getByLabel("Min. seconds").fill("65");
  await page.getByLabel("Max. seconds").fill("50");
  await page.getByRole("button", { name: "Apply" }).click();
  const refusal = page.getByRole("status").filter({ hasText: "These filters cannot match any episode" });
  await expect(refusal).toContainText("The minimum duration (65 s) is above the maximum (50 s)");
  await expect(matching).toHaveCount(0);
});

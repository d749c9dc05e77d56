import { createHash } from "node:crypto";
import { expect } from "@playwright/test";
import { shot, signIn, test } from "./support";

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

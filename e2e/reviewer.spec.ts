import { readFileSync } from "node:fs";
import { expect } from "@playwright/test";
import { demo, shot, signIn, test } from "./support";

test("a reviewer finds a download in the log by contributor and exports it as CSV", async ({ page, request }) => {
  // A download made through the API with the organisation's demo key.
  const headers = { authorization: `Bearer ${demo.key("acme-robotics")}`, accept: "application/json" };
  const listed = await (
    await request.get("/api/v1/datasets/kitchen-pick-place/versions/1.1.0/episodes?limit=1&outcome=failure", {
      headers,
    })
  ).json();
  const { episode_id, contributor } = listed.episodes[0];
  const created = await request.post("/api/v1/downloads", {
    headers,
    data: { dataset_id: "kitchen-pick-place", version: "1.1.0", episode_ids: [episode_id] },
  });
  expect(created.status()).toBe(201);
  const { download_id } = await created.json();

  await signIn(page, "reviewer@das.example");
  await expect(page).toHaveURL(/\/review\/overview/);
  await page.getByRole("link", { name: "Disclosure log" }).click();
  await expect(page).toHaveURL(/\/review\/disclosures/);
  await expect(page.getByText("Hash chain intact")).toBeVisible();
  await shot(page, "disclosure-log");

  await page.getByLabel("Contributor").fill(contributor);
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(new RegExp(`contributor=${contributor}`));
  const entry = page.locator(`a[href="/review/disclosures/${download_id}"]`);
  await expect(entry).toBeVisible();

  const fromSearch = page.waitForEvent("download");
  await page.getByRole("link", { name: "Export CSV" }).click();
  const searchCsv = readFileSync((await (await fromSearch).path())!, "utf8");
  expect(searchCsv.split("\n")[0]).toContain("seq,id,occurred_at,organization");
  expect(searchCsv).toContain(download_id);
  expect(searchCsv).toContain("acme-robotics");

  await entry.click();
  await expect(page.getByRole("heading", { name: /kitchen-pick-place@1\.1\.0/ })).toBeVisible();
  await expect(page.getByText(download_id, { exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: episode_id, exact: true })).toBeVisible();
  await shot(page, "disclosure-entry");

  await page.goto(`/review/contributors/${contributor}`);
  await expect(page.locator(`a[href="/review/disclosures/${download_id}"]`)).toBeVisible();
  await shot(page, "contributor");
  const fromContributor = page.waitForEvent("download");
  await page.getByRole("link", { name: "Export CSV" }).click();
  const contributorCsv = readFileSync((await (await fromContributor).path())!, "utf8");
  expect(contributorCsv).toContain(download_id);
});

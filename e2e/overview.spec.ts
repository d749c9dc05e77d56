import { expect } from "@playwright/test";
import { demo, shot, signIn, test } from "./support";

test("a reviewer lands on the overview, follows a bar and an organisation into the log, opens an entry and comes back", async ({
  page,
  request,
}) => {
  // Two downloads today through the API, by each demo organisation's key.
  for (const [organization, version] of [
    ["acme-robotics", "1.1.0"],
    ["globex-ai", "2.0.0"],
  ] as const) {
    const headers = { authorization: `Bearer ${demo.key(organization)}`, accept: "application/json" };
    const created = await request.post("/api/v1/downloads", {
      headers,
      data: { dataset_id: "kitchen-pick-place", version },
    });
    expect(created.status()).toBe(201);
  }
  const today = new Date().toISOString().slice(0, 10);

  await signIn(page, "reviewer@das.example");
  await expect(page).toHaveURL(/\/review\/overview$/);
  await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();
  await expect(page.getByRole("link", { name: "Overview" })).toHaveAttribute("aria-current", "page");
  await expect(page.getByRole("figure", { name: "Disclosures per day" })).toBeVisible();
  await shot(page, "overview");
  await page.screenshot({ path: "/tmp/overview-desktop.png", fullPage: true });

  // Today's bar: its title says what it counts; it opens today's entries in the log.
  const todayBar = page
    .getByRole("figure", { name: "Disclosures per day" })
    .locator(`svg a[href="/review/disclosures?from=${today}&to=${today}"]`);
  await expect(todayBar).toHaveAttribute("aria-label", new RegExp(`^${today}: \\d+ disclosures?$`));
  await todayBar.click();
  await expect(page).toHaveURL(new RegExp(`/review/disclosures\\?from=${today}&to=${today}$`));
  await expect(page.getByLabel("From (UTC)")).toHaveValue(today);
  await expect(page.locator('a[href^="/review/disclosures/dl_"]').first()).toBeVisible();
  await page.goBack();
  await expect(page).toHaveURL(/\/review\/overview$/);

  // An organisation's row: the log filtered to it over the period, whose entry count is the row's.
  const acmeRow = page.getByRole("row").filter({ has: page.getByRole("link", { name: "Acme Robotics", exact: true }) });
  // Its cells are entries then episodes (the bar between is hidden from the accessibility tree).
  const acmeEntries = Number((await acmeRow.getByRole("cell").first().innerText()).replaceAll(",", ""));
  expect(acmeEntries).toBeGreaterThan(0);
  await acmeRow.getByRole("link", { name: "Acme Robotics", exact: true }).click();
  await expect(page).toHaveURL(/\/review\/disclosures\?org=acme-robotics&from=\d{4}-\d{2}-\d{2}&to=\d{4}-\d{2}-\d{2}$/);
  await expect(page.getByLabel("Organisation")).toHaveValue("acme-robotics");
  // Downloads and previews alike: the row counts every entry (other journeys preview as Acme's users).
  const entries = page.locator('a[href^="/review/disclosures/dl_"], a[href^="/review/disclosures/pv_"]');
  await expect(entries.first()).toBeVisible();
  if (acmeEntries <= 50) await expect(entries).toHaveCount(acmeEntries);
  await expect(page.getByRole("table").getByText("Globex AI")).toHaveCount(0);

  // An entry, then back to the filtered log and back to the overview.
  const filtered = page.url();
  await entries.first().click();
  await expect(page).toHaveURL(/\/review\/disclosures\/(dl|pv)_/);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("@");
  await page.goBack();
  await expect(page).toHaveURL(filtered);
  await page.goBack();
  await expect(page).toHaveURL(/\/review\/overview$/);
  await expect(page.getByRole("heading", { name: "Top recipients" })).toBeVisible();

  // By week, then a friendly word for a period it cannot draw.
  await page.getByLabel("Show by").selectOption("week");
  await page.getByRole("button", { name: "Show" }).click();
  await expect(page).toHaveURL(/granularity=week/);
  await expect(page.getByRole("figure", { name: "Disclosures per week" })).toBeVisible();
  await page.goto("/review/overview?granularity=year");
  await expect(page.getByRole("alert").filter({ hasText: "Check the period" })).toContainText(
    "Show by must be day or week.",
  );

  // On a phone: nothing wider than the screen but the charts, which scroll inside their frame.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/review/overview");
  await expect(page.getByRole("figure", { name: "Disclosures per day" })).toBeVisible();
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  expect(overflow).toBeLessThanOrEqual(0);
  await shot(page, "mobile-overview");
  await page.screenshot({ path: "/tmp/overview-phone.png", fullPage: true });
});

import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, type Page } from "@playwright/test";
import { signIn, test } from "./support";

// The header of each role at a desktop (1440 px) and a phone (390 px) width: every item of the main
// navigation shown whole, on one line with the product name and Sign out at the desktop width.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const ROLES = [
  {
    role: "admin",
    email: "admin@das.example",
    items: ["Overview", "Disclosure log", "Withdrawals", "Admin", "API docs"],
  },
  { role: "reviewer", email: "reviewer@das.example", items: ["Overview", "Disclosure log", "Withdrawals", "API docs"] },
  { role: "licensee", email: "alice@acme.example", items: ["Datasets", "Requests", "Notices", "API docs"] },
] as const;

const ADMIN_PAGES = [
  "Organisations",
  "Users",
  "API keys",
  "Licences",
  "Licence use",
  "Requests",
  "Terms",
  "Datasets",
  "Withdraw",
  "Webhooks",
  "Admin audit",
];

type Box = { text: string; top: number; bottom: number; left: number; right: number; cut: boolean };

/** The main navigation's top-level items (links and the Admin disclosure) and where each is drawn. */
async function navItems(page: Page): Promise<Box[]> {
  return page
    .getByRole("navigation", { name: "Main" })
    .locator(":scope > a, :scope > details > summary")
    .evaluateAll((elements) =>
      elements.map((element) => {
        const r = element.getBoundingClientRect();
        return {
          text: (element.textContent ?? "").trim(),
          top: r.top,
          bottom: r.bottom,
          left: r.left,
          right: r.right,
          // A label cut short by its box: drawn wider than the box shows.
          cut: element.scrollWidth > element.clientWidth,
        };
      }),
    );
}

const centre = (b: { top: number; bottom: number }) => (b.top + b.bottom) / 2;

async function headerShot(page: Page, name: string) {
  await page.waitForLoadState("networkidle");
  await page.screenshot({ path: path.join(root, "test-results/screenshots", `${name}.png`) });
}

for (const { role, email, items } of ROLES) {
  test(`the ${role}'s header shows every item whole: one line at 1440 px, wrapped at 390 px`, async ({ page }) => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await signIn(page, email);
    const nav = page.getByRole("navigation", { name: "Main" });
    await expect(nav).toBeVisible();

    const wide = await navItems(page);
    expect(wide.map((b) => b.text.replace(/\d+ not acknowledged$/, "").trim())).toEqual(items);
    const signOut = await page.getByRole("button", { name: "Sign out" }).boundingBox();
    const brand = await page.getByRole("link", { name: "Dataset Access" }).boundingBox();
    for (const box of wide) {
      expect(box.cut, `${box.text} is cut`).toBe(false);
      expect(box.left).toBeGreaterThanOrEqual(0);
      expect(box.right).toBeLessThanOrEqual(1440);
      // One line: each item level with the product name and Sign out.
      expect(Math.abs(centre(box) - (brand!.y + brand!.height / 2))).toBeLessThan(4);
      expect(Math.abs(centre(box) - (signOut!.y + signOut!.height / 2))).toBeLessThan(4);
    }
    expect(await nav.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
    await headerShot(page, `header-${role}-1440`);

    await page.setViewportSize({ width: 390, height: 844 });
    const narrow = await navItems(page);
    expect(narrow).toHaveLength(items.length);
    for (const box of narrow) {
      expect(box.cut, `${box.text} is cut`).toBe(false);
      expect(box.left).toBeGreaterThanOrEqual(0);
      expect(box.right).toBeLessThanOrEqual(390);
    }
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
    ).toBeLessThanOrEqual(0);
    await headerShot(page, `header-${role}-390`);

    if (role !== "admin") {
      await expect(nav.locator("summary")).toHaveCount(0);
      return;
    }
    // At a phone's width the Admin panel spans the header, every page in it within the screen.
    await nav.locator("summary", { hasText: "Admin" }).click();
    for (const name of ADMIN_PAGES) {
      const link = nav.getByRole("link", { name, exact: true });
      await expect(link).toBeVisible();
      const box = (await link.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(390);
    }
    await headerShot(page, "header-admin-390-open");
  });
}

test("the Admin menu opens from the keyboard, closes on Escape, outside clicks and navigation", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, "admin@das.example");
  const nav = page.getByRole("navigation", { name: "Main" });
  const admin = nav.locator("summary", { hasText: "Admin" });
  const licenceUse = nav.getByRole("link", { name: "Licence use", exact: true });
  await expect(licenceUse).toBeHidden();
  // Landed on Organisations: "Admin" is marked as where the admin is.
  await expect(admin).toHaveClass(/bg-brand-50/);

  // Keyboard: focus Admin, open with Enter, Tab into the first page, Escape back to Admin.
  await admin.focus();
  await page.keyboard.press("Enter");
  for (const name of ADMIN_PAGES) await expect(nav.getByRole("link", { name, exact: true })).toBeVisible();
  await expect(nav.getByRole("link", { name: "Organisations", exact: true })).toHaveAttribute("aria-current", "page");
  await headerShot(page, "header-admin-1440-open");
  await page.keyboard.press("Tab");
  await expect(nav.getByRole("link", { name: "Organisations", exact: true })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(licenceUse).toBeHidden();
  await expect(admin).toBeFocused();

  // A click elsewhere on the page closes it.
  await admin.click();
  await expect(licenceUse).toBeVisible();
  await page.getByRole("heading", { level: 1 }).click();
  await expect(licenceUse).toBeHidden();

  // Following a link closes it on the new page, where that page is the current one.
  await admin.click();
  await licenceUse.click();
  await expect(page).toHaveURL(/\/admin\/licence-use$/);
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  await expect(licenceUse).toBeHidden();
  await admin.click();
  await expect(licenceUse).toHaveAttribute("aria-current", "page");
});

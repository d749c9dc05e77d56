import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { test as base, expect, type Page } from "@playwright/test";
import { demoKeySecret, demoPassword } from "../lib/dev/demo/credentials";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const secret = () => readFileSync(path.join(root, ".data/e2e/app-secret"), "utf8").trim();

/** The demo accounts of the run's fresh installation (derived from its own secret, as the launcher prints them). */
export const demo = {
  password: (email: string) => demoPassword(secret(), email),
  key: (organization: string) => demoKeySecret(secret(), organization),
};

/**
 * The journeys' `test`: each fails when Chromium reports a Content-Security-Policy violation, so
 * every page the journeys visit is shown to hydrate and work under the policy proxy.ts sets.
 */
export const test = base.extend<{ cspViolations: string[] }>({
  cspViolations: [
    async ({ page }, use) => {
      const violations: string[] = [];
      page.on("console", (message) => {
        if (message.text().includes("Content Security Policy")) violations.push(message.text());
      });
      await use(violations);
      expect(violations, "Content Security Policy violations").toEqual([]);
    },
    { auto: true },
  ],
});

export async function signIn(page: Page, email: string) {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(demo.password(email));
  await page.getByRole("button", { name: "Sign in" }).click();
  // Signed in once the browser is at the role's home: the front door ("/") redirects there, and a
  // menu opened on the way closes when the path changes under it.
  await expect(page).not.toHaveURL(/\/(login)?([?#].*)?$/);
}

export async function shot(page: Page, name: string) {
  await page.waitForLoadState("networkidle");
  await page.screenshot({ path: path.join(root, "test-results/screenshots", `${name}.png`), fullPage: true });
}

/** The admin's pages sit behind the main navigation's "Admin" disclosure: opens it and follows one. */
export async function openAdminPage(page: Page, name: string) {
  const nav = page.getByRole("navigation", { name: "Main" });
  const link = nav.getByRole("link", { name, exact: true });
  // Opened again if a navigation still under way closed it (the menu closes when the path changes).
  await expect(async () => {
    if (!(await link.isVisible())) await nav.locator("summary", { hasText: "Admin" }).click();
    await expect(link).toBeVisible({ timeout: 2_000 });
  }).toPass({ timeout: 30_000 });
  await link.click();
}

import { expect } from "@playwright/test";
import { shot, signIn, test } from "./support";

test("the sign-in page refuses a wrong password with a clear message", async ({ page }) => {
  await page.goto("/datasets");
  await expect(page).toHaveURL(/\/login\?callbackUrl=%2Fdatasets/);
  await page.getByLabel("Email").fill("alice@acme.example");
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "do not match" })).toContainText(
    "That email and password do not match an active account",
  );
  await shot(page, "login");
});

test("the API reference is public and documents every endpoint", async ({ page }) => {
  await page.goto("/docs/api");
  for (const path of ["/api/v1/datasets", "/api/v1/downloads", "/api/v1/episodes/{episode_id}/annotations"]) {
    await expect(page.getByText(path, { exact: true }).first()).toBeVisible();
  }
  await shot(page, "docs-api");
});

test("a licensee who opens an admin page gets the 403 page", async ({ page }) => {
  await signIn(page, "alice@acme.example");
  const response = await page.goto("/admin/keys");
  expect(response?.status()).toBe(403);
  await expect(page.getByRole("heading", { name: "This page is not for your role" })).toBeVisible();
  await shot(page, "forbidden");
});

test("the portal is usable on a phone", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, "alice@acme.example");
  await page.goto("/datasets/kitchen-pick-place/1.1.0");
  await expect(page.getByRole("button", { name: /Download all/ })).toBeVisible();
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  expect(overflow).toBeLessThanOrEqual(0);
  await shot(page, "mobile-episode-explorer");
  await page.goto("/datasets/kitchen-pick-place");
  await shot(page, "mobile-dataset");
});

test("signing out ends the session", async ({ page }) => {
  await signIn(page, "alice@acme.example");
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login/);
  await page.goto("/datasets");
  await expect(page).toHaveURL(/\/login\?callbackUrl=%2Fdatasets/);
});

test("pages run under their Content-Security-Policy: an injected script does not run, and no page can be framed", async ({
  page,
  baseURL,
  cspViolations,
}) => {
  // The sign-in page as an injection would leave it: a script in the HTML, without the response's nonce.
  await page.route("**/login", async (route) => {
    const response = await route.fetch();
    const html = (await response.text()).replace(
      "</body>",
      "<script>document.body.dataset.injected = 'ran'</script></body>",
    );
    await route.fulfill({ response, body: html });
  });
  const response = await page.goto("/login");
  expect(response?.headers()["content-security-policy"]).toMatch(
    /script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic' 'wasm-unsafe-eval'.*frame-ancestors 'none'/,
  );
  // The page's own scripts run (React focuses the email field), the injected one does not.
  await expect(page.getByLabel("Email")).toBeFocused();
  expect(await page.evaluate(() => document.body.dataset.injected ?? null)).toBeNull();
  await expect.poll(() => cspViolations.join("\n")).toMatch(/inline script.*script-src.*blocked/);
  cspViolations.splice(0);
  await page.unroute("**/login");

  await page.setContent(`<iframe title="framed" src="${baseURL}/login"></iframe>`);
  await expect.poll(() => cspViolations.join("\n")).toContain("frame-ancestors 'none'");
  expect(await page.frameLocator("iframe").getByLabel("Email").count()).toBe(0);
  cspViolations.splice(0);
});

import { expect } from "@playwright/test";
import { shot, signIn, test } from "./support";

test("an admin issues a key, uses it against /api/v1/datasets, and revokes it", async ({ page, request }) => {
  await signIn(page, "admin@das.example");
  await expect(page).toHaveURL(/\/admin\/organizations/);
  await expect(page.getByRole("heading", { name: "Organisations", level: 1 })).toBeVisible();
  await shot(page, "admin-organizations");
  for (const area of ["users", "licences", "audit"]) {
    await page.goto(`/admin/${area}`);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await shot(page, `admin-${area}`);
  }

  await page.goto("/admin/keys");
  await page.locator("#key-organization").selectOption({ label: "Acme Robotics (acme-robotics)" });
  await page.locator("#key-name").fill("e2e journey key");
  await page.getByRole("button", { name: "Issue key" }).click();
  const secretBox = page.getByLabel("API key secret");
  await expect(secretBox).toBeVisible();
  const secret = (await secretBox.textContent())!.trim();
  expect(secret).toMatch(/^das_[0-9A-Za-z]{43}$/);
  await shot(page, "admin-keys-issued");

  const auth = { authorization: `Bearer ${secret}` };
  const before = await request.get("/api/v1/datasets", { headers: auth });
  expect(before.status()).toBe(200);
  expect((await before.json()).datasets.map((d: { dataset_id: string }) => d.dataset_id)).toContain(
    "kitchen-pick-place",
  );

  await page.getByRole("button", { name: "I have stored the secret" }).click();
  await expect(secretBox).toBeHidden();
  await page.getByRole("button", { name: new RegExp(`Revoke key e2e journey key \\(${secret.slice(0, 12)}`) }).click();
  await page.getByRole("button", { name: "Revoke key", exact: true }).click();
  await expect(page.getByRole("button", { name: /Revoke key e2e journey key/ })).toHaveCount(0);
  await shot(page, "admin-keys");

  const after = await request.get("/api/v1/datasets", { headers: auth });
  expect(after.status()).toBe(401);
  expect((await after.json()).error.code).toBe("unauthorized");
});

test("an admin creates a user, changes their role and disables them; each ends the user's sessions", async ({
  page,
  browser,
  baseURL,
}) => {
  const email = `e2e-${Date.now()}@acme.example`;
  const password = "an e2e journey password";
  await signIn(page, "admin@das.example");
  await page.goto("/admin/users");
  await page.locator("#user-email").fill(email);
  await page.locator("#user-organization").selectOption({ label: "Acme Robotics (acme-robotics)" });
  await page.locator("#user-password").fill(password);
  await page.getByRole("button", { name: "Create user" }).click();
  await expect(page.getByRole("button", { name: `Disable ${email}` })).toBeVisible();

  // The new user signs in elsewhere.
  const otherBrowser = await browser.newContext({ baseURL });
  const elsewhere = await otherBrowser.newPage();
  await elsewhere.goto("/login");
  await elsewhere.getByLabel("Email").fill(email);
  await elsewhere.getByLabel("Password").fill(password);
  await elsewhere.getByRole("button", { name: "Sign in" }).click();
  await expect(elsewhere).toHaveURL(/\/datasets$/);

  await page.getByRole("button", { name: `Change the role of ${email}` }).click();
  await page.locator("#change-role").selectOption("reviewer");
  await page.getByRole("button", { name: "Change role", exact: true }).click();
  await expect(page.getByText(`${email} is now reviewer`)).toBeVisible();
  await elsewhere.reload();
  await expect(elsewhere).toHaveURL(/\/login\?callbackUrl=%2Fdatasets/);

  await page.getByRole("button", { name: `Disable ${email}` }).click();
  await page.getByRole("button", { name: "Disable user", exact: true }).click();
  await expect(page.getByText(`${email} is disabled`)).toBeVisible();
  await expect(page.getByRole("button", { name: `Disable ${email}` })).toHaveCount(0);
  await shot(page, "admin-users-disabled");
  await otherBrowser.close();
});

test("an admin grants a licence for a term and moves its last day; a day out of order is refused inline", async ({
  page,
}) => {
  await signIn(page, "admin@das.example");
  await page.goto("/admin/licences");
  await page.locator("#licence-organization").selectOption({ label: "Globex AI (globex-ai)" });
  await page.locator("#licence-version").selectOption("warehouse-bin-picking@1.0.0");
  const grant = page.getByRole("button", { name: "Grant licence" });

  // A last day before the first: refused by the form, the message tied to the field.
  await page.getByLabel("Usable from").fill("2030-01-10");
  await page.getByLabel("Last day", { exact: true }).fill("2030-01-01");
  await grant.click();
  await expect(page.locator("#licence-ends")).toHaveAttribute("aria-invalid", "true");
  await expect(page.locator("#licence-ends-error")).toHaveText("The last day comes on or after the first.");

  await page.getByLabel("Last day", { exact: true }).fill("2030-12-31");
  await grant.click();
  await expect(page.getByText(/Granted warehouse-bin-picking@1\.0\.0 to Globex AI\./)).toBeVisible();

  // The end form offers the new licence; an earlier last day ends it early and says what it was.
  await page.reload();
  const option = page.locator("#end-licence option", { hasText: "Globex AI · warehouse-bin-picking@1.0.0" });
  await page.locator("#end-licence").selectOption((await option.getAttribute("value"))!);
  await page.getByLabel("New last day").fill("2030-06-30");
  await page.getByRole("button", { name: "Set the last day" }).click();
  await expect(page.getByText(/warehouse-bin-picking@1\.0\.0\s*now has .* as its last day \(it was /)).toBeVisible();
});

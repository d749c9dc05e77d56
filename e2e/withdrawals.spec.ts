import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, type Page } from "@playwright/test";
import { demo, openAdminPage, signIn, test } from "./support";

// Last of the journeys (files run in name order): the episodes it withdraws are gone for good.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The page at a desktop and a phone width, whole. */
async function shots(page: Page, name: string) {
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForLoadState("networkidle");
    await page.screenshot({
      path: path.join(root, "test-results/screenshots", `${name}-${width}.png`),
      fullPage: true,
    });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

test("an admin adds a webhook endpoint, sees its secret once, and removes it", async ({ page }) => {
  await signIn(page, "admin@das.example");
  await openAdminPage(page, "Webhooks");
  await expect(page.getByRole("heading", { name: "Webhooks", level: 1 })).toBeVisible();
  await page.locator("#webhook-organization").selectOption({ label: "Globex AI (globex-ai)" });
  // Refused before anything is stored: not a public address.
  await page.locator("#webhook-url").fill("http://127.0.0.1:9/hooks");
  await page.getByRole("button", { name: "Add endpoint" }).click();
  // (Next's route announcer is an alert too: the form's is the one with its title.)
  await expect(page.getByRole("alert").filter({ hasText: "The endpoint was not added" })).toContainText(
    "non-public address",
  );
  await shots(page, "admin-webhooks-refused");

  await page.locator("#webhook-url").fill("https://203.0.113.10/e2e-hooks");
  await page.locator("#webhook-description").fill("Globex data platform");
  await page.getByRole("button", { name: "Add endpoint" }).click();
  const secretBox = page.getByLabel("Webhook signing secret");
  await expect(secretBox).toBeVisible();
  expect((await secretBox.textContent())!.trim()).toMatch(/^whsec_/);
  await shots(page, "admin-webhooks-secret");
  await page.getByRole("button", { name: "I have stored the secret" }).click();
  await expect(secretBox).toBeHidden();

  const remove = page.getByRole("button", { name: "Remove webhook https://203.0.113.10/e2e-hooks of globex-ai" });
  await expect(remove).toBeVisible();
  await page.getByLabel("Organisation", { exact: true }).first().selectOption({ label: "Globex AI" });
  await expect(page).toHaveURL(/organization=org_/);
  await expect(page.getByRole("heading", { name: "Endpoints of Globex AI" })).toBeVisible();
  await shots(page, "admin-webhooks");
  await remove.click();
  await page.getByRole("button", { name: "Remove endpoint", exact: true }).click();
  // Its last endpoint: the list is empty, and the message saying so stays.
  await expect(page.getByText("No webhook endpoints of Globex AI")).toBeVisible();
  await expect(remove).toHaveCount(0);
  await expect(page.getByText("is removed: nothing more is sent to it")).toBeVisible();
});

test("a withdrawal from the admin portal reaches the organisation's inbox, is acknowledged, and the reviewer sees it", async ({
  page,
  browser,
  baseURL,
  request,
}) => {
  // Acme receives two episodes through the API.
  const headers = { authorization: `Bearer ${demo.key("acme-robotics")}`, accept: "application/json" };
  const listed = await (
    await request.get("/api/v1/datasets/kitchen-pick-place/versions/1.1.0/episodes?limit=200", { headers })
  ).json();
  const chosen: string[] = listed.episodes.slice(-2).map((e: { episode_id: string }) => e.episode_id);
  expect(chosen).toHaveLength(2);
  const created = await request.post("/api/v1/downloads", {
    headers,
    data: { dataset_id: "kitchen-pick-place", version: "1.1.0", episode_ids: chosen },
  });
  expect(created.status()).toBe(201);

  // Alice has nothing outstanding yet.
  const aliceContext = await browser.newContext({ baseURL });
  const alice = await aliceContext.newPage();
  await signIn(alice, "alice@acme.example");
  const noticesLink = alice.getByRole("navigation", { name: "Main" }).getByRole("link", { name: /^Notices/ });
  await expect(noticesLink).toHaveText("Notices");

  // The admin withdraws them: bad input first, then a review, then the confirmation.
  await signIn(page, "admin@das.example");
  await openAdminPage(page, "Withdraw");
  await expect(page.getByRole("heading", { name: "Withdraw episodes", level: 1 })).toBeVisible();
  await page.getByText("Episodes of a dataset").click();
  await page.getByRole("button", { name: "Review withdrawal" }).click();
  await expect(page.getByText("Choose the dataset the episodes belong to.")).toBeVisible();
  await expect(page.getByText("Say why, for the record")).toBeVisible();
  await page.locator("#withdraw-dataset").selectOption("kitchen-pick-place");
  await page.locator("#withdraw-episodes").fill(`${chosen[0]}, no-such-episode`);
  await page.locator("#withdraw-reason").fill("Consent withdrawn by email (e2e)");
  await page.getByRole("button", { name: "Review withdrawal" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "Nothing to withdraw" })).toContainText(
    "No version holds these episodes: no-such-episode",
  );
  await shots(page, "admin-withdraw-error");

  await page.locator("#withdraw-episodes").fill(chosen.join("\n"));
  await page.getByRole("button", { name: "Review withdrawal" }).click();
  const confirm = page.getByRole("region", { name: "Withdraw 2 episodes?" });
  await expect(confirm).toBeVisible();
  await expect(confirm).toContainText("kitchen-pick-place@1.1.0");
  await expect(confirm).toContainText("organisation");
  await shots(page, "admin-withdraw-confirm");
  await confirm.getByRole("button", { name: "Withdraw 2 episodes" }).click();
  await expect(page.getByText("Withdrew 2 episodes")).toBeVisible();
  await shots(page, "admin-withdraw-done");

  // Alice's badge counts the notice; the inbox names exactly her organisation's two episodes.
  await alice.reload();
  await expect(noticesLink).toHaveText(/Notices\s*1 not acknowledged/);
  await shots(alice, "notices-badge");
  // On a phone the badge is in sight too, its link whole within the screen.
  await alice.setViewportSize({ width: 390, height: 844 });
  await expect(noticesLink).toBeInViewport({ ratio: 1 });
  await alice.setViewportSize({ width: 1280, height: 900 });
  await noticesLink.click();
  await expect(alice.getByRole("heading", { name: "Notices", level: 1 })).toBeVisible();
  const notice = alice.locator("li", { hasText: "2 episodes withdrawn" });
  await expect(notice).toContainText("Outstanding");
  const named = (await notice.getByText(/^Episodes: /).textContent())!.replace("Episodes: ", "").split(", ");
  expect(named.sort()).toEqual([...chosen].sort());
  await shots(alice, "notices-inbox");
  await notice.getByLabel("What your organisation did").fill("Deleted both episodes from our training store.");
  await notice.getByRole("button", { name: "Acknowledge" }).click();
  await expect(notice).toContainText("Acknowledged");
  await expect(noticesLink).toHaveText("Notices");
  await shots(alice, "notices-acknowledged");
  await aliceContext.close();

  // The reviewer sees Acme's acknowledgement and how the notice reached it.
  const reviewerContext = await browser.newContext({ baseURL });
  const reviewer = await reviewerContext.newPage();
  await signIn(reviewer, "reviewer@das.example");
  await reviewer.goto("/review/withdrawals");
  const withdrawal = reviewer.locator("li", { hasText: "Consent withdrawn by email (e2e)" });
  const acme = withdrawal.locator("tr", { hasText: "Acme Robotics" });
  await expect(acme).toContainText("Deleted both episodes from our training store.");
  await expect(acme).toContainText("inbox: posted");
  await expect(acme).toContainText("webhook: none registered");
  await expect(acme).toContainText("email: not configured");
  await shots(reviewer, "review-withdrawals");
  await reviewerContext.close();
});

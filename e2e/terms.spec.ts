import { expect, type Locator, type Page } from "@playwright/test";
import { shot, signIn, test } from "./support";

/**
 * Terms and access requests in the browser: an admin adds a hostile terms document through the
 * portal and it renders inert, for the admin and for the member who accepts it; the member
 * requests a listed dataset, the admin approves, and the member's organisation holds the licence.
 * Last of the journeys by name: it lists a demo dataset and grants a licence the others do not expect.
 */

const DATASET = "tabletop-assembly"; // listed here; Acme holds no licence for it in the demo
const HOSTILE_TITLE = 'Hostile <b onmouseover="window.__pwned=0">terms</b>';
const HOSTILE_TERMS = `---
front: matter is shown as text
---
# Data-use agreement

<script>window.__pwned = "script"</script>
<img src="x" onerror="window.__pwned = 'img'">
<a href="#" onclick="window.__pwned = 'onclick'">a handler</a>
<iframe src="javascript:window.__pwned='iframe'"></iframe>
<div style="position:fixed;inset:0;z-index:99" onmouseover="window.__pwned='hover'">raw html block</div>

Inline <span onclick="window.__pwned='span'">raw html</span> in a paragraph.

[a javascript link](javascript:window.__pwned='link')
[a data link](data:text/html,<script>alert(1)</script>)
[an encoded javascript link](&#106;avascript:window.__pwned='entity')
<javascript:window.__pwned='autolink'>
![a tracking pixel](http://127.0.0.1:9/pixel.png?who=reader)

1. Use the data for the stated purpose only.
2. A [real link](https://example.com/terms).
`;

async function expectInert(page: Page, document: Locator) {
  await expect(document.getByRole("heading", { name: "Data-use agreement" })).toBeVisible();
  await expect(document.getByRole("listitem").first()).toContainText("stated purpose only");
  await expect(document.getByRole("link", { name: "real link" })).toHaveAttribute("href", "https://example.com/terms");
  await expect(document.locator("script, img, iframe, svg, object, embed, [style]")).toHaveCount(0);
  await expect(document.locator("[onclick], [onerror], [onmouseover], [onload]")).toHaveCount(0);
  await expect(document.locator('a[href^="javascript"], a[href^="data"], a[href*="pwned"]')).toHaveCount(0);
  await expect(document.locator("[data-image-not-loaded]")).toContainText("a tracking pixel (image not loaded");
  await expect(document).toContainText("front: matter is shown as text");
  await expect(document).not.toContainText("raw html block");
  // Whatever a reader does with the links and the text, nothing runs.
  for (const name of ["a javascript link", "a data link", "an encoded javascript link", "a handler"]) {
    const link = document.getByText(name, { exact: true });
    if (await link.count()) await link.first().click({ force: true });
  }
  await document.hover();
  expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
}

test("a hostile terms document renders inert; a member requests a listed dataset under it and an admin approves", async ({
  page,
  browser,
}) => {
  test.setTimeout(180_000);
  const pixel: string[] = [];
  page.on("request", (request) => {
    if (request.url().includes("127.0.0.1:9")) pixel.push(request.url());
  });

  // The admin adds the document through the portal, then reads it.
  await signIn(page, "admin@das.example");
  await page.goto("/admin/terms");
  await page.getByLabel("Title").fill(HOSTILE_TITLE);
  await page.getByLabel("Applies to").selectOption(DATASET);
  await page.getByLabel("Text (Markdown)").fill(HOSTILE_TERMS);
  await page.getByRole("button", { name: "Add terms" }).click();
  await page.locator('[aria-live="polite"] a[href^="/admin/terms/"]').click();
  await expect(page).toHaveURL(/\/admin\/terms\/[0-9a-f]{64}$/);
  await expect(page.getByRole("heading", { level: 1 }).first()).toHaveText(HOSTILE_TITLE);
  await expectInert(page, page.locator("[data-terms-document]"));
  await shot(page, "admin-terms-document");

  // The admin lists the dataset.
  await page.goto("/admin/datasets");
  await page.getByRole("button", { name: `List ${DATASET}` }).click();
  await expect(page.getByRole("button", { name: `Unlist ${DATASET}` })).toBeVisible();
  await shot(page, "admin-datasets");

  // A member of Acme sees it, reads the terms (inert again), and requests a version.
  const member = await (await browser.newContext()).newPage();
  member.on("request", (request) => {
    if (request.url().includes("127.0.0.1:9")) pixel.push(request.url());
  });
  await signIn(member, "alice@acme.example");
  await member.goto("/datasets");
  await member.getByRole("link", { name: new RegExp(DATASET) }).click();
  await expect(member.getByRole("heading", { level: 1 }).first()).toBeVisible();
  await expect(member.locator("[data-dataset-card]")).toHaveCount(0);
  await expect(member.getByRole("link", { name: /Explore episodes/ })).toHaveCount(0);
  await shot(member, "listed-dataset");
  await member.getByRole("link", { name: "Request access" }).first().click();
  await expect(member).toHaveURL(new RegExp(`/datasets/${DATASET}/request`));
  await expectInert(member, member.locator("[data-terms-document]"));
  await member.getByLabel("Version").selectOption("1.0.0");
  await member.getByLabel("Purpose").fill("Evaluating an assembly policy <script>window.__pwned='purpose'</script>");
  await member.getByRole("button", { name: "Accept the terms and request access" }).click();
  await expect(member.getByText("A request is made under these terms")).toBeVisible();
  await member.getByRole("checkbox").check();
  await shot(member, "access-request-form");
  await member.getByRole("button", { name: "Accept the terms and request access" }).click();
  await expect(member.getByText("Request sent")).toBeVisible();
  await member.goto("/requests");
  await expect(member.getByRole("cell", { name: "pending" })).toBeVisible();

  // The admin approves it for a term; the member's organisation holds the version.
  await page.goto("/admin/requests");
  const request = page.getByRole("listitem").filter({ hasText: `${DATASET}@1.0.0` });
  await expect(request).toContainText("Evaluating an assembly policy <script>");
  await request.getByLabel("Until (included)").fill("2099-12-31");
  await shot(page, "admin-requests");
  await request.getByRole("button", { name: "Approve and grant licence" }).click();
  await expect(page.getByRole("heading", { name: /Waiting for a decision/ })).toContainText("(0)");

  await member.goto("/requests");
  await expect(member.getByRole("cell", { name: "approved" })).toBeVisible();
  await shot(member, "requests");
  await member.goto(`/datasets/${DATASET}`);
  await expect(member.getByRole("link", { name: "Explore episodes of 1.0.0" })).toBeVisible();

  expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(await member.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(pixel).toEqual([]);
});

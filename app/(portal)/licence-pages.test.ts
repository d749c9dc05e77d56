import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "@/lib/admin/organizations";
import { createUser } from "@/lib/admin/users";
import { grantLicence } from "@/lib/admin/licences";
import { addTerms } from "@/lib/admin/terms";
import { getDb } from "@/lib/db/client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { contributedEpisodes, importWithFiles, keyPrincipal, makeDownload } from "@/lib/testing/disclosure-fixtures";
import { operatorCtx, uniqueId } from "@/lib/testing/fixtures";
import { signInOverHttp } from "@/lib/testing/portal-session";

// The licence pages rendered by the production build for signed-in users: the licensee's terms and
// end warning, the owner's per-licence figures and ending licences, and the reviewer's entry page
// naming the terms a download was delivered under.

const PASSWORD = "correct horse battery";
const DAY = 86_400_000;

let server: AppServer;
let cookies: Record<"licensee" | "admin" | "reviewer", string>;
let datasetId: string;
let orgName: string;
let termsSha256: string;
let licenceId: string;
let downloadId: string;
let endsAt: Date;

beforeAll(async () => {
  const op = operatorCtx();
  orgName = `Licence pages ${uniqueId("org")}`;
  const org = await createOrganization(op, { slug: uniqueId("org"), name: orgName });
  datasetId = await importWithFiles(getDb().$client, [
    { version: "1.0.0", episodes: contributedEpisodes(2, 733, ["op-a", "op-b"]) },
    { version: "2.0.0", episodes: contributedEpisodes(2, 734, ["op-a", "op-b"]) },
  ]);
  const terms = await addTerms(op, { title: "Pages terms", body: `Research only. ${uniqueId("t")}` });
  termsSha256 = terms.document.sha256;
  // Ends in 12 days and a few hours: the warning counts 13 days.
  endsAt = new Date(Date.now() + 12 * DAY + 3 * 3_600_000);
  licenceId = (await grantLicence(op, { organizationId: org.id, datasetId, version: "1.0.0", endsAt, termsSha256 })).id;
  await grantLicence(op, { organizationId: org.id, datasetId, version: "2.0.0" });
  downloadId = (
    await makeDownload(getDb(), await keyPrincipal(op, org.id), { dataset_id: datasetId, version: "1.0.0" })
  ).download.download_id;
  const user = async (role: "licensee" | "admin" | "reviewer") => {
    const email = `${uniqueId(role)}@licence-pages.example`;
    await createUser(op, { email, role, organizationId: role === "licensee" ? org.id : null, password: PASSWORD });
    return email;
  };
  const emails = { licensee: await user("licensee"), admin: await user("admin"), reviewer: await user("reviewer") };
  server = await startAppServer();
  cookies = {
    licensee: await signInOverHttp(server.url, emails.licensee, PASSWORD),
    admin: await signInOverHttp(server.url, emails.admin, PASSWORD),
    reviewer: await signInOverHttp(server.url, emails.reviewer, PASSWORD),
  };
});

afterAll(async () => {
  await server?.stop();
});

/** The page's text, tags and comments removed, as a person reads it. */
async function pageText(path: string, cookie: string): Promise<string> {
  const response = await fetch(`${server.url}${path}`, { headers: { cookie } });
  expect(response.status, path).toBe(200);
  const html = await response.text();
  return html
    .replace(/<script[\s\S]*?<\/script>/g, " ")
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");
}

const day = (d: Date) => d.toISOString().slice(0, 10);

describe("the licence pages", () => {
  it("show the licensee each licence's term and terms, and warn from 30 days before its end", async () => {
    const text = await pageText("/datasets", cookies.licensee);
    expect(text).toContain("Your licences");
    expect(text).toContain(`Your licence to ${datasetId}@1.0.0 ends on ${day(endsAt)}, in 13 days.`);
    expect(text).toContain("Pages terms");
    expect(text).toContain("No end");
    // The licence without an end is not warned about.
    expect(text).not.toContain(`${datasetId}@2.0.0 ends on`);
  });

  it("show the owner per licence what it delivered and when, and the licences ending within 30 days", async () => {
    const text = await pageText("/admin/licence-use", cookies.admin);
    expect(text).toContain("Ending within 30 days");
    expect(text).toMatch(new RegExp(`${orgName} · ${datasetId}@1\\.0\\.0 ends on ${day(endsAt)}, in 13 days`));
    // Its row: one download of two episodes, no preview.
    expect(text).toMatch(new RegExp(`${datasetId}@1\\.0\\.0 \\d{4}-\\d\\d-\\d\\d – ${day(endsAt)} Pages terms 1 0 2 `));
  });

  it("show the reviewer the terms an entry was delivered under, and find it by licence and by terms", async () => {
    const entry = await pageText(`/review/disclosures/${downloadId}`, cookies.reviewer);
    expect(entry).toContain(licenceId);
    expect(entry).toContain(`Pages terms SHA-256 ${termsSha256}`);
    for (const query of [`licence=${licenceId}`, `terms=${termsSha256}`]) {
      const found = await pageText(`/review/disclosures?${query}`, cookies.reviewer);
      expect(found, query).toContain("1 entry matches this search.");
    }
  });
});

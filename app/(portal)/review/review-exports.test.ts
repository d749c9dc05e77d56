import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "@/lib/admin/organizations";
import { createUser } from "@/lib/admin/users";
import { getDb } from "@/lib/db/client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import {
  contributedEpisodes,
  importWithFiles,
  keyPrincipal,
  makeDownload,
  parseCsv,
} from "@/lib/testing/disclosure-fixtures";
import { grant, operatorCtx, uniqueId } from "@/lib/testing/fixtures";
import { signInOverHttp } from "@/lib/testing/portal-session";

// The reviewer's CSV exports fetched over HTTP as a signed-in reviewer, through the route handlers
// and the one CSV writer: a contributor and an organisation whose names a spreadsheet would run as
// formulas come out as text.

const PASSWORD = "correct horse battery";
const FORMULA_CONTRIBUTOR = `=HYPERLINK("http://evil.example","x")`;

let server: AppServer;
let cookie: string;
let orgName: string;
let downloadId: string;

beforeAll(async () => {
  const op = operatorCtx();
  orgName = `=cmd|' /C calc'!A0 ${uniqueId("org")}`;
  const org = await createOrganization(op, { slug: uniqueId("org"), name: orgName });
  const datasetId = await importWithFiles(getDb().$client, [
    { version: "1.0.0", episodes: contributedEpisodes(2, 611, [FORMULA_CONTRIBUTOR, "someone-else"]) },
  ]);
  await grant(org.id, datasetId, "1.0.0");
  downloadId = (
    await makeDownload(getDb(), await keyPrincipal(op, org.id), { dataset_id: datasetId, version: "1.0.0" })
  ).download.download_id;
  const email = `${uniqueId("reviewer")}@exports.example`;
  await createUser(op, { email, role: "reviewer", organizationId: null, password: PASSWORD });
  server = await startAppServer();
  cookie = await signInOverHttp(server.url, email, PASSWORD);
});

afterAll(async () => {
  await server?.stop();
});

async function csvOf(path: string): Promise<{ text: string; records: string[][] }> {
  const response = await fetch(`${server.url}${path}`, { headers: { cookie } });
  expect(response.status, path).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/csv/);
  const text = await response.text();
  return { text, records: parseCsv(text) };
}

describe("CSV exports neutralise cells a spreadsheet would run as formulas", () => {
  it("the disclosure log's export, searched by that contributor", async () => {
    const { text, records } = await csvOf(
      `/review/disclosures/export?format=csv&contributor=${encodeURIComponent(FORMULA_CONTRIBUTOR)}`,
    );
    const [header, ...rows] = records;
    const ours = rows.filter((r) => r[header!.indexOf("id")] === downloadId);
    expect(ours).toHaveLength(1);
    expect(ours[0]![header!.indexOf("organization_name")]).toBe(`'${orgName}`);
    expect(text).toContain(`,"'${orgName.replace(/"/g, '""')}",`);
    expect(text).not.toMatch(/(^|,)=/m);
  });

  it("the contributor report's export", async () => {
    const { text, records } = await csvOf(
      `/review/contributors/${encodeURIComponent(FORMULA_CONTRIBUTOR)}/export?format=csv`,
    );
    const [header, ...rows] = records;
    const ours = rows.filter((r) => r[header!.indexOf("download_id")] === downloadId);
    expect(ours).toHaveLength(1);
    expect(ours[0]![header!.indexOf("contributor")]).toBe(`'${FORMULA_CONTRIBUTOR}`);
    expect(ours[0]![header!.indexOf("organization_name")]).toBe(`'${orgName}`);
    expect(text).toContain(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(text).not.toMatch(/(^|,)=/m);
  });

  it("reads a contributor whose name holds a percent sign as itself (decoded once)", async () => {
    const { records } = await csvOf(`/review/contributors/${encodeURIComponent("100% =x")}/export?format=csv`);
    expect(records).toHaveLength(1);
    expect(records[0]![0]).toBe("contributor");
  });
});

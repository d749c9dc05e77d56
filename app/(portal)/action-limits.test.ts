import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/admin/users";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { createTestOrg, grant, importTestDataset, operatorCtx, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";
import { randomIp } from "@/lib/testing/http";
import { signInOverHttp } from "@/lib/testing/portal-session";
import { residentBytes, sendLargeBody } from "@/lib/testing/raw-http";
import { actionIds, callAction } from "@/lib/testing/server-actions";

// What a server action answers a request it must refuse, on a real `next start`: one from another
// origin, one with a body over its limit or without a length, one past the user's per-minute
// budget. Next itself would answer the first three with a 500 carrying a digest.

const PASSWORD = "correct horse battery";
const PER_MINUTE = 4;

let server: AppServer;
let cookie: string;
let otherCookie: string;
let organizationId: string;
let datasetId: string;
let episodeId: string;

beforeAll(async () => {
  const org = await createTestOrg();
  const episodes = randomEpisodes(2, 71);
  const files = episodes.map((e) => ({
    path: `${e.episode_id}.bin`,
    episode_id: e.episode_id,
    size_bytes: 1,
    sha256: "b".repeat(64),
  }));
  datasetId = await importTestDataset([{ version: "1.0.0", episodes, files }]);
  episodeId = episodes[0]!.episode_id;
  await grant(org.id, datasetId, "1.0.0");
  organizationId = org.id;
  server = await startAppServer({ RATE_LIMIT_PER_MINUTE: String(PER_MINUTE) });
  cookie = await newLicensee("first");
  otherCookie = await newLicensee("second");
});

/** A licensee of the test's organisation, signed in: a session with a budget of its own. */
async function newLicensee(who: string): Promise<string> {
  const email = `${uniqueId(who)}@limits.example`;
  await createUser(operatorCtx(), { email, role: "licensee", organizationId, password: PASSWORD });
  return signInOverHttp(server.url, email, PASSWORD);
}

afterAll(async () => {
  await server?.stop();
});

const explorer = () => `/datasets/${datasetId}/1.0.0`;
const download = () => ({ dataset_id: datasetId, version: "1.0.0", episode_ids: [episodeId] });

/** The raw POST of requestDownload, as the browser sends it, with headers of the test's choosing. */
function actionHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "Next-Action": actionIds().get("requestDownload")!.id,
    Accept: "text/x-component",
    "Content-Type": "text/plain;charset=UTF-8",
    Cookie: cookie,
    "X-Forwarded-For": randomIp(),
    ...extra,
  };
}

function expectNoDigest(text: string) {
  expect(text).not.toMatch(/digest/i);
  expect(text).not.toMatch(/Internal Server Error/i);
}

describe("a server action's transport", () => {
  it("refuses a request from another origin with 403, never a 500", async () => {
    const res = await fetch(`${server.url}${explorer()}`, {
      method: "POST",
      headers: actionHeaders({ Origin: "https://attacker.example" }),
      body: JSON.stringify([download()]),
    });
    const text = await res.text();
    expect(res.status, text).toBe(403);
    expectNoDigest(text);
  });

  it("still runs one from the portal's own origin", async () => {
    const res = await fetch(`${server.url}${explorer()}`, {
      method: "POST",
      headers: actionHeaders({ Origin: server.url }),
      body: JSON.stringify([download()]),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"ok":true');
  });

  it("refuses a body declared over its limit with 413 before reading it", async () => {
    const before = residentBytes(server.pid);
    const answer = await sendLargeBody(server.url, {
      path: explorer(),
      headers: actionHeaders(),
      total: 200 * 1024 * 1024,
      declared: true,
    });
    expect(answer.status, answer.text.slice(0, 500)).toBe(413);
    expectNoDigest(answer.text);
    expect(answer.closedByServer).toBe(true);
    expect(answer.sentWhenAnswered).toBeLessThan(16 * 1024 * 1024);
    expect(residentBytes(server.pid) - before).toBeLessThan(48 * 1024 * 1024);
  });

  it("refuses a body without a length (chunked) with 411 before reading it", async () => {
    const answer = await sendLargeBody(server.url, {
      path: explorer(),
      headers: actionHeaders(),
      total: 200 * 1024 * 1024,
    });
    expect(answer.status, answer.text.slice(0, 500)).toBe(411);
    expectNoDigest(answer.text);
    expect(answer.closedByServer).toBe(true);
    expect(answer.sentWhenAnswered).toBeLessThan(16 * 1024 * 1024);
  });
});

describe("the per-minute limit of server actions", () => {
  it("is the API's, per user: past it the portal is told when to try again", async () => {
    // The suite's earlier actions spent some of the first user's budget: the second starts afresh.
    for (let i = 0; i < PER_MINUTE; i++)
      expect(await callAction(server.url, "requestDownload", download(), otherCookie, explorer())).toMatchObject({
        ok: true,
      });
    const refused = await callAction(server.url, "requestDownload", download(), otherCookie, explorer());
    expect(refused).toMatchObject({ ok: false, error: { code: "rate_limited" } });
    expect((refused as { error: { message: string } }).error.message).toMatch(
      new RegExp(`${PER_MINUTE} per minute.*Try again in [1-9][0-9]? s`),
    );
  });

  it("is spent by every action that writes: previews, acknowledgements and access requests too", async () => {
    const pages: Record<string, string> = {
      previewEpisode: `/episodes/${episodeId}`,
      acknowledgeNoticeAction: "/notices",
      requestAccessAction: `/datasets/${datasetId}/request`,
    };
    for (const [action, page] of Object.entries(pages)) {
      const session = await newLicensee(action);
      // An input the action refuses spends the budget as well: it is taken before the input is read,
      // so the refusals say the action ran, and the next one is over the limit.
      for (let i = 0; i < PER_MINUTE; i++)
        expect(await callAction(server.url, action, {}, session, page), action).toMatchObject({
          ok: false,
          error: { code: "invalid_body" },
        });
      expect(await callAction(server.url, action, {}, session, page), action).toMatchObject({
        ok: false,
        error: { code: "rate_limited" },
      });
    }
  });
});

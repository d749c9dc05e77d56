import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { createUser } from "@/lib/admin/users";
import type { UserPrincipal } from "@/lib/auth/principal";
import { getDb } from "@/lib/db/client";
import { createDownload } from "@/lib/downloads/create-download";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { createTestOrg, grant, importTestDataset, operatorCtx, randomEpisodes, uniqueId } from "@/lib/testing/fixtures";
import { signInOverHttp } from "@/lib/testing/portal-session";
import { rawRequest } from "@/lib/testing/raw-http";
import { startStreamingReplica, type StreamingReplica } from "@/lib/testing/streaming-replica";
import { withPort } from "@/lib/testing/postgres-cluster";

// The review pages of the production build with DATABASE_REPLICA_URL: they read the log from a real
// streaming replica of the run's server and say as of when. Replay paused, a download made on the
// primary is missing from them until the replica replays it.

const PASSWORD = "correct horse battery";
let server: AppServer;
let replica: StreamingReplica;
let cookie: string;
let licensee: UserPrincipal;
let datasetId: string;

beforeAll(async () => {
  replica = await startStreamingReplica(inject("databaseUrl"));
  const org = await createTestOrg();
  const episodes = randomEpisodes(3, 71);
  datasetId = await importTestDataset([
    {
      version: "1.0.0",
      episodes,
      files: episodes.map((e) => ({
        path: `${e.episode_id}/cam.mp4`,
        episode_id: e.episode_id,
        stream: "cam",
        size_bytes: 10,
        sha256: "a".repeat(64),
      })),
    },
  ]);
  await grant(org.id, datasetId, "1.0.0");
  const email = `${uniqueId("licensee")}@replica.example`;
  const created = await createUser(operatorCtx(), {
    email,
    role: "licensee",
    organizationId: org.id,
    password: PASSWORD,
  });
  licensee = { kind: "user", userId: created.id, email, role: "licensee", organizationId: org.id };
  const reviewerEmail = `${uniqueId("reviewer")}@replica.example`;
  await createUser(operatorCtx(), { email: reviewerEmail, role: "reviewer", organizationId: null, password: PASSWORD });
  // The replica as the service's role logs in to it, like the primary.
  server = await startAppServer({ DATABASE_REPLICA_URL: withPort(inject("serviceDatabaseUrl"), replica.server.port) });
  cookie = await signInOverHttp(server.url, reviewerEmail, PASSWORD);
}, 240_000);

afterAll(async () => {
  await server?.stop();
  await replica?.remove();
});

const download = async () =>
  (
    await createDownload(
      { db: getDb(), principal: licensee, requestId: uniqueId("req") },
      { body: { dataset_id: datasetId, version: "1.0.0" } },
    )
  ).download.download_id;
const page = (path: string) => rawRequest(server.url, { path, headers: { cookie } });

describe("review pages on a read replica", () => {
  it("show the log as the replica holds it, and say as of when", async () => {
    const first = await download();
    await replica.caughtUp();
    const caughtUp = await page(`/review/disclosures?dataset=${datasetId}`);
    expect(caughtUp.status).toBe(200);
    expect(caughtUp.text).toContain(first);
    expect(caughtUp.text).toMatch(/Read from a replica: the log as of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);

    await replica.pauseReplay();
    let second: string;
    try {
      second = await download();
      const behind = await page(`/review/disclosures?dataset=${datasetId}`);
      expect(behind.status).toBe(200);
      expect(behind.text).toContain(first);
      expect(behind.text).not.toContain(second);
      // The entry itself is not on the replica yet: not found there, though the primary has it.
      expect((await page(`/review/disclosures/${second}`)).status).toBe(404);
      for (const path of ["/review/overview", `/review/disclosures/${first}`])
        expect((await page(path)).text, path).toContain("Read from a replica");
    } finally {
      await replica.resumeReplay();
    }
    await replica.caughtUp();
    expect((await page(`/review/disclosures?dataset=${datasetId}`)).text).toContain(second);
  });
});

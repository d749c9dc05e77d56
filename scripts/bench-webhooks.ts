// npm run bench:webhooks -- [--deliveries 3000] [--endpoints 4]
// Webhook deliveries per second to a local receiver: notices enqueued for one organisation with
// several endpoints (as the notice code does), then the delivery worker started and timed until
// the receiver has every delivery, each signature verified, and every attempt is recorded. Prints
// a summary on stderr, then one JSON line (the last line of stdout) with `deliveries_per_s`.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import { Webhook } from "standardwebhooks";

const { values } = parseArgs({
  options: {
    deliveries: { type: "string", default: "3000" },
    endpoints: { type: "string", default: "4" },
  },
});
const deliveries = Number(values.deliveries);
const endpointCount = Number(values.endpoints);
if (!Number.isInteger(deliveries) || deliveries < 100)
  throw new Error("--deliveries must be a whole number of at least 100");
if (!Number.isInteger(endpointCount) || endpointCount < 1 || endpointCount > 100)
  throw new Error("--endpoints must be a whole number from 1 to 100");
const notices = Math.ceil(deliveries / endpointCount);

// Its own data directory, and before anything reads the environment: the receiver is on this machine.
process.env.DAS_DATA_DIR ??= ".data/bench-webhooks";
process.env.WEBHOOKS_ALLOW_PRIVATE = "1";
process.env.NOTICE_WORKER = "off";

const { startEmbeddedDefault } = await import("@/lib/dev/embedded-default");
const { createDb, sqlOf } = await import("@/lib/db/client");
const { withTx } = await import("@/lib/db/tx");
const { createOrganization } = await import("@/lib/admin/organizations");
const { addWebhookEndpoint } = await import("@/lib/notice-delivery/webhook-endpoints");
const { enqueueNoticeDeliveries } = await import("@/lib/notice-delivery/enqueue");
const { startNoticeDeliveryWorker } = await import("@/lib/notice-delivery/worker");

const runtime = await startEmbeddedDefault();
Object.assign(process.env, runtime.env);
const db = createDb(runtime.env.DATABASE_URL!, { max: 10 });
const ctx = {
  db,
  requestId: "bench-webhooks",
  principal: { kind: "operator" as const, name: userInfo().username, organizationId: null },
};

// The receiver verifies each signature, as a real one must, and counts distinct messages per endpoint.
const secrets = new Map<string, Webhook>();
const seen = new Set<string>();
let unverified = 0;
let lastAt = 0;
let allSeen: () => void = () => {};
const done = new Promise<void>((resolve) => (allSeen = resolve));
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const endpoint = req.url!.slice(1);
    try {
      secrets.get(endpoint)!.verify(Buffer.concat(chunks), req.headers as Record<string, string>);
      seen.add(`${endpoint} ${req.headers["webhook-id"]}`);
    } catch {
      unverified++;
    }
    res.writeHead(204).end();
    if (seen.size === notices * endpointCount) {
      lastAt = performance.now();
      allSeen();
    }
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

try {
  const org = await createOrganization(ctx, { slug: `bench-${Date.now().toString(36)}` });
  for (let i = 0; i < endpointCount; i++) {
    const name = `endpoint-${i}`;
    const added = await addWebhookEndpoint(ctx, { organizationId: org.id, url: `${base}/${name}` });
    secrets.set(name, new Webhook(added.secret));
  }
  const enqueueStarted = performance.now();
  // One call for every notice, as the notice code enqueues a withdrawal's notices.
  await withTx(ctx, (tx) =>
    enqueueNoticeDeliveries(
      tx,
      Array.from({ length: notices }, (_, n) => ({
        organisationId: org.id,
        noticeId: `bench-${org.id}-${n}`,
        eventType: "notice.withdrawal",
        payload: { notice: n, episode_ids: [`ep-${n}`] },
      })),
    ),
  );
  const enqueueS = (performance.now() - enqueueStarted) / 1000;
  process.stderr.write(`enqueued ${notices} notices x ${endpointCount} endpoints in ${enqueueS.toFixed(2)} s\n`);

  const started = performance.now();
  const worker = await startNoticeDeliveryWorker({ url: runtime.env.DATABASE_URL!, db, pollingIntervalSeconds: 0.5 });
  const timeout = setTimeout(() => allSeen(), 300_000);
  await done;
  clearTimeout(timeout);
  const seconds = (lastAt - started) / 1000;
  await worker.stop();
  const [recorded] = await sqlOf(db)`
    select count(*)::int as delivered from notice_delivery_attempts where organization_id = ${org.id} and delivered`;
  const total = notices * endpointCount;
  process.stderr.write(
    `delivered ${seen.size} of ${total} (${recorded!.delivered} attempts recorded delivered, ${unverified} unverified) in ${seconds.toFixed(2)} s\n`,
  );
  if (seen.size !== total || unverified) throw new Error("not every delivery arrived verified");
  process.stdout.write(
    `${JSON.stringify({
      deliveries: total,
      endpoints: endpointCount,
      enqueue_s: Number(enqueueS.toFixed(3)),
      deliver_s: Number(seconds.toFixed(3)),
      deliveries_per_s: Math.round(total / seconds),
    })}\n`,
  );
} finally {
  receiver.close();
  await db.$client.end({ timeout: 5 });
  await runtime.stop();
}

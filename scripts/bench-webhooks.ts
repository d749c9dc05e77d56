// npm run bench:webhooks -- [--deliveries 3000] [--endpoints 4]
// Webhook deliveries per second to a local receiver: notices enqueued for one organisation with
// several endpoints (as the notice code does), then the delivery worker started and timed until
// the receiver has every delivery, each signature verified, and every attempt is recorded. Prints
// a summary on stderr, then one JSON line (the last line of stdout) with `deliveries_per_s`.
import { userInfo } from "node:os";
import { parseArgs } from "node:util";

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
const { startVerifyingReceiver, timeDeliveries } = await import("./bench/webhook-receiver");

const runtime = await startEmbeddedDefault();
Object.assign(process.env, runtime.env);
const db = createDb(runtime.env.DATABASE_URL!, { max: 10 });
const ctx = {
  db,
  requestId: "bench-webhooks",
  principal: { kind: "operator" as const, name: userInfo().username, organizationId: null },
};

const receiver = await startVerifyingReceiver();

try {
  const org = await createOrganization(ctx, { slug: `bench-${Date.now().toString(36)}` });
  for (let i = 0; i < endpointCount; i++) {
    const name = `endpoint-${i}`;
    const added = await addWebhookEndpoint(ctx, { organizationId: org.id, url: `${receiver.base}/${name}` });
    receiver.verifyWith(name, added.secret);
  }
  const enqueueStarted = performance.now();
  // One call for every notice, as the notice code enqueues a withdrawal's notices.
  await withTx(ctx, (tx) =>
    enqueueNoticeDeliveries(
      tx,
      Array.from({ length: notices }, (_, n) => ({
        organizationId: org.id,
        noticeId: `bench-${org.id}-${n}`,
        eventType: "notice.withdrawal",
        payload: { notice: n, episode_ids: [`ep-${n}`] },
      })),
    ),
  );
  const enqueueS = (performance.now() - enqueueStarted) / 1000;
  process.stderr.write(`enqueued ${notices} notices x ${endpointCount} endpoints in ${enqueueS.toFixed(2)} s\n`);

  const total = notices * endpointCount;
  const { seconds, deliveriesPerSecond } = await timeDeliveries({
    url: runtime.env.DATABASE_URL!,
    db,
    receiver,
    total,
  });
  const [recorded] = await sqlOf(db)`
    select count(*)::int as delivered from notice_delivery_attempts where organization_id = ${org.id} and delivered`;
  process.stderr.write(
    `delivered ${receiver.seen()} of ${total} (${recorded!.delivered} attempts recorded delivered) in ${seconds.toFixed(2)} s\n`,
  );
  process.stdout.write(
    `${JSON.stringify({
      deliveries: total,
      endpoints: endpointCount,
      enqueue_s: Number(enqueueS.toFixed(3)),
      deliver_s: Number(seconds.toFixed(3)),
      deliveries_per_s: deliveriesPerSecond,
    })}\n`,
  );
} finally {
  await receiver.close();
  await db.$client.end({ timeout: 5 });
  await runtime.stop();
}

// Webhook deliveries to a receiver on this machine, for bench:webhooks and bench:withdrawal: the
// receiver verifies every signature, as a real one must, and counts distinct messages per endpoint
// (an endpoint is a path of its own); `timeDeliveries` starts the product's delivery worker and
// times it until the receiver has every delivery.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import type { Db } from "@/lib/db/client";
import { startNoticeWorker } from "@/lib/notices/worker";

export type VerifyingReceiver = {
  /** http://127.0.0.1:port; an endpoint's URL is `${base}/${name}`. */
  base: string;
  /** Deliveries to `name` are verified with this endpoint's signing secret. */
  verifyWith(name: string, secret: string): void;
  /** Distinct (endpoint, webhook-id) pairs received with a valid signature. */
  seen(): number;
  unverified(): number;
  /** Resolves with the time of the delivery that made `count`, or null after `timeoutMs`. */
  reached(count: number, timeoutMs: number): Promise<number | null>;
  close(): Promise<void>;
};

export async function startVerifyingReceiver(): Promise<VerifyingReceiver> {
  const secrets = new Map<string, Webhook>();
  const seen = new Set<string>();
  let unverified = 0;
  let waiting: { count: number; resolve: (at: number) => void } | null = null;
  const server = http.createServer((req, res) => {
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
      if (waiting && seen.size >= waiting.count) {
        waiting.resolve(performance.now());
        waiting = null;
      }
    });
  });
  // Many concurrent deliveries: keep the sockets the worker reuses.
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    verifyWith: (name, secret) => {
      secrets.set(name, new Webhook(secret));
    },
    seen: () => seen.size,
    unverified: () => unverified,
    reached: (count, timeoutMs) =>
      new Promise((resolve) => {
        if (seen.size >= count) return resolve(performance.now());
        const timer = setTimeout(() => resolve(null), timeoutMs);
        waiting = {
          count,
          resolve: (at) => {
            clearTimeout(timer);
            resolve(at);
          },
        };
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Starts the delivery worker (as a server runs it, without the schedule) on jobs already queued,
 * and times it until `receiver` has `total` verified deliveries. Throws unless every one arrived
 * verified within `timeoutMs`.
 */
export async function timeDeliveries(options: {
  url: string;
  db: Db;
  receiver: VerifyingReceiver;
  total: number;
  timeoutMs?: number;
}): Promise<{ seconds: number; deliveriesPerSecond: number }> {
  const { receiver, total } = options;
  const started = performance.now();
  const worker = await startNoticeWorker({
    url: options.url,
    db: options.db,
    pollingIntervalSeconds: 0.5,
    schedule: false,
  });
  const lastAt = await receiver.reached(total, options.timeoutMs ?? 300_000);
  await worker.stop();
  if (lastAt === null || receiver.unverified())
    throw new Error(
      `not every delivery arrived verified: ${receiver.seen()} of ${total}, ${receiver.unverified()} unverified`,
    );
  const seconds = (lastAt - started) / 1000;
  return { seconds, deliveriesPerSecond: Math.round(total / seconds) };
}

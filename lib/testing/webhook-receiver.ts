import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One request as the receiver saw it, and whether its signature held under the endpoint's secret. */
export type ReceivedWebhook = { id: string; timestamp: number; body: string; verified: boolean; status: number };

export type WebhookReceiver = {
  /** Where the service is told to deliver (`http://127.0.0.1:<port><path>`). */
  url: string;
  /** Every request, in the order it arrived. */
  received: ReceivedWebhook[];
  /** The secret the service minted for the endpoint: every later request is checked with it. */
  verifyWith(secret: string): void;
  /** The bodies of the requests that arrived, parsed, each with its webhook-id. */
  events<T = Record<string, unknown>>(): (T & { id: string })[];
  /** Resolves once `count` requests have arrived, or after `timeoutMs` (the caller asserts what came). */
  waitFor(count: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
};

/**
 * A real HTTP receiver on this machine that checks every signature with the standardwebhooks
 * package, as a licensee's would: tests assert on `received` (and `verified`), never on what the
 * service meant to send. `status(n)` answers the n-th request (from 0); 204 by default.
 */
export async function startWebhookReceiver(
  options: { path?: string; status?: (index: number) => number; answer?: (status: number) => string } = {},
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let secret = "";
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let verified = false;
      try {
        new Webhook(secret).verify(body, req.headers as Record<string, string>);
        verified = true;
      } catch {}
      const status = options.status?.(received.length) ?? 204;
      const headers = req.headers;
      received.push({
        id: String(headers["webhook-id"]),
        timestamp: Number(headers["webhook-timestamp"]),
        body,
        verified,
        status,
      });
      res.writeHead(status).end(options.answer?.(status));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${options.path ?? "/"}`,
    received,
    verifyWith: (s) => {
      secret = s;
    },
    events: <T>() => received.map((r) => ({ ...(JSON.parse(r.body) as T), id: r.id })),
    waitFor: async (count, timeoutMs) => {
      const until = Date.now() + timeoutMs;
      while (received.length < count && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

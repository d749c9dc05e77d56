import http from "node:http";
import https from "node:https";
import { Webhook } from "standardwebhooks";
import { isIP } from "node:net";
import { checkWebhookAddresses, guardedLookup, parseWebhookUrl } from "./address-guard";

/** Bytes of a receiver's answer read at most: only its status matters, and a receiver must not make us buffer. */
export const RESPONSE_BODY_CAP = 64 * 1024;

export type WebhookMessage = {
  url: string;
  /** `whsec_...` */
  secret: string;
  /** webhook-id: the same on every attempt of this message. */
  messageId: string;
  /** The exact bytes signed and sent. */
  body: string;
};

export type AttemptOutcome = {
  delivered: boolean;
  statusCode: number | null;
  /** Why it failed, in words safe to show an admin (no secret, no body beyond a short excerpt). */
  error: string | null;
  durationMs: number;
};

// Keep-alive: a burst of notices to one receiver reuses its connections. The guarded lookup runs
// for every new connection, so a reused one was checked when it was made, under the same setting
// (one pair of agents per setting).
const agentPair = () => ({
  "http:": new http.Agent({ keepAlive: true, maxSockets: 32, timeout: 30_000 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 32, timeout: 30_000 }),
});
const agents = { public: agentPair(), anyAddress: agentPair() };

/**
 * One attempt: POST the body signed per the Standard Webhooks specification (webhook-id,
 * webhook-timestamp of this attempt, webhook-signature). A 2xx answer is delivered; anything else,
 * a redirect included (never followed), a timeout or an address that is not public is a failure
 * the queue retries.
 */
export async function postWebhook(
  message: WebhookMessage,
  options: { timeoutMs: number; allowPrivate: boolean; now?: Date },
): Promise<AttemptOutcome> {
  const started = performance.now();
  const done = (outcome: Omit<AttemptOutcome, "durationMs">): AttemptOutcome => ({
    ...outcome,
    durationMs: Math.round(performance.now() - started),
  });
  let url: URL;
  try {
    url = parseWebhookUrl(message.url);
    // Node connects to an address literal without a lookup: checked here instead.
    if (isIP(url.hostname.replace(/^\[(.*)\]$/, "$1"))) await checkWebhookAddresses(url, options.allowPrivate);
  } catch (error) {
    return done({ delivered: false, statusCode: null, error: (error as Error).message });
  }
  const at = options.now ?? new Date();
  const signature = new Webhook(message.secret).sign(message.messageId, at, message.body);
  const transport = url.protocol === "https:" ? https : http;
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<AttemptOutcome, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(outcome));
    };
    const request = transport.request(
      url,
      {
        method: "POST",
        agent: agents[options.allowPrivate ? "anyAddress" : "public"][url.protocol as "http:" | "https:"],
        lookup: guardedLookup(options.allowPrivate) as never,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(message.body),
          "user-agent": "dataset-access-service-webhooks",
          "webhook-id": message.messageId,
          "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
          "webhook-signature": signature,
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        const excerpt: Buffer[] = [];
        response.on("data", (chunk: Buffer) => {
          if (read < 200) excerpt.push(chunk.subarray(0, 200 - read));
          read += chunk.length;
          // Past the cap the answer is not read further: the status is already known.
          if (read > RESPONSE_BODY_CAP) response.destroy();
        });
        const conclude = () => {
          if (status >= 200 && status < 300) finish({ delivered: true, statusCode: status, error: null });
          else {
            const said = Buffer.concat(excerpt).toString("utf8").replace(/\s+/g, " ").trim();
            const why =
              status >= 300 && status < 400
                ? `redirect to ${response.headers.location ?? "(no location)"} not followed`
                : `answered ${status}`;
            finish({ delivered: false, statusCode: status, error: said ? `${why}: ${said}` : why });
          }
        };
        response.on("end", conclude);
        response.on("close", conclude);
        response.on("error", conclude);
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({ delivered: false, statusCode: null, error: `no answer within ${options.timeoutMs} ms` });
    }, options.timeoutMs);
    request.on("error", (error: NodeJS.ErrnoException) => {
      finish({
        delivered: false,
        statusCode: null,
        error: error.code === "EADDRNOTPUBLIC" ? error.message : `${error.code ?? "error"}: ${error.message}`,
      });
    });
    request.end(message.body);
  });
}

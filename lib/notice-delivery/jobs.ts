import { createHash } from "node:crypto";
import { env } from "../env";
import { base62 } from "../ids";
import type { WithdrawalTelling } from "../notices/withdrawal-message";

/** What every delivery job names: whose notice, which event, which message. */
export type JobCommon = {
  organizationId: string;
  noticeId: string;
  eventType: string;
  messageId: string;
};

/**
 * What a webhook job carries: everything needed to send it again, byte for byte. Either the body,
 * fixed at enqueue, or (a withdrawal notice, whose body can be tens of kilobytes) which telling of
 * the notice it is and the body's timestamp: the worker writes the body from the notice, which is
 * append-only, so every attempt sends the same bytes.
 */
export type WebhookJobData = JobCommon & { endpointId: string } & (
    | { body: string }
    | { withdrawal: WithdrawalTelling; timestamp: string }
  );

/** What an email job carries: the message, or which telling of a withdrawal notice it is. */
export type EmailJobData = JobCommon & ({ subject: string; text: string } | { withdrawal: WithdrawalTelling });

/**
 * The message's id (webhook-id, and the email's Message-ID): derived from the notice and the event
 * (and, for a reminder, which one), so an attempt, a retry and even a second enqueue of the same
 * notice carry the same id, and a receiver that deduplicates by it acts once.
 */
export function messageIdOf(noticeId: string, eventType: string, occurrence?: string): string {
  const named = occurrence === undefined ? `${noticeId}\n${eventType}` : `${noticeId}\n${eventType}\n${occurrence}`;
  return `msg_${base62(createHash("sha256").update(named).digest().subarray(0, 16))}`;
}

/** How the queue retries: pg-boss's exponential backoff with jitter, from the environment. */
export function retryPolicy() {
  const e = env();
  return {
    retryLimit: e.NOTICE_RETRY_LIMIT,
    retryDelay: e.NOTICE_RETRY_DELAY_S,
    retryBackoff: true,
    // A worker that vanished mid-attempt gives its jobs back after this; the attempt's own timeout
    // is far shorter, so a live worker always finishes first.
    expireInSeconds: Math.ceil(e.WEBHOOK_TIMEOUT_MS / 1000) + 60,
  };
}

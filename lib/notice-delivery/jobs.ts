import { createHash } from "node:crypto";
import { env } from "../env";
import { base62 } from "../ids";
import type { Sql } from "../db/client";

/** What every delivery job names: whose notice, which telling of it, which message. */
export type JobCommon = {
  organizationId: string;
  noticeId: string;
  eventType: string;
  messageId: string;
  /** Which telling of the notice, when one is told more than once by the same event (`reminder-2`). */
  occurrence?: string;
};

/**
 * A webhook job: the endpoint, and the body's timestamp (when the notice was told). The body's
 * `data` is written at each attempt by the renderer the worker is handed, from the notice, which
 * is append-only: every attempt sends the same bytes.
 */
export type WebhookJobData = JobCommon & { endpointId: string; timestamp: string };

/** An email job: its subject and text are written at each attempt like a webhook's body. */
export type EmailJobData = JobCommon;

/** What a notice says when it leaves: the webhook body's `data`, and the email. */
export type NoticeMessage = { data: unknown; email: { subject: string; text: string } };

/**
 * Writes what a batch's jobs say, by message id, from their notices: the worker is handed it
 * (lib/notices/worker.ts hands it lib/notices/messages.ts), so delivery knows nothing of what a
 * notice is. A job missing from the answer has no notice to tell, and is not sent.
 */
export type NoticeRenderer = (sql: Sql, jobs: JobCommon[]) => Promise<Map<string, NoticeMessage>>;

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

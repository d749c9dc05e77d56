import nodemailer, { type Transporter } from "nodemailer";
import { and, eq, isNull } from "drizzle-orm";
import { users } from "../db/schema";
import type { Db } from "../db/client";
import type { JobCommon } from "./jobs";
import type { AttemptOutcome } from "./post-webhook";

const transports = new Map<string, Transporter>();

function transportFor(smtpUrl: string): Transporter {
  let transport = transports.get(smtpUrl);
  if (!transport) {
    transport = nodemailer.createTransport(smtpUrl);
    transports.set(smtpUrl, transport);
  }
  return transport;
}

/** The organisation's users who can still sign in: the people a notice is for. */
export async function noticeRecipients(db: Db, organizationId: string): Promise<string[]> {
  const rows = await db
    .select({ email: users.email })
    .from(users)
    .where(and(eq(users.organizationId, organizationId), isNull(users.disabledAt)))
    .orderBy(users.email);
  return rows.map((r) => r.email);
}

/** One attempt: a plain-text message to the organisation's users through SMTP_URL. */
export async function sendNoticeEmail(
  db: Db,
  job: JobCommon & { subject: string; text: string },
  settings: { smtpUrl: string | undefined; from: string },
): Promise<AttemptOutcome & { permanent?: boolean }> {
  const started = performance.now();
  const done = (outcome: Omit<AttemptOutcome, "durationMs"> & { permanent?: boolean }) => ({
    ...outcome,
    durationMs: Math.round(performance.now() - started),
  });
  if (!settings.smtpUrl) return done({ delivered: false, statusCode: null, error: "SMTP_URL is not set" });
  const to = await noticeRecipients(db, job.organizationId);
  if (!to.length)
    return done({ delivered: false, statusCode: null, error: "the organisation has no active users", permanent: true });
  try {
    const info = await transportFor(settings.smtpUrl).sendMail({
      from: settings.from,
      to,
      subject: job.subject,
      text: job.text,
      messageId: `<${job.messageId}@dataset-access-service>`,
      headers: { "X-Notice-Id": job.noticeId, "X-Notice-Event": job.eventType },
    });
    const code = Number.parseInt(String(info.response ?? "").slice(0, 3), 10);
    return done({ delivered: true, statusCode: Number.isFinite(code) ? code : null, error: null });
  } catch (error) {
    const e = error as Error & { responseCode?: number; code?: string };
    return done({ delivered: false, statusCode: e.responseCode ?? null, error: `${e.code ?? "error"}: ${e.message}` });
  }
}

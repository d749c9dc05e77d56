import { bigint, boolean, index, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, timestamptz } from "../columns";
import { organizations } from "./organizations";

/** A URL an organisation's notices are posted to, registered by an admin. */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: text().primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id),
    url: text().notNull(),
    description: text(),
    /** The signing secret sealed under a key derived from APP_SECRET (lib/notice-delivery/secret-box.ts). */
    secretSealed: text("secret_sealed").notNull(),
    createdAt: createdAt(),
    removedAt: timestamptz("removed_at"),
  },
  (t) => [index("webhook_endpoints_organization_idx").on(t.organizationId)],
);

export const DELIVERY_CHANNELS = ["webhook", "email"] as const;
export type DeliveryChannel = (typeof DELIVERY_CHANNELS)[number];

/** One row per delivery attempt, written when it ends; append-only. */
export const noticeDeliveryAttempts = pgTable("notice_delivery_attempts", {
  id: bigint({ mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
  jobId: uuid("job_id").notNull(),
  channel: text().$type<DeliveryChannel>().notNull(),
  organizationId: text("organization_id")
    .notNull()
    .references(() => organizations.id),
  endpointId: text("endpoint_id").references(() => webhookEndpoints.id),
  noticeId: text("notice_id").notNull(),
  eventType: text("event_type").notNull(),
  messageId: text("message_id").notNull(),
  attempt: integer().notNull(),
  attemptedAt: createdAt("attempted_at"),
  durationMs: integer("duration_ms").notNull(),
  statusCode: integer("status_code"),
  error: text(),
  delivered: boolean().notNull(),
  willRetry: boolean("will_retry").notNull(),
});

-- Where notices are delivered beyond the portal and the API (issue 26): webhook endpoints that an
-- admin registers per organisation, and every attempt to deliver a notice to one of them or by
-- email. The jobs themselves live in pg-boss's own schema (pgboss), which pg-boss creates and
-- migrates when the first process starts it (docs/decisions/0090-notice-deliveries-through-pg-boss.md).
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL REFERENCES "organizations"("id"),
	"url" text NOT NULL,
	"description" text,
	-- The signing secret, sealed with AES-256-GCM under a key derived from APP_SECRET
	-- (lib/notice-delivery/secret-box.ts): never at rest in plaintext.
	"secret_sealed" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	-- A removed endpoint is kept, so that its attempts still name it; nothing is sent to it any more.
	"removed_at" timestamp with time zone,
	CONSTRAINT "webhook_endpoints_url_scheme" CHECK ("url" ~ '^https?://')
);--> statement-breakpoint
CREATE INDEX "webhook_endpoints_organization_idx" ON "webhook_endpoints" USING btree ("organization_id") WHERE "removed_at" IS NULL;--> statement-breakpoint
-- One row per attempt, written when it ends: what the receiver answered (or why there was no
-- answer), and whether the queue will try again. Append-only: it is the record admins read.
CREATE TABLE "notice_delivery_attempts" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY NOT NULL,
	"job_id" uuid NOT NULL,
	"channel" text NOT NULL,
	"organization_id" text NOT NULL REFERENCES "organizations"("id"),
	"endpoint_id" text REFERENCES "webhook_endpoints"("id"),
	"notice_id" text NOT NULL,
	"event_type" text NOT NULL,
	-- The webhook-id header: the same on every attempt of one message, so receivers deduplicate.
	"message_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"attempted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"duration_ms" integer NOT NULL,
	"status_code" integer,
	"error" text,
	"delivered" boolean NOT NULL,
	"will_retry" boolean NOT NULL,
	CONSTRAINT "notice_delivery_attempts_channel_check" CHECK ("channel" in ('webhook', 'email')),
	CONSTRAINT "notice_delivery_attempts_endpoint_for_webhooks" CHECK (("channel" = 'webhook') = ("endpoint_id" IS NOT NULL)),
	CONSTRAINT "notice_delivery_attempts_attempt_positive" CHECK ("attempt" > 0)
);--> statement-breakpoint
CREATE INDEX "notice_delivery_attempts_time_idx" ON "notice_delivery_attempts" USING btree ("attempted_at", "id");--> statement-breakpoint
CREATE INDEX "notice_delivery_attempts_notice_idx" ON "notice_delivery_attempts" USING btree ("notice_id", "id");--> statement-breakpoint
CREATE INDEX "notice_delivery_attempts_endpoint_idx" ON "notice_delivery_attempts" USING btree ("endpoint_id", "id");--> statement-breakpoint
CREATE INDEX "notice_delivery_attempts_organization_idx" ON "notice_delivery_attempts" USING btree ("organization_id", "id");--> statement-breakpoint
CREATE FUNCTION notice_delivery_attempts_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'delivery attempts are append-only: % on % is refused', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'raise_exception', HINT = 'They are the record of what was sent to whom and what came back.';
END
$$;--> statement-breakpoint
CREATE TRIGGER notice_delivery_attempts_append_only BEFORE UPDATE OR DELETE ON notice_delivery_attempts
  FOR EACH ROW EXECUTE FUNCTION notice_delivery_attempts_append_only();--> statement-breakpoint
CREATE TRIGGER notice_delivery_attempts_no_truncate BEFORE TRUNCATE ON notice_delivery_attempts
  FOR EACH STATEMENT EXECUTE FUNCTION notice_delivery_attempts_append_only();

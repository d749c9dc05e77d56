-- Verified checkpoints of the disclosure log: the head (seq, hash) a successful walk reached and
-- when. Incremental verification starts from the newest one instead of the genesis. They are a
-- speed-up, not evidence (whoever can rewrite the log can rewrite these too; the signed digests in
-- the object store are the evidence), yet append-only like the log, so that a checkpoint is never
-- moved back quietly by the application.
CREATE TABLE "disclosure_checkpoints" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "disclosure_checkpoints_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"seq" bigint NOT NULL,
	"hash" text NOT NULL,
	"verified_at" timestamp with time zone DEFAULT now() NOT NULL,
	"mode" text NOT NULL,
	"entries_checked" bigint NOT NULL,
	"duration_ms" integer NOT NULL,
	CONSTRAINT "disclosure_checkpoints_mode_check" CHECK ("disclosure_checkpoints"."mode" in ('full', 'incremental')),
	CONSTRAINT "disclosure_checkpoints_seq_positive" CHECK ("disclosure_checkpoints"."seq" > 0)
);
--> statement-breakpoint
CREATE INDEX "disclosure_checkpoints_seq_idx" ON "disclosure_checkpoints" USING btree ("seq","verified_at");--> statement-breakpoint
CREATE INDEX "disclosure_checkpoints_full_idx" ON "disclosure_checkpoints" USING btree ("verified_at") WHERE "disclosure_checkpoints"."mode" = 'full';--> statement-breakpoint
-- Which head digests this service wrote to the object store, and when: the index the periodic
-- writer consults (is one due? what does the next one link to?). The objects themselves are the
-- evidence; this table only says what should be there.
CREATE TABLE "disclosure_digests" (
	"key" text PRIMARY KEY NOT NULL,
	"bucket" text NOT NULL,
	"seq" bigint NOT NULL,
	"hash" text NOT NULL,
	"digest_time" timestamp with time zone NOT NULL,
	"sha256" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "disclosure_digests_time_idx" ON "disclosure_digests" USING btree ("digest_time");--> statement-breakpoint
CREATE TRIGGER disclosure_checkpoints_append_only BEFORE UPDATE OR DELETE ON disclosure_checkpoints
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_checkpoints_no_truncate BEFORE TRUNCATE ON disclosure_checkpoints
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_digests_append_only BEFORE UPDATE OR DELETE ON disclosure_digests
  FOR EACH ROW EXECUTE FUNCTION disclosure_log_append_only();--> statement-breakpoint
CREATE TRIGGER disclosure_digests_no_truncate BEFORE TRUNCATE ON disclosure_digests
  FOR EACH STATEMENT EXECUTE FUNCTION disclosure_log_append_only();

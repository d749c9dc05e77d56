-- Listed datasets, terms acceptances and access requests (issue 25). Written by hand.
--
-- A dataset is `unlisted` (every dataset so far: only its licensees see it) or `listed` (its catalog
-- facts are shown to every signed-in member of an organisation in the portal, who may then ask for a
-- licence). The API's rule does not read this column: a key sees only what its licences give.
ALTER TABLE "datasets" ADD COLUMN "listing" text DEFAULT 'unlisted' NOT NULL;--> statement-breakpoint
ALTER TABLE "datasets" ADD CONSTRAINT "datasets_listing_check" CHECK ("datasets"."listing" in ('unlisted', 'listed'));--> statement-breakpoint
-- Who accepted which terms document, for which organisation, and when: evidence, so append-only
-- like the disclosure log and the terms themselves.
CREATE TABLE "terms_acceptances" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"organization_id" text NOT NULL,
	"terms_sha256" text NOT NULL,
	"accepted_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "terms_acceptances" ADD CONSTRAINT "terms_acceptances_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "terms_acceptances" ADD CONSTRAINT "terms_acceptances_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "terms_acceptances" ADD CONSTRAINT "terms_acceptances_terms_sha256_terms_documents_sha256_fk" FOREIGN KEY ("terms_sha256") REFERENCES "public"."terms_documents"("sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE FUNCTION terms_acceptances_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'terms acceptances are append-only: % on % is refused', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'raise_exception', HINT = 'An acceptance is evidence of what was accepted; record a new one instead.';
END
$$;--> statement-breakpoint
CREATE TRIGGER terms_acceptances_append_only BEFORE UPDATE OR DELETE ON terms_acceptances
  FOR EACH ROW EXECUTE FUNCTION terms_acceptances_append_only();--> statement-breakpoint
CREATE TRIGGER terms_acceptances_no_truncate BEFORE TRUNCATE ON terms_acceptances
  FOR EACH STATEMENT EXECUTE FUNCTION terms_acceptances_append_only();--> statement-breakpoint
-- A request for a licence to one version, made with an acceptance. It is decided once: approved
-- (the licence it created) or rejected (the reason the requester reads). The trigger lets a pending
-- request be decided and refuses every other change and every delete.
CREATE TABLE "access_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"user_id" text NOT NULL,
	"version_id" integer NOT NULL,
	"purpose" text NOT NULL,
	"acceptance_id" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_at" timestamp with time zone,
	"decided_by" text,
	"rejection_reason" text,
	"licence_id" text,
	CONSTRAINT "access_requests_acceptance_key" UNIQUE("acceptance_id"),
	CONSTRAINT "access_requests_licence_key" UNIQUE("licence_id"),
	CONSTRAINT "access_requests_purpose_present" CHECK (length(btrim("access_requests"."purpose")) > 0),
	CONSTRAINT "access_requests_decision_check" CHECK (
		("access_requests"."status" = 'pending' and "access_requests"."decided_at" is null and "access_requests"."licence_id" is null and "access_requests"."rejection_reason" is null)
		or ("access_requests"."status" = 'approved' and "access_requests"."decided_at" is not null and "access_requests"."decided_by" is not null and "access_requests"."licence_id" is not null and "access_requests"."rejection_reason" is null)
		or ("access_requests"."status" = 'rejected' and "access_requests"."decided_at" is not null and "access_requests"."decided_by" is not null and "access_requests"."licence_id" is null and length(btrim("access_requests"."rejection_reason")) > 0))
);
--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_version_id_dataset_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."dataset_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_acceptance_id_terms_acceptances_id_fk" FOREIGN KEY ("acceptance_id") REFERENCES "public"."terms_acceptances"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_licence_id_licences_id_fk" FOREIGN KEY ("licence_id") REFERENCES "public"."licences"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- One pending request per organisation and version: a second one waits for the first's decision.
CREATE UNIQUE INDEX "access_requests_pending_key" ON "access_requests" USING btree ("organization_id","version_id") WHERE "access_requests"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "access_requests_status_idx" ON "access_requests" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "access_requests_organization_idx" ON "access_requests" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE FUNCTION access_requests_decided_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.status = 'pending' AND NEW.status <> 'pending'
     AND NEW.id = OLD.id AND NEW.organization_id = OLD.organization_id AND NEW.user_id = OLD.user_id
     AND NEW.version_id = OLD.version_id AND NEW.purpose = OLD.purpose
     AND NEW.acceptance_id = OLD.acceptance_id AND NEW.created_at = OLD.created_at THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'access requests are decided once: % on % is refused', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'raise_exception', HINT = 'A pending request can be approved or rejected; nothing else changes.';
END
$$;--> statement-breakpoint
CREATE TRIGGER access_requests_decided_once BEFORE UPDATE OR DELETE ON access_requests
  FOR EACH ROW EXECUTE FUNCTION access_requests_decided_once();--> statement-breakpoint
CREATE TRIGGER access_requests_no_truncate BEFORE TRUNCATE ON access_requests
  FOR EACH STATEMENT EXECUTE FUNCTION access_requests_decided_once();

-- Licences with a term and the terms they were granted under (issue 25). The table and columns are
-- what `npm run db:generate` writes from lib/db/schema/terms.ts and licences.ts; the backfill, the
-- order of the column changes and the triggers are written by hand.
--
-- A terms document is identified by the SHA-256 of its exact text, which the database checks, and
-- is immutable like the disclosure log: a new wording is a new document, so a licence names the
-- very bytes it was granted under.
CREATE TABLE "terms_documents" (
	"sha256" text PRIMARY KEY NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"dataset_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	CONSTRAINT "terms_documents_sha256_of_body" CHECK ("terms_documents"."sha256" = encode(sha256(convert_to("terms_documents"."body", 'UTF8')), 'hex')),
	CONSTRAINT "terms_documents_title_present" CHECK (length(btrim("terms_documents"."title")) > 0)
);
--> statement-breakpoint
ALTER TABLE "terms_documents" ADD CONSTRAINT "terms_documents_dataset_id_datasets_id_fk" FOREIGN KEY ("dataset_id") REFERENCES "public"."datasets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "terms_documents_dataset_idx" ON "terms_documents" USING btree ("dataset_id");--> statement-breakpoint
CREATE FUNCTION terms_documents_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'terms documents are immutable: % on % is refused', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'raise_exception', HINT = 'Add the new wording as a new document; licences name the text they were granted under.';
END
$$;--> statement-breakpoint
CREATE TRIGGER terms_documents_immutable BEFORE UPDATE OR DELETE ON terms_documents
  FOR EACH ROW EXECUTE FUNCTION terms_documents_immutable();--> statement-breakpoint
CREATE TRIGGER terms_documents_no_truncate BEFORE TRUNCATE ON terms_documents
  FOR EACH STATEMENT EXECUTE FUNCTION terms_documents_immutable();--> statement-breakpoint
-- Every existing licence began when it was granted, has no end and no terms: it keeps working.
ALTER TABLE "licences" ADD COLUMN "starts_at" timestamp with time zone;--> statement-breakpoint
UPDATE "licences" SET "starts_at" = "granted_at";--> statement-breakpoint
ALTER TABLE "licences" ALTER COLUMN "starts_at" SET DEFAULT now();--> statement-breakpoint
ALTER TABLE "licences" ALTER COLUMN "starts_at" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "licences" ADD COLUMN "ends_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "licences" ADD COLUMN "terms_sha256" text;--> statement-breakpoint
ALTER TABLE "licences" ADD CONSTRAINT "licences_terms_sha256_terms_documents_sha256_fk" FOREIGN KEY ("terms_sha256") REFERENCES "public"."terms_documents"("sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "licences" ADD CONSTRAINT "licences_term_check" CHECK ("licences"."ends_at" is null or "licences"."ends_at" > "licences"."starts_at");

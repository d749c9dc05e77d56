ALTER TABLE "disclosures" DROP CONSTRAINT "disclosures_channel_check";--> statement-breakpoint
ALTER TABLE "disclosures" ALTER COLUMN "organization_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "disclosures" ALTER COLUMN "licence_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "disclosures" ADD COLUMN "reviewer_role" text;--> statement-breakpoint
CREATE INDEX "disclosures_preview_idx" ON "disclosures" USING btree ("request_sha256","expires_at") WHERE "disclosures"."channel" = 'preview';--> statement-breakpoint
ALTER TABLE "disclosures" ADD CONSTRAINT "disclosures_basis_check" CHECK (("disclosures"."reviewer_role" is null and "disclosures"."organization_id" is not null and "disclosures"."licence_id" is not null)
        or ("disclosures"."reviewer_role" in ('reviewer', 'admin') and "disclosures"."channel" = 'preview' and "disclosures"."user_id" is not null
            and "disclosures"."api_key_id" is null and "disclosures"."organization_id" is null and "disclosures"."licence_id" is null));--> statement-breakpoint
ALTER TABLE "disclosures" ADD CONSTRAINT "disclosures_channel_check" CHECK ("disclosures"."channel" in ('api', 'portal', 'preview'));
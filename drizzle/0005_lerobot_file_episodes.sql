CREATE TABLE "file_episodes" (
	"version_id" integer NOT NULL,
	"path" text COLLATE "C" NOT NULL,
	"episode_id" text COLLATE "C" NOT NULL,
	"start_s" double precision,
	"end_s" double precision,
	"from_frame" bigint,
	"to_frame" bigint,
	CONSTRAINT "file_episodes_version_id_path_episode_id_pk" PRIMARY KEY("version_id","path","episode_id")
);
--> statement-breakpoint
ALTER TABLE "dataset_versions" ADD COLUMN "source_format" text DEFAULT 'jsonl' NOT NULL;--> statement-breakpoint
ALTER TABLE "dataset_versions" ADD COLUMN "format_info" jsonb;--> statement-breakpoint
ALTER TABLE "file_episodes" ADD CONSTRAINT "file_episodes_version_id_dataset_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."dataset_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "file_episodes_episode_idx" ON "file_episodes" USING btree ("version_id","episode_id","path");--> statement-breakpoint
ALTER TABLE "dataset_versions" ADD CONSTRAINT "dataset_versions_source_format_check" CHECK ("dataset_versions"."source_format" in ('jsonl', 'lerobot'));
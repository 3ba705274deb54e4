CREATE TABLE "forecast_backtests" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"origins" integer NOT NULL,
	"horizon" integer NOT NULL,
	"currency" text,
	"report" jsonb,
	"error" text,
	"requested_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "forecast_backtests" ADD CONSTRAINT "forecast_backtests_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "forecast_backtests_one_open" ON "forecast_backtests" USING btree ("org_id","origins","horizon",coalesce("currency", '')) WHERE "forecast_backtests"."status" in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "forecast_backtests_org_finished_idx" ON "forecast_backtests" USING btree ("org_id","finished_at" DESC NULLS LAST);
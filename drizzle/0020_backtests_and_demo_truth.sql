CREATE TABLE "demo_truth" (
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"external_id" text NOT NULL,
	"as_of" date NOT NULL,
	"horizon_days" integer NOT NULL,
	"p_true" double precision NOT NULL,
	CONSTRAINT "demo_truth_org_id_customer_id_as_of_pk" PRIMARY KEY("org_id","customer_id","as_of")
);
--> statement-breakpoint
CREATE TABLE "prediction_backtests" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"method" text NOT NULL,
	"horizon_days" integer NOT NULL,
	"as_of" date,
	"cutoff" date,
	"model_kind" text,
	"model" jsonb,
	"metrics" jsonb,
	"warning" text,
	"error" text,
	"requested_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	CONSTRAINT "prediction_backtests_status_check" CHECK ("prediction_backtests"."status" in ('queued', 'running', 'succeeded', 'failed')),
	CONSTRAINT "prediction_backtests_method_check" CHECK ("prediction_backtests"."method" in ('out_of_time', 'cross_validation'))
);
--> statement-breakpoint
ALTER TABLE "demo_truth" ADD CONSTRAINT "demo_truth_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prediction_backtests" ADD CONSTRAINT "prediction_backtests_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "prediction_backtests_one_open" ON "prediction_backtests" USING btree ("org_id") WHERE "prediction_backtests"."status" in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "prediction_backtests_org_created_idx" ON "prediction_backtests" USING btree ("org_id","created_at" DESC NULLS LAST);
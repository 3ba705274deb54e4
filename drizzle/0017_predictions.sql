CREATE TABLE "prediction_models" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"horizon_days" integer NOT NULL,
	"parameters" jsonb NOT NULL,
	"metrics" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"reject_reason" text,
	"trained_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "prediction_models_status_check" CHECK ("prediction_models"."status" in ('active', 'rejected', 'retired')),
	CONSTRAINT "prediction_models_kind_check" CHECK ("prediction_models"."kind" in ('prior', 'prior_recalibrated', 'logistic'))
);
--> statement-breakpoint
CREATE TABLE "predictions" (
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"model_id" text NOT NULL,
	"horizon_days" integer NOT NULL,
	"probability" double precision NOT NULL,
	"base_logit" double precision NOT NULL,
	"risk" text NOT NULL,
	"previous_risk" text,
	"arr" bigint NOT NULL,
	"currency" text NOT NULL,
	"renewal_date" date,
	"drivers" jsonb NOT NULL,
	"data_completeness" real NOT NULL,
	"missing_signals" jsonb NOT NULL,
	"predicted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "predictions_org_id_customer_id_pk" PRIMARY KEY("org_id","customer_id"),
	CONSTRAINT "predictions_probability_check" CHECK ("predictions"."probability" >= 0 and "predictions"."probability" <= 1),
	CONSTRAINT "predictions_risk_check" CHECK ("predictions"."risk" in ('low', 'medium', 'high', 'critical'))
);
--> statement-breakpoint
ALTER TABLE "prediction_models" ADD CONSTRAINT "prediction_models_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "predictions" ADD CONSTRAINT "predictions_model_id_prediction_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."prediction_models"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "predictions" ADD CONSTRAINT "predictions_org_id_customer_id_customers_org_id_id_fk" FOREIGN KEY ("org_id","customer_id") REFERENCES "public"."customers"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "prediction_models_one_active" ON "prediction_models" USING btree ("org_id","horizon_days") WHERE "prediction_models"."status" = 'active';--> statement-breakpoint
CREATE INDEX "prediction_models_org_trained_idx" ON "prediction_models" USING btree ("org_id","trained_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "predictions_org_risk_idx" ON "predictions" USING btree ("org_id","risk");
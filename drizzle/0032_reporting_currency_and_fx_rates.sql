CREATE TABLE "fx_rates" (
	"org_id" text NOT NULL,
	"month" date NOT NULL,
	"currency" text NOT NULL,
	"quote_currency" text NOT NULL,
	"rate" numeric(24, 12) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "fx_rates_org_id_quote_currency_currency_month_pk" PRIMARY KEY("org_id","quote_currency","currency","month"),
	CONSTRAINT "fx_rates_currency_check" CHECK ("fx_rates"."currency" ~ '^[A-Z]{3}$'),
	CONSTRAINT "fx_rates_quote_currency_check" CHECK ("fx_rates"."quote_currency" ~ '^[A-Z]{3}$'),
	CONSTRAINT "fx_rates_distinct_check" CHECK ("fx_rates"."currency" <> "fx_rates"."quote_currency"),
	CONSTRAINT "fx_rates_rate_check" CHECK ("fx_rates"."rate" > 0),
	CONSTRAINT "fx_rates_month_check" CHECK (extract(day from "fx_rates"."month") = 1)
);
--> statement-breakpoint
ALTER TABLE "organisations" ADD COLUMN "reporting_currency" text;--> statement-breakpoint
ALTER TABLE "fx_rates" ADD CONSTRAINT "fx_rates_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organisations" ADD CONSTRAINT "organisations_reporting_currency_check" CHECK ("organisations"."reporting_currency" is null or "organisations"."reporting_currency" ~ '^[A-Z]{3}$');
CREATE TABLE "customers" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"external_id" text,
	"name" text NOT NULL,
	"domain" text,
	"email" text,
	"status" text DEFAULT 'active' NOT NULL,
	"segment" text,
	"country" text,
	"currency" text NOT NULL,
	"csm" jsonb,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "customers_org_id_id_unique" UNIQUE("org_id","id"),
	CONSTRAINT "customers_status_check" CHECK ("customers"."status" in ('active', 'churned', 'trial')),
	CONSTRAINT "customers_currency_check" CHECK ("customers"."currency" ~ '^[A-Z]{3}$')
);
--> statement-breakpoint
CREATE TABLE "contracts" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"external_id" text,
	"name" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"start_date" date NOT NULL,
	"end_date" date,
	"auto_renew" boolean DEFAULT false NOT NULL,
	"billing_interval" text NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"seats" integer,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "contracts_org_id_id_unique" UNIQUE("org_id","id"),
	CONSTRAINT "contracts_status_check" CHECK ("contracts"."status" in ('draft', 'active', 'ended', 'cancelled')),
	CONSTRAINT "contracts_interval_check" CHECK ("contracts"."billing_interval" in ('month', 'quarter', 'year')),
	CONSTRAINT "contracts_currency_check" CHECK ("contracts"."currency" ~ '^[A-Z]{3}$'),
	CONSTRAINT "contracts_amount_check" CHECK ("contracts"."amount" >= 0),
	CONSTRAINT "contracts_dates_check" CHECK ("contracts"."end_date" is null or "contracts"."end_date" >= "contracts"."start_date"),
	CONSTRAINT "contracts_seats_check" CHECK ("contracts"."seats" is null or "contracts"."seats" >= 0)
);
--> statement-breakpoint
CREATE TABLE "invoices" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"contract_id" text,
	"external_id" text,
	"number" text,
	"status" text DEFAULT 'open' NOT NULL,
	"currency" text NOT NULL,
	"amount_due" bigint NOT NULL,
	"amount_paid" bigint DEFAULT 0 NOT NULL,
	"issued_at" timestamp with time zone NOT NULL,
	"due_date" date,
	"paid_at" timestamp with time zone,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "invoices_org_id_id_unique" UNIQUE("org_id","id"),
	CONSTRAINT "invoices_status_check" CHECK ("invoices"."status" in ('draft', 'open', 'paid', 'void', 'uncollectible')),
	CONSTRAINT "invoices_currency_check" CHECK ("invoices"."currency" ~ '^[A-Z]{3}$'),
	CONSTRAINT "invoices_amounts_check" CHECK ("invoices"."amount_due" >= 0 and "invoices"."amount_paid" >= 0)
);
--> statement-breakpoint
ALTER TABLE "customers" ADD CONSTRAINT "customers_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_org_id_customer_id_customers_org_id_id_fk" FOREIGN KEY ("org_id","customer_id") REFERENCES "public"."customers"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_org_id_customer_id_customers_org_id_id_fk" FOREIGN KEY ("org_id","customer_id") REFERENCES "public"."customers"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_org_id_contract_id_contracts_org_id_id_fk" FOREIGN KEY ("org_id","contract_id") REFERENCES "public"."contracts"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "customers_org_external_id_unique" ON "customers" USING btree ("org_id","external_id") WHERE "customers"."external_id" is not null;--> statement-breakpoint
CREATE INDEX "customers_org_created_idx" ON "customers" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "customers_org_updated_idx" ON "customers" USING btree ("org_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "customers_org_status_idx" ON "customers" USING btree ("org_id","status");--> statement-breakpoint
CREATE INDEX "customers_org_segment_idx" ON "customers" USING btree ("org_id","segment");--> statement-breakpoint
CREATE INDEX "customers_org_csm_email_idx" ON "customers" USING btree ("org_id",("csm"->>'email'));--> statement-breakpoint
CREATE UNIQUE INDEX "contracts_org_external_id_unique" ON "contracts" USING btree ("org_id","external_id") WHERE "contracts"."external_id" is not null;--> statement-breakpoint
CREATE INDEX "contracts_org_customer_idx" ON "contracts" USING btree ("org_id","customer_id");--> statement-breakpoint
CREATE INDEX "contracts_org_created_idx" ON "contracts" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "contracts_org_updated_idx" ON "contracts" USING btree ("org_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "contracts_org_end_date_idx" ON "contracts" USING btree ("org_id","end_date");--> statement-breakpoint
CREATE UNIQUE INDEX "invoices_org_external_id_unique" ON "invoices" USING btree ("org_id","external_id") WHERE "invoices"."external_id" is not null;--> statement-breakpoint
CREATE INDEX "invoices_org_customer_idx" ON "invoices" USING btree ("org_id","customer_id");--> statement-breakpoint
CREATE INDEX "invoices_org_contract_idx" ON "invoices" USING btree ("org_id","contract_id");--> statement-breakpoint
CREATE INDEX "invoices_org_created_idx" ON "invoices" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "invoices_org_updated_idx" ON "invoices" USING btree ("org_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "invoices_org_issued_idx" ON "invoices" USING btree ("org_id","issued_at");--> statement-breakpoint
CREATE INDEX "invoices_org_status_due_idx" ON "invoices" USING btree ("org_id","status","due_date");
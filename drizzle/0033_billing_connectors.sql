CREATE TABLE "billing_connectors" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"platform" text NOT NULL,
	"mode" text DEFAULT 'live' NOT NULL,
	"site" text,
	"webhook_secret_sealed" text,
	"previous_webhook_secret_sealed" text,
	"previous_secret_expires_at" timestamp with time zone,
	"api_key_sealed" text,
	"basic_auth_sealed" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "billing_connectors_org_id_id_unique" UNIQUE("org_id","id"),
	CONSTRAINT "billing_connectors_org_name_unique" UNIQUE("org_id","name"),
	CONSTRAINT "billing_connectors_platform_check" CHECK ("billing_connectors"."platform" in ('stripe', 'chargebee')),
	CONSTRAINT "billing_connectors_mode_check" CHECK ("billing_connectors"."mode" in ('live', 'test')),
	CONSTRAINT "billing_connectors_site_check" CHECK (("billing_connectors"."platform" = 'chargebee') = ("billing_connectors"."site" is not null))
);
--> statement-breakpoint
CREATE TABLE "billing_events" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"connector_id" text NOT NULL,
	"event_id" text NOT NULL,
	"type" text NOT NULL,
	"object_type" text,
	"object_id" text,
	"customer_ref" text,
	"subscription_ref" text,
	"occurred_at" timestamp with time zone NOT NULL,
	"object_version" bigint NOT NULL,
	"source" text NOT NULL,
	"body" jsonb NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"detail" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"applied_at" timestamp with time zone,
	CONSTRAINT "billing_events_connector_event_unique" UNIQUE("connector_id","event_id"),
	CONSTRAINT "billing_events_state_check" CHECK ("billing_events"."state" in ('pending', 'applied', 'ignored', 'dead'))
);
--> statement-breakpoint
CREATE TABLE "billing_syncs" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"connector_id" text NOT NULL,
	"state" text DEFAULT 'running' NOT NULL,
	"phase" text DEFAULT 'customers' NOT NULL,
	"cursor" text,
	"pages" integer DEFAULT 0 NOT NULL,
	"requests" integer DEFAULT 0 NOT NULL,
	"rate_limited" integer DEFAULT 0 NOT NULL,
	"report" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "billing_connectors" ADD CONSTRAINT "billing_connectors_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "billing_events" ADD CONSTRAINT "billing_events_org_id_connector_id_billing_connectors_org_id_id_fk" FOREIGN KEY ("org_id","connector_id") REFERENCES "public"."billing_connectors"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "billing_syncs" ADD CONSTRAINT "billing_syncs_org_id_connector_id_billing_connectors_org_id_id_fk" FOREIGN KEY ("org_id","connector_id") REFERENCES "public"."billing_connectors"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "billing_events_object_idx" ON "billing_events" USING btree ("connector_id","object_type","object_id");--> statement-breakpoint
CREATE INDEX "billing_events_pending_idx" ON "billing_events" USING btree ("connector_id","state");--> statement-breakpoint
CREATE INDEX "billing_events_customer_idx" ON "billing_events" USING btree ("connector_id","customer_ref");--> statement-breakpoint
CREATE INDEX "billing_events_subscription_idx" ON "billing_events" USING btree ("connector_id","subscription_ref");--> statement-breakpoint
CREATE INDEX "billing_syncs_connector_idx" ON "billing_syncs" USING btree ("connector_id","created_at");--> statement-breakpoint
-- Written by hand: the revision log's triggers as in 0015, but a writer that knows the business day
-- a change holds from (the billing sync: a subscription's start, change, notice and end dates) says
-- so with set_config('revintel.valid_from', 'YYYY-MM-DD', true) for its statement; unset or empty,
-- the day is as before (a first revision from its start_date or today, a change from today).
CREATE OR REPLACE FUNCTION revintel_contract_first_revision() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  business_day date := nullif(current_setting('revintel.valid_from', true), '')::date;
BEGIN
  INSERT INTO contract_revisions (org_id, contract_id, revision, valid_from, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount, currency, seats, cancelled_at, deleted)
    SELECT n.org_id, n.id, 1, coalesce(business_day, least(n.start_date, (now() AT TIME ZONE 'UTC')::date)), n.customer_id, n.status, n.start_date, n.end_date, n.auto_renew, n.billing_interval, n.amount, n.currency, n.seats, n.cancelled_at, n.deleted_at IS NOT NULL
    FROM new_contracts n;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION revintel_contract_next_revision() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  business_day date := nullif(current_setting('revintel.valid_from', true), '')::date;
BEGIN
  INSERT INTO contract_revisions (org_id, contract_id, revision, valid_from, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount, currency, seats, cancelled_at, deleted)
    SELECT n.org_id, n.id,
           coalesce((SELECT max(r.revision) FROM contract_revisions r WHERE r.contract_id = n.id), 0) + 1,
           coalesce(business_day, (now() AT TIME ZONE 'UTC')::date),
           n.customer_id, n.status, n.start_date, n.end_date, n.auto_renew, n.billing_interval, n.amount, n.currency, n.seats, n.cancelled_at, n.deleted_at IS NOT NULL
    FROM new_contracts n JOIN old_contracts o ON o.id = n.id
    WHERE (n.customer_id, n.status, n.start_date, n.end_date, n.auto_renew, n.billing_interval, n.amount, n.currency, n.seats, n.cancelled_at, n.deleted_at IS NOT NULL)
          IS DISTINCT FROM (o.customer_id, o.status, o.start_date, o.end_date, o.auto_renew, o.billing_interval, o.amount, o.currency, o.seats, o.cancelled_at, o.deleted_at IS NOT NULL);
  RETURN NULL;
END
$$;

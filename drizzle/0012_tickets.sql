CREATE TABLE "connectors" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"platform" text NOT NULL,
	"secret_sealed" text,
	"previous_secret_sealed" text,
	"previous_secret_expires_at" timestamp with time zone,
	"token_hash" text,
	"builtin" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "connectors_org_id_id_unique" UNIQUE("org_id","id"),
	CONSTRAINT "connectors_org_name_unique" UNIQUE("org_id","name"),
	CONSTRAINT "connectors_platform_check" CHECK (platform in ('zendesk', 'freshdesk', 'intercom', 'hubspot', 'front', 'helpscout', 'jira', 'linear', 'github', 'salesforce', 'gorgias', 'zoho', 'generic'))
);
--> statement-breakpoint
CREATE TABLE "risk_input_changes" (
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "risk_input_changes_org_id_customer_id_pk" PRIMARY KEY("org_id","customer_id")
);
--> statement-breakpoint
CREATE TABLE "ticket_events" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"connector_id" text NOT NULL,
	"source" text NOT NULL,
	"batch_id" text,
	"item_index" integer,
	"body" text NOT NULL,
	"headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"dedupe_key" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"run_after" timestamp with time zone DEFAULT now() NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"last_error" text,
	"ticket_ids" jsonb,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"processed_at" timestamp with time zone,
	CONSTRAINT "ticket_events_status_check" CHECK ("ticket_events"."status" in ('pending', 'processing', 'done', 'dead')),
	CONSTRAINT "ticket_events_source_check" CHECK ("ticket_events"."source" in ('webhook', 'import'))
);
--> statement-breakpoint
CREATE TABLE "ticket_import_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"connector_id" text NOT NULL,
	"received" integer NOT NULL,
	"accepted" integer NOT NULL,
	"duplicates" integer NOT NULL,
	"rejected" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tickets" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"connector_id" text NOT NULL,
	"external_id" text NOT NULL,
	"customer_id" text,
	"subject" text,
	"description" text,
	"status" text,
	"status_normalised" text,
	"priority" text,
	"priority_normalised" text,
	"requester_email" text,
	"source_created_at" timestamp with time zone,
	"source_updated_at" timestamp with time zone,
	"sentiment" real,
	"urgency" text,
	"topics" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"churn_signals" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"intelligence_method" text,
	"intelligence_version" text,
	"last_event_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tickets_sentiment_range" CHECK ("tickets"."sentiment" is null or "tickets"."sentiment" between -1 and 1)
);
--> statement-breakpoint
ALTER TABLE "connectors" ADD CONSTRAINT "connectors_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "risk_input_changes" ADD CONSTRAINT "risk_input_changes_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ticket_events" ADD CONSTRAINT "ticket_events_org_id_connector_id_connectors_org_id_id_fk" FOREIGN KEY ("org_id","connector_id") REFERENCES "public"."connectors"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ticket_import_batches" ADD CONSTRAINT "ticket_import_batches_org_id_connector_id_connectors_org_id_id_fk" FOREIGN KEY ("org_id","connector_id") REFERENCES "public"."connectors"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_org_id_connector_id_connectors_org_id_id_fk" FOREIGN KEY ("org_id","connector_id") REFERENCES "public"."connectors"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "connectors_org_builtin_unique" ON "connectors" USING btree ("org_id","builtin") WHERE "connectors"."builtin" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "ticket_events_dedupe_unique" ON "ticket_events" USING btree ("connector_id","dedupe_key") WHERE "ticket_events"."dedupe_key" is not null;--> statement-breakpoint
CREATE INDEX "ticket_events_due_idx" ON "ticket_events" USING btree ("run_after","id") WHERE "ticket_events"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "ticket_events_leased_idx" ON "ticket_events" USING btree ("lease_until") WHERE "ticket_events"."status" = 'processing';--> statement-breakpoint
CREATE INDEX "ticket_events_org_received_idx" ON "ticket_events" USING btree ("org_id","received_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "ticket_events_batch_idx" ON "ticket_events" USING btree ("batch_id") WHERE "ticket_events"."batch_id" is not null;--> statement-breakpoint
CREATE INDEX "ticket_events_dead_idx" ON "ticket_events" USING btree ("received_at") WHERE "ticket_events"."status" = 'dead';--> statement-breakpoint
CREATE INDEX "ticket_import_batches_org_idx" ON "ticket_import_batches" USING btree ("org_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "tickets_connector_external_unique" ON "tickets" USING btree ("connector_id","external_id");--> statement-breakpoint
CREATE INDEX "tickets_org_created_idx" ON "tickets" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "tickets_org_updated_idx" ON "tickets" USING btree ("org_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "tickets_org_customer_idx" ON "tickets" USING btree ("org_id","customer_id");--> statement-breakpoint
CREATE INDEX "tickets_org_requester_idx" ON "tickets" USING btree ("org_id","requester_email","source_created_at");--> statement-breakpoint
CREATE INDEX "customers_org_email_lower_idx" ON "customers" USING btree ("org_id",lower("email"));--> statement-breakpoint
CREATE INDEX "customers_org_domain_lower_idx" ON "customers" USING btree ("org_id",lower("domain"));
CREATE TABLE "action_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "action_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"org_id" text NOT NULL,
	"action_id" text NOT NULL,
	"kind" text NOT NULL,
	"actor" jsonb,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "action_notifications" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"action_id" text NOT NULL,
	"csm_id" text,
	"platform" text NOT NULL,
	"target" text,
	"nonce" text NOT NULL,
	"status" text NOT NULL,
	"platform_message_id" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "action_notifications_status_check" CHECK ("action_notifications"."status" in ('pending', 'sent', 'failed', 'no_sender', 'updated')),
	CONSTRAINT "action_notifications_platform_check" CHECK ("action_notifications"."platform" in ('slack', 'google_chat', 'whatsapp'))
);
--> statement-breakpoint
CREATE TABLE "action_rule_firings" (
	"org_id" text NOT NULL,
	"key" text NOT NULL,
	"fired_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "action_rule_firings_org_id_key_pk" PRIMARY KEY("org_id","key")
);
--> statement-breakpoint
CREATE TABLE "action_rules" (
	"org_id" text PRIMARY KEY NOT NULL,
	"rules" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_actions" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"type" text NOT NULL,
	"params" jsonb NOT NULL,
	"reason" text NOT NULL,
	"rationale" text,
	"priority" text DEFAULT 'normal' NOT NULL,
	"status" text NOT NULL,
	"requires_approval" boolean DEFAULT true NOT NULL,
	"csm_id" text,
	"routing" jsonb,
	"decided_by" jsonb,
	"decided_at" timestamp with time zone,
	"decision_comment" text,
	"snoozed_until" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"executed_at" timestamp with time zone,
	"last_error" text,
	"trigger_count" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_actions_type_check" CHECK ("agent_actions"."type" in ('check_in', 'escalation', 'discount_offer', 'renewal_call', 'success_plan')),
	CONSTRAINT "agent_actions_reason_check" CHECK ("agent_actions"."reason" in ('risk_rise', 'churn_signal', 'renewal_due', 'overdue', 'manual')),
	CONSTRAINT "agent_actions_priority_check" CHECK ("agent_actions"."priority" in ('low', 'normal', 'high', 'urgent')),
	CONSTRAINT "agent_actions_status_check" CHECK ("agent_actions"."status" in ('proposed', 'pending_approval', 'approved', 'executed', 'rejected', 'snoozed', 'expired', 'cancelled', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "csms" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text,
	"email" text NOT NULL,
	"phone" text,
	"slack_user_id" text,
	"role" text DEFAULT 'csm' NOT NULL,
	"channels" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "csms_role_check" CHECK ("csms"."role" in ('csm', 'manager', 'admin')),
	CONSTRAINT "csms_email_lower_check" CHECK ("csms"."email" = lower("csms"."email"))
);
--> statement-breakpoint
CREATE TABLE "customer_notes" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"action_id" text,
	"author" text NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "outbound_events" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"csm_id" text,
	"action_id" text,
	"title" text NOT NULL,
	"due_date" date,
	"status" text DEFAULT 'open' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tasks_status_check" CHECK ("tasks"."status" in ('open', 'done'))
);
--> statement-breakpoint
ALTER TABLE "action_events" ADD CONSTRAINT "action_events_action_id_agent_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."agent_actions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_notifications" ADD CONSTRAINT "action_notifications_action_id_agent_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."agent_actions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_rule_firings" ADD CONSTRAINT "action_rule_firings_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_rules" ADD CONSTRAINT "action_rules_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_actions" ADD CONSTRAINT "agent_actions_org_id_customer_id_customers_org_id_id_fk" FOREIGN KEY ("org_id","customer_id") REFERENCES "public"."customers"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_actions" ADD CONSTRAINT "agent_actions_csm_id_csms_id_fk" FOREIGN KEY ("csm_id") REFERENCES "public"."csms"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "csms" ADD CONSTRAINT "csms_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customer_notes" ADD CONSTRAINT "customer_notes_action_id_agent_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."agent_actions"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customer_notes" ADD CONSTRAINT "customer_notes_org_id_customer_id_customers_org_id_id_fk" FOREIGN KEY ("org_id","customer_id") REFERENCES "public"."customers"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outbound_events" ADD CONSTRAINT "outbound_events_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_action_id_agent_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."agent_actions"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_org_id_customer_id_customers_org_id_id_fk" FOREIGN KEY ("org_id","customer_id") REFERENCES "public"."customers"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_csm_id_csms_id_fk" FOREIGN KEY ("csm_id") REFERENCES "public"."csms"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "action_events_action_idx" ON "action_events" USING btree ("action_id","id");--> statement-breakpoint
CREATE INDEX "action_notifications_action_idx" ON "action_notifications" USING btree ("action_id");--> statement-breakpoint
CREATE UNIQUE INDEX "agent_actions_one_open" ON "agent_actions" USING btree ("org_id","customer_id","type") WHERE "agent_actions"."status" in ('proposed', 'pending_approval', 'approved', 'snoozed');--> statement-breakpoint
CREATE INDEX "agent_actions_org_created_idx" ON "agent_actions" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "agent_actions_org_customer_type_idx" ON "agent_actions" USING btree ("org_id","customer_id","type","decided_at");--> statement-breakpoint
CREATE INDEX "agent_actions_expiry_idx" ON "agent_actions" USING btree ("expires_at") WHERE "agent_actions"."status" in ('proposed', 'pending_approval');--> statement-breakpoint
CREATE INDEX "agent_actions_wake_idx" ON "agent_actions" USING btree ("snoozed_until") WHERE "agent_actions"."status" = 'snoozed';--> statement-breakpoint
CREATE UNIQUE INDEX "csms_org_email_unique" ON "csms" USING btree ("org_id","email");--> statement-breakpoint
CREATE INDEX "csms_org_created_idx" ON "csms" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "customer_notes_action_unique" ON "customer_notes" USING btree ("action_id");--> statement-breakpoint
CREATE INDEX "customer_notes_customer_idx" ON "customer_notes" USING btree ("org_id","customer_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "outbound_events_org_created_idx" ON "outbound_events" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "tasks_action_unique" ON "tasks" USING btree ("action_id");--> statement-breakpoint
CREATE INDEX "tasks_org_created_idx" ON "tasks" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
-- Written by hand: a customer's `csm.email` names its CSM. The first time a customer of an
-- organisation names an e-mail no CSM of it has, the CSM is created (role csm, no channels, its
-- name, phone and Slack user id from the customer's `csm`), whoever writes the customer (API,
-- import, demo, plain SQL), in the write's transaction.
CREATE FUNCTION revintel_csms_from_customers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO csms (id, org_id, name, email, phone, slack_user_id)
    SELECT DISTINCT ON (c.org_id, lower(c.csm->>'email'))
      'csm_' || replace(gen_random_uuid()::text, '-', ''), c.org_id, nullif(c.csm->>'name', ''), lower(c.csm->>'email'),
      nullif(c.csm->>'phone', ''), nullif(c.csm->>'slack_user_id', '')
    FROM changed_rows c
    WHERE jsonb_typeof(c.csm) = 'object' AND coalesce(c.csm->>'email', '') <> ''
    ORDER BY c.org_id, lower(c.csm->>'email'), c.id
  ON CONFLICT (org_id, email) DO NOTHING;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER customers_insert_csms AFTER INSERT ON customers REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_csms_from_customers();
--> statement-breakpoint
CREATE TRIGGER customers_update_csms AFTER UPDATE ON customers REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_csms_from_customers();
--> statement-breakpoint
-- Existing customers' CSMs.
INSERT INTO csms (id, org_id, name, email, phone, slack_user_id)
  SELECT DISTINCT ON (c.org_id, lower(c.csm->>'email'))
    'csm_' || replace(gen_random_uuid()::text, '-', ''), c.org_id, nullif(c.csm->>'name', ''), lower(c.csm->>'email'),
    nullif(c.csm->>'phone', ''), nullif(c.csm->>'slack_user_id', '')
  FROM customers c
  WHERE jsonb_typeof(c.csm) = 'object' AND coalesce(c.csm->>'email', '') <> ''
  ORDER BY c.org_id, lower(c.csm->>'email'), c.created_at, c.id
ON CONFLICT (org_id, email) DO NOTHING;

CREATE TABLE "chat_inbound_events" (
	"id" text PRIMARY KEY NOT NULL,
	"platform" text NOT NULL,
	"dedupe_key" text NOT NULL,
	"installation_id" text,
	"org_id" text,
	"type" text NOT NULL,
	"outcome" text NOT NULL,
	"detail" text,
	"body" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chat_inbound_events_outcome_check" CHECK ("chat_inbound_events"."outcome" in ('processed', 'denied', 'ignored'))
);
--> statement-breakpoint
CREATE TABLE "chat_installations" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"platform" text NOT NULL,
	"external_id" text NOT NULL,
	"credentials_sealed" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"removed_at" timestamp with time zone,
	CONSTRAINT "chat_installations_platform_check" CHECK ("chat_installations"."platform" in ('slack', 'google_chat', 'whatsapp'))
);
--> statement-breakpoint
CREATE TABLE "chat_sends" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"installation_id" text NOT NULL,
	"notification_id" text,
	"action_id" text,
	"platform" text NOT NULL,
	"kind" text NOT NULL,
	"request" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"last_status" integer,
	"last_error" text,
	"history" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chat_sends_status_check" CHECK ("chat_sends"."status" in ('pending', 'delivered', 'dead')),
	CONSTRAINT "chat_sends_kind_check" CHECK ("chat_sends"."kind" in ('post', 'update', 'reply', 'ephemeral'))
);
--> statement-breakpoint
ALTER TABLE "action_notifications" ADD COLUMN "platform_channel" text;--> statement-breakpoint
ALTER TABLE "chat_installations" ADD CONSTRAINT "chat_installations_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chat_sends" ADD CONSTRAINT "chat_sends_installation_id_chat_installations_id_fk" FOREIGN KEY ("installation_id") REFERENCES "public"."chat_installations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "chat_inbound_events_dedupe_unique" ON "chat_inbound_events" USING btree ("platform","dedupe_key");--> statement-breakpoint
CREATE INDEX "chat_inbound_events_org_idx" ON "chat_inbound_events" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "chat_installations_platform_external_unique" ON "chat_installations" USING btree ("platform","external_id") WHERE "chat_installations"."removed_at" is null;--> statement-breakpoint
CREATE INDEX "chat_installations_org_idx" ON "chat_installations" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "chat_sends_org_created_idx" ON "chat_sends" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "chat_sends_notification_idx" ON "chat_sends" USING btree ("notification_id");
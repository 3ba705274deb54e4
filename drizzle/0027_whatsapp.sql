ALTER TABLE "action_notifications" DROP CONSTRAINT "action_notifications_status_check";--> statement-breakpoint
ALTER TABLE "chat_inbound_events" DROP CONSTRAINT "chat_inbound_events_outcome_check";--> statement-breakpoint
ALTER TABLE "action_notifications" ADD COLUMN "platform_status" text;--> statement-breakpoint
ALTER TABLE "action_notifications" ADD COLUMN "platform_status_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "csms" ADD COLUMN "whatsapp_inbound_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "action_notifications_message_idx" ON "action_notifications" USING btree ("org_id","platform","platform_message_id");--> statement-breakpoint
ALTER TABLE "action_notifications" ADD CONSTRAINT "action_notifications_status_check" CHECK ("action_notifications"."status" in ('pending', 'sent', 'failed', 'no_sender', 'updated', 'window_closed'));--> statement-breakpoint
ALTER TABLE "chat_inbound_events" ADD CONSTRAINT "chat_inbound_events_outcome_check" CHECK ("chat_inbound_events"."outcome" in ('received', 'processed', 'denied', 'ignored'));
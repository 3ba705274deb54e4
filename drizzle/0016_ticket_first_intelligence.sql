ALTER TABLE "tickets" ADD COLUMN "first_sentiment" real;--> statement-breakpoint
ALTER TABLE "tickets" ADD COLUMN "first_urgency" text;--> statement-breakpoint
ALTER TABLE "tickets" ADD COLUMN "first_churn_signals" jsonb;--> statement-breakpoint
-- Tickets processed before this migration: their first intelligence is no longer known, so the
-- current one stands in for it (the best account there is; a ticket rewritten since reads as it is now).
UPDATE "tickets" SET "first_sentiment" = "sentiment", "first_urgency" = "urgency", "first_churn_signals" = "churn_signals" WHERE "intelligence_method" IS NOT NULL;

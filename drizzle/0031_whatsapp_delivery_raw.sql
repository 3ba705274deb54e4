ALTER TABLE "chat_inbound_events" ADD COLUMN "raw" text;--> statement-breakpoint
-- Stored as it came, uncompressed: a 5 MB delivery is one cheap write in the request.
ALTER TABLE "chat_inbound_events" ALTER COLUMN "raw" SET STORAGE EXTERNAL;
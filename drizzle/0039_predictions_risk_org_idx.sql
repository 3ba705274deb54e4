DROP INDEX "predictions_org_risk_idx";--> statement-breakpoint
CREATE INDEX "predictions_risk_org_idx" ON "predictions" USING btree ("risk","org_id");
CREATE TABLE "org_prediction_versions" (
	"org_id" text PRIMARY KEY NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "org_prediction_versions" ADD CONSTRAINT "org_prediction_versions_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Written by hand: what a predictions page shows changes with its predictions (a rescore moves
-- probabilities and drivers without moving a band), its stale marks (each processed ticket) and the
-- models; each statement on them bumps its organisations' prediction version, in its transaction.
CREATE FUNCTION revintel_bump_prediction_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO org_prediction_versions AS v (org_id, version)
    SELECT DISTINCT c.org_id, 1 FROM changed_rows c WHERE EXISTS (SELECT 1 FROM organisations o WHERE o.id = c.org_id)
  ON CONFLICT (org_id) DO UPDATE SET version = v.version + 1;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER predictions_insert_prediction_version AFTER INSERT ON predictions REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_prediction_version();
--> statement-breakpoint
CREATE TRIGGER predictions_update_prediction_version AFTER UPDATE ON predictions REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_prediction_version();
--> statement-breakpoint
CREATE TRIGGER predictions_delete_prediction_version AFTER DELETE ON predictions REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_prediction_version();
--> statement-breakpoint
CREATE TRIGGER risk_input_changes_insert_prediction_version AFTER INSERT ON risk_input_changes REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_prediction_version();
--> statement-breakpoint
CREATE TRIGGER risk_input_changes_update_prediction_version AFTER UPDATE ON risk_input_changes REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_prediction_version();
--> statement-breakpoint
CREATE TRIGGER risk_input_changes_delete_prediction_version AFTER DELETE ON risk_input_changes REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_prediction_version();
--> statement-breakpoint
CREATE TRIGGER prediction_models_insert_prediction_version AFTER INSERT ON prediction_models REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_prediction_version();
--> statement-breakpoint
CREATE TRIGGER prediction_models_update_prediction_version AFTER UPDATE ON prediction_models REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_prediction_version();
--> statement-breakpoint
CREATE TRIGGER prediction_models_delete_prediction_version AFTER DELETE ON prediction_models REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_prediction_version();

-- A customer's churn_risk is part of what GET /api/customers answers, so a prediction whose band
-- changes bumps its organisation's data version (migration 0013), and kept list pages are made
-- again. A rescore that leaves every band as it was bumps nothing: under a steady stream of tickets
-- the pages stay kept.
CREATE FUNCTION revintel_bump_on_risk_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO org_data_versions AS v (org_id, version)
    SELECT DISTINCT n.org_id, 1 FROM new_rows n
    JOIN old_rows o ON o.org_id = n.org_id AND o.customer_id = n.customer_id
    WHERE o.risk IS DISTINCT FROM n.risk AND EXISTS (SELECT 1 FROM organisations g WHERE g.id = n.org_id)
  ON CONFLICT (org_id) DO UPDATE SET version = v.version + 1;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER predictions_insert_data_version AFTER INSERT ON predictions REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_data_version();
--> statement-breakpoint
CREATE TRIGGER predictions_update_data_version AFTER UPDATE ON predictions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_on_risk_change();
--> statement-breakpoint
CREATE TRIGGER predictions_delete_data_version AFTER DELETE ON predictions REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_data_version();

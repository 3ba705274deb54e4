-- Every change of a customer's inputs marks its churn prediction stale, whoever writes it (API,
-- import, demo, plain SQL): statement-level, with the statement's rows, in its transaction. A
-- customer's own row, its contracts and its invoices are inputs; the sweep job
-- (predictions.sweep-stale) then asks for the debounced recompute. An organisation being deleted
-- (its records go with it by cascade) has nothing left to mark.
CREATE FUNCTION revintel_mark_inputs_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'customers' THEN
    INSERT INTO risk_input_changes AS r (org_id, customer_id, changed_at)
      SELECT DISTINCT c.org_id, c.id, now() FROM changed_rows c WHERE EXISTS (SELECT 1 FROM organisations o WHERE o.id = c.org_id)
    ON CONFLICT (org_id, customer_id) DO UPDATE SET changed_at = excluded.changed_at;
  ELSE
    INSERT INTO risk_input_changes AS r (org_id, customer_id, changed_at)
      SELECT DISTINCT c.org_id, c.customer_id, now() FROM changed_rows c WHERE EXISTS (SELECT 1 FROM organisations o WHERE o.id = c.org_id)
    ON CONFLICT (org_id, customer_id) DO UPDATE SET changed_at = excluded.changed_at;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER customers_insert_mark_stale AFTER INSERT ON customers REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_inputs_changed();
--> statement-breakpoint
CREATE TRIGGER customers_update_mark_stale AFTER UPDATE ON customers REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_inputs_changed();
--> statement-breakpoint
CREATE TRIGGER contracts_insert_mark_stale AFTER INSERT ON contracts REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_inputs_changed();
--> statement-breakpoint
CREATE TRIGGER contracts_update_mark_stale AFTER UPDATE ON contracts REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_inputs_changed();
--> statement-breakpoint
CREATE TRIGGER contracts_delete_mark_stale AFTER DELETE ON contracts REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_inputs_changed();
--> statement-breakpoint
CREATE TRIGGER invoices_insert_mark_stale AFTER INSERT ON invoices REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_inputs_changed();
--> statement-breakpoint
CREATE TRIGGER invoices_update_mark_stale AFTER UPDATE ON invoices REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_inputs_changed();
--> statement-breakpoint
CREATE TRIGGER invoices_delete_mark_stale AFTER DELETE ON invoices REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_inputs_changed();

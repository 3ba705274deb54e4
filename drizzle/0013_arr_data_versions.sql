CREATE TABLE "org_data_versions" (
	"org_id" text PRIMARY KEY NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "org_data_versions" ADD CONSTRAINT "org_data_versions_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Bumps the version of every organisation whose customers, contracts or invoices a statement
-- changed, in the statement's transaction (written by hand: drizzle-kit does not write triggers).
-- Statement-level with a transition table: one bump per statement, however many rows (an import
-- batch of 1,000 rows is one). The row lock it takes is held to the commit, so a reader that sees
-- version n sees every change up to n's commit and none after. An organisation being deleted (its
-- records go with it by cascade) has nothing left to version.
CREATE FUNCTION revintel_bump_data_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO org_data_versions AS v (org_id, version)
    SELECT DISTINCT c.org_id, 1 FROM changed_rows c WHERE EXISTS (SELECT 1 FROM organisations o WHERE o.id = c.org_id)
  ON CONFLICT (org_id) DO UPDATE SET version = v.version + 1;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER customers_insert_data_version AFTER INSERT ON customers REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_data_version();
--> statement-breakpoint
CREATE TRIGGER customers_update_data_version AFTER UPDATE ON customers REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_data_version();
--> statement-breakpoint
CREATE TRIGGER customers_delete_data_version AFTER DELETE ON customers REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_data_version();
--> statement-breakpoint
CREATE TRIGGER contracts_insert_data_version AFTER INSERT ON contracts REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_data_version();
--> statement-breakpoint
CREATE TRIGGER contracts_update_data_version AFTER UPDATE ON contracts REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_data_version();
--> statement-breakpoint
CREATE TRIGGER contracts_delete_data_version AFTER DELETE ON contracts REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_data_version();
--> statement-breakpoint
CREATE TRIGGER invoices_insert_data_version AFTER INSERT ON invoices REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_data_version();
--> statement-breakpoint
CREATE TRIGGER invoices_update_data_version AFTER UPDATE ON invoices REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_data_version();
--> statement-breakpoint
CREATE TRIGGER invoices_delete_data_version AFTER DELETE ON invoices REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_bump_data_version();

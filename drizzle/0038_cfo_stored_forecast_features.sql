CREATE TABLE "cfo_feature_changes" (
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"seq" bigserial NOT NULL,
	CONSTRAINT "cfo_feature_changes_org_id_customer_id_pk" PRIMARY KEY("org_id","customer_id")
);
--> statement-breakpoint
CREATE TABLE "cfo_features_state" (
	"org_id" text PRIMARY KEY NOT NULL,
	"as_of" date NOT NULL,
	"grace_days" integer NOT NULL,
	"built_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cfo_stored_features" (
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"currency" text NOT NULL,
	"arr" double precision NOT NULL,
	"renewal_date" date,
	"values" text NOT NULL,
	CONSTRAINT "cfo_stored_features_org_id_customer_id_pk" PRIMARY KEY("org_id","customer_id")
);
--> statement-breakpoint
ALTER TABLE "cfo_feature_changes" ADD CONSTRAINT "cfo_feature_changes_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cfo_features_state" ADD CONSTRAINT "cfo_features_state_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cfo_stored_features" ADD CONSTRAINT "cfo_stored_features_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Every change to a customer's features' inputs — its own row, its contract revisions, invoices and
-- tickets — marks it for the forecast's stored features, in the change's transaction, whoever
-- writes it (cfo-forecast/stored-features.ts recomputes the marked ones per read). An update marks
-- the customers before and after (a ticket or revision may move to another customer). An
-- organisation being deleted has nothing left to mark.
CREATE FUNCTION revintel_mark_cfo_features() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'customers' THEN
    INSERT INTO cfo_feature_changes AS m (org_id, customer_id)
      SELECT DISTINCT c.org_id, c.id FROM changed_rows c WHERE EXISTS (SELECT 1 FROM organisations o WHERE o.id = c.org_id)
    ON CONFLICT (org_id, customer_id) DO UPDATE SET seq = nextval(pg_get_serial_sequence('cfo_feature_changes', 'seq'));
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO cfo_feature_changes AS m (org_id, customer_id)
      SELECT c.org_id, c.customer_id FROM (SELECT org_id, customer_id FROM old_rows UNION SELECT org_id, customer_id FROM new_rows) c
      WHERE c.customer_id IS NOT NULL AND EXISTS (SELECT 1 FROM organisations o WHERE o.id = c.org_id)
    ON CONFLICT (org_id, customer_id) DO UPDATE SET seq = nextval(pg_get_serial_sequence('cfo_feature_changes', 'seq'));
  ELSE
    INSERT INTO cfo_feature_changes AS m (org_id, customer_id)
      SELECT DISTINCT c.org_id, c.customer_id FROM changed_rows c
      WHERE c.customer_id IS NOT NULL AND EXISTS (SELECT 1 FROM organisations o WHERE o.id = c.org_id)
    ON CONFLICT (org_id, customer_id) DO UPDATE SET seq = nextval(pg_get_serial_sequence('cfo_feature_changes', 'seq'));
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER customers_insert_mark_cfo_features AFTER INSERT ON customers REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();
--> statement-breakpoint
CREATE TRIGGER customers_update_mark_cfo_features AFTER UPDATE ON customers REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();
--> statement-breakpoint
CREATE TRIGGER customers_delete_mark_cfo_features AFTER DELETE ON customers REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();
--> statement-breakpoint
CREATE TRIGGER contract_revisions_insert_mark_cfo_features AFTER INSERT ON contract_revisions REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();
--> statement-breakpoint
CREATE TRIGGER contract_revisions_update_mark_cfo_features AFTER UPDATE ON contract_revisions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();
--> statement-breakpoint
CREATE TRIGGER contract_revisions_delete_mark_cfo_features AFTER DELETE ON contract_revisions REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();
--> statement-breakpoint
CREATE TRIGGER invoices_insert_mark_cfo_features AFTER INSERT ON invoices REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();
--> statement-breakpoint
CREATE TRIGGER invoices_update_mark_cfo_features AFTER UPDATE ON invoices REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();
--> statement-breakpoint
CREATE TRIGGER invoices_delete_mark_cfo_features AFTER DELETE ON invoices REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();
--> statement-breakpoint
CREATE TRIGGER tickets_insert_mark_cfo_features AFTER INSERT ON tickets REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();
--> statement-breakpoint
CREATE TRIGGER tickets_update_mark_cfo_features AFTER UPDATE ON tickets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();
--> statement-breakpoint
CREATE TRIGGER tickets_delete_mark_cfo_features AFTER DELETE ON tickets REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_features();

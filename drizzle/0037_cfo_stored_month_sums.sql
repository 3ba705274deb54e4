CREATE TABLE "cfo_customer_month_sums" (
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"kind" text NOT NULL,
	"currency" text NOT NULL,
	"k" integer NOT NULL,
	"new" bigint NOT NULL,
	"reactivation" bigint NOT NULL,
	"expansion" bigint NOT NULL,
	"contraction" bigint NOT NULL,
	"churn" bigint NOT NULL,
	"new_customers" integer NOT NULL,
	"reactivated_customers" integer NOT NULL,
	"churned_customers" integer NOT NULL,
	"customers_net" integer NOT NULL,
	"retained" bigint NOT NULL,
	"retained_capped" bigint NOT NULL,
	CONSTRAINT "cfo_customer_month_sums_org_id_customer_id_kind_currency_k_pk" PRIMARY KEY("org_id","customer_id","kind","currency","k")
);
--> statement-breakpoint
CREATE TABLE "cfo_month_sums" (
	"org_id" text NOT NULL,
	"kind" text NOT NULL,
	"currency" text NOT NULL,
	"k" integer NOT NULL,
	"new" bigint NOT NULL,
	"reactivation" bigint NOT NULL,
	"expansion" bigint NOT NULL,
	"contraction" bigint NOT NULL,
	"churn" bigint NOT NULL,
	"new_customers" integer NOT NULL,
	"reactivated_customers" integer NOT NULL,
	"churned_customers" integer NOT NULL,
	"customers_net" integer NOT NULL,
	"retained" bigint NOT NULL,
	"retained_capped" bigint NOT NULL,
	CONSTRAINT "cfo_month_sums_org_id_kind_currency_k_pk" PRIMARY KEY("org_id","kind","currency","k")
);
--> statement-breakpoint
CREATE TABLE "cfo_sums_changes" (
	"org_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"seq" bigserial NOT NULL,
	CONSTRAINT "cfo_sums_changes_org_id_customer_id_pk" PRIMARY KEY("org_id","customer_id")
);
--> statement-breakpoint
CREATE TABLE "cfo_sums_state" (
	"org_id" text PRIMARY KEY NOT NULL,
	"as_of" date NOT NULL,
	"built_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "cfo_customer_month_sums" ADD CONSTRAINT "cfo_customer_month_sums_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cfo_month_sums" ADD CONSTRAINT "cfo_month_sums_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cfo_sums_changes" ADD CONSTRAINT "cfo_sums_changes_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cfo_sums_state" ADD CONSTRAINT "cfo_sums_state_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Every change to an organisation's contract revisions, whoever writes it (API, import, billing
-- sync, demo, plain SQL), marks its customers in the change's transaction: the stored month sums
-- hold the rest of the organisation as it is, and the readers recompute only the marked customers'
-- share (cfo-history/stored-sums.ts). A new mark of a marked customer takes a new seq, so a fold that
-- read the older one leaves it. An organisation being deleted has nothing left to mark.
CREATE FUNCTION revintel_mark_cfo_sums() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    -- A revision moved to another customer changes both customers' ARR.
    INSERT INTO cfo_sums_changes AS m (org_id, customer_id)
      SELECT c.org_id, c.customer_id FROM (SELECT org_id, customer_id FROM old_rows UNION SELECT org_id, customer_id FROM new_rows) c
      WHERE EXISTS (SELECT 1 FROM organisations o WHERE o.id = c.org_id)
    ON CONFLICT (org_id, customer_id) DO UPDATE SET seq = nextval(pg_get_serial_sequence('cfo_sums_changes', 'seq'));
  ELSE
    INSERT INTO cfo_sums_changes AS m (org_id, customer_id)
      SELECT DISTINCT c.org_id, c.customer_id FROM changed_rows c WHERE EXISTS (SELECT 1 FROM organisations o WHERE o.id = c.org_id)
    ON CONFLICT (org_id, customer_id) DO UPDATE SET seq = nextval(pg_get_serial_sequence('cfo_sums_changes', 'seq'));
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER contract_revisions_insert_mark_cfo_sums AFTER INSERT ON contract_revisions REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_sums();
--> statement-breakpoint
CREATE TRIGGER contract_revisions_update_mark_cfo_sums AFTER UPDATE ON contract_revisions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_sums();
--> statement-breakpoint
CREATE TRIGGER contract_revisions_delete_mark_cfo_sums AFTER DELETE ON contract_revisions REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION revintel_mark_cfo_sums();

CREATE TABLE "contract_revisions" (
	"org_id" text NOT NULL,
	"contract_id" text NOT NULL,
	"revision" integer NOT NULL,
	"valid_from" date NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	"customer_id" text NOT NULL,
	"status" text NOT NULL,
	"start_date" date NOT NULL,
	"end_date" date,
	"auto_renew" boolean NOT NULL,
	"billing_interval" text NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"seats" integer,
	"cancelled_at" date,
	"deleted" boolean DEFAULT false NOT NULL,
	CONSTRAINT "contract_revisions_contract_id_revision_pk" PRIMARY KEY("contract_id","revision")
);
--> statement-breakpoint
ALTER TABLE "customers" ADD COLUMN "churned_at" date;--> statement-breakpoint
ALTER TABLE "contracts" ADD COLUMN "cancelled_at" date;--> statement-breakpoint
ALTER TABLE "contract_revisions" ADD CONSTRAINT "contract_revisions_contract_fk" FOREIGN KEY ("org_id","contract_id") REFERENCES "public"."contracts"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "contract_revisions_org_contract_idx" ON "contract_revisions" USING btree ("org_id","contract_id","revision");--> statement-breakpoint
ALTER TABLE "customers" ADD CONSTRAINT "customers_churned_at_check" CHECK ("customers"."churned_at" is null or "customers"."status" = 'churned');--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_cancelled_at_check" CHECK ("contracts"."cancelled_at" is null or "contracts"."status" in ('cancelled', 'ended'));--> statement-breakpoint
-- Point-in-time data (README "Point in time"), written by hand below: drizzle-kit does not
-- write triggers or functions. First the backfill of existing rows, then the triggers that keep the
-- new columns and the revision log for every writer (API, import, demo, plain SQL) from now on.
--
-- Backfill: an existing cancelled contract's notice day is unknown; the latest it can have been is
-- the day of its last change (updated_at), and one that had already ended by then stopped at its
-- end_date (least() ignores a null end_date). Never a day after today, so today's data knows it.
UPDATE contracts SET cancelled_at = least(end_date, (updated_at AT TIME ZONE 'UTC')::date) WHERE status = 'cancelled';
--> statement-breakpoint
-- An evergreen contract marked ended stopped, at the latest, on the day of its last change.
UPDATE contracts SET cancelled_at = (updated_at AT TIME ZONE 'UTC')::date WHERE status = 'ended' AND end_date IS NULL;
--> statement-breakpoint
-- An existing churned customer churned, at the latest, on the day of its last change.
UPDATE customers SET churned_at = (updated_at AT TIME ZONE 'UTC')::date WHERE status = 'churned';
--> statement-breakpoint
-- Backfill: one revision per existing contract, its terms as they are now, holding from its
-- start_date (imported history holds from its start; from the day it was written if that is
-- earlier, for a contract written before it starts). A deleted contract gets a second revision,
-- deleted from the day it was deleted.
INSERT INTO contract_revisions (org_id, contract_id, revision, valid_from, recorded_at, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount, currency, seats, cancelled_at, deleted)
  SELECT org_id, id, 1, least(start_date, (created_at AT TIME ZONE 'UTC')::date), created_at, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount, currency, seats, cancelled_at, false
  FROM contracts
  UNION ALL
  SELECT org_id, id, 2, (deleted_at AT TIME ZONE 'UTC')::date, deleted_at, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount, currency, seats, cancelled_at, true
  FROM contracts WHERE deleted_at IS NOT NULL;
--> statement-breakpoint
-- The stop dates, in one place for every writer. A contract whose status becomes cancelled without
-- a cancelled_at gets today's (UTC), and so does one marked ended without an end_date (an evergreen
-- contract counts until the day it stopped). A write that sends no date for a contract already
-- stopped keeps the one it has (a re-imported file with an empty cell moves no history); an upsert's
-- row meets the INSERT trigger before its conflict, so a row whose external_id is taken is left to
-- the UPDATE that follows. When the
-- status goes back to active or draft, the cancellation was withdrawn: the date is cleared (the
-- revision log keeps it). A date on a live contract is refused by contracts_cancelled_at_check.
-- Last, an update that changes nothing but updated_at is skipped, so such a write stays "unchanged".
CREATE FUNCTION revintel_contract_stop_dates() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IN ('cancelled', 'ended') THEN
    IF NEW.cancelled_at IS NULL AND TG_OP = 'UPDATE' AND OLD.status IN ('cancelled', 'ended') THEN
      NEW.cancelled_at := OLD.cancelled_at;
    END IF;
    IF NEW.cancelled_at IS NULL AND (NEW.status = 'cancelled' OR NEW.end_date IS NULL) AND NOT (TG_OP = 'INSERT' AND NEW.external_id IS NOT NULL
       AND EXISTS (SELECT 1 FROM contracts c WHERE c.org_id = NEW.org_id AND c.external_id = NEW.external_id)) THEN
      NEW.cancelled_at := (now() AT TIME ZONE 'UTC')::date;
    END IF;
  ELSIF TG_OP = 'UPDATE' AND OLD.status IN ('cancelled', 'ended') AND NEW.cancelled_at IS NOT DISTINCT FROM OLD.cancelled_at THEN
    NEW.cancelled_at := NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND to_jsonb(NEW) - 'updated_at' = to_jsonb(OLD) - 'updated_at' THEN
    RETURN NULL;
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER contracts_stop_dates BEFORE INSERT OR UPDATE ON contracts FOR EACH ROW EXECUTE FUNCTION revintel_contract_stop_dates();
--> statement-breakpoint
-- The same for customers: churned_at is today's (UTC) when the status becomes churned without one,
-- kept by a write that sends none, and cleared when a churned customer comes back.
CREATE FUNCTION revintel_customer_churn_date() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'churned' THEN
    IF NEW.churned_at IS NULL AND TG_OP = 'UPDATE' AND OLD.status = 'churned' THEN
      NEW.churned_at := OLD.churned_at;
    END IF;
    IF NEW.churned_at IS NULL AND NOT (TG_OP = 'INSERT' AND NEW.external_id IS NOT NULL
       AND EXISTS (SELECT 1 FROM customers c WHERE c.org_id = NEW.org_id AND c.external_id = NEW.external_id)) THEN
      NEW.churned_at := (now() AT TIME ZONE 'UTC')::date;
    END IF;
  ELSIF TG_OP = 'UPDATE' AND OLD.status = 'churned' AND NEW.churned_at IS NOT DISTINCT FROM OLD.churned_at THEN
    NEW.churned_at := NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND to_jsonb(NEW) - 'updated_at' = to_jsonb(OLD) - 'updated_at' THEN
    RETURN NULL;
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER customers_churn_date BEFORE INSERT OR UPDATE ON customers FOR EACH ROW EXECUTE FUNCTION revintel_customer_churn_date();
--> statement-breakpoint
-- The revision log, kept by statement-level triggers (one INSERT … SELECT per statement, however
-- many rows: an import batch or a demo chunk of thousands of contracts costs one). A new contract's
-- first revision holds from its start_date, or from today if it starts later.
CREATE FUNCTION revintel_contract_first_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO contract_revisions (org_id, contract_id, revision, valid_from, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount, currency, seats, cancelled_at, deleted)
    SELECT n.org_id, n.id, 1, least(n.start_date, (now() AT TIME ZONE 'UTC')::date), n.customer_id, n.status, n.start_date, n.end_date, n.auto_renew, n.billing_interval, n.amount, n.currency, n.seats, n.cancelled_at, n.deleted_at IS NOT NULL
    FROM new_contracts n;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- A change of a contract's terms (its customer, status, dates, renewal, interval, amount, currency,
-- seats, cancellation, or its deletion) holds from the UTC day it was recorded; a statement that
-- changes none of them (metadata, name, a no-op upsert) writes no revision. The contract's row lock,
-- held by the statement, serialises two changes of one contract, so max + 1 is unique.
CREATE FUNCTION revintel_contract_next_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO contract_revisions (org_id, contract_id, revision, valid_from, customer_id, status, start_date, end_date, auto_renew, billing_interval, amount, currency, seats, cancelled_at, deleted)
    SELECT n.org_id, n.id,
           coalesce((SELECT max(r.revision) FROM contract_revisions r WHERE r.contract_id = n.id), 0) + 1,
           (now() AT TIME ZONE 'UTC')::date,
           n.customer_id, n.status, n.start_date, n.end_date, n.auto_renew, n.billing_interval, n.amount, n.currency, n.seats, n.cancelled_at, n.deleted_at IS NOT NULL
    FROM new_contracts n JOIN old_contracts o ON o.id = n.id
    WHERE (n.customer_id, n.status, n.start_date, n.end_date, n.auto_renew, n.billing_interval, n.amount, n.currency, n.seats, n.cancelled_at, n.deleted_at IS NOT NULL)
          IS DISTINCT FROM (o.customer_id, o.status, o.start_date, o.end_date, o.auto_renew, o.billing_interval, o.amount, o.currency, o.seats, o.cancelled_at, o.deleted_at IS NOT NULL);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER contracts_first_revision AFTER INSERT ON contracts REFERENCING NEW TABLE AS new_contracts FOR EACH STATEMENT EXECUTE FUNCTION revintel_contract_first_revision();
--> statement-breakpoint
CREATE TRIGGER contracts_next_revision AFTER UPDATE ON contracts REFERENCING OLD TABLE AS old_contracts NEW TABLE AS new_contracts FOR EACH STATEMENT EXECUTE FUNCTION revintel_contract_next_revision();
--> statement-breakpoint
-- The log is append-only: UPDATE and TRUNCATE are refused, and so is DELETE, but as the cascade of
-- deleting its contract (or the contract's customer or organisation): inside that cascade the
-- trigger is nested and the contract is already gone.
CREATE FUNCTION contract_revisions_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF pg_trigger_depth() > 1 AND NOT EXISTS (SELECT 1 FROM contracts c WHERE c.id = OLD.contract_id) THEN
      RETURN OLD;
    END IF;
  END IF;
  RAISE EXCEPTION 'contract_revisions is append-only (% refused)', TG_OP;
END
$$;
--> statement-breakpoint
CREATE TRIGGER contract_revisions_append_only BEFORE UPDATE OR DELETE ON contract_revisions FOR EACH ROW EXECUTE FUNCTION contract_revisions_refuse_change();
--> statement-breakpoint
CREATE TRIGGER contract_revisions_no_truncate BEFORE TRUNCATE ON contract_revisions FOR EACH STATEMENT EXECUTE FUNCTION contract_revisions_refuse_change();
--> statement-breakpoint
-- Whether a contract counted on a past day, whatever its status is now (today's ended or cancelled
-- says nothing about that day): not a draft, started, and not past its end_date (inclusive); an
-- ended or cancelled contract without an end_date counts through the day it stopped (cancelled_at,
-- inclusive like an end date).
CREATE FUNCTION revintel_contract_counted_on(status text, start_date date, end_date date, cancelled_at date, day date) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT status <> 'draft' AND start_date <= day AND CASE
    WHEN end_date IS NOT NULL THEN day <= end_date
    WHEN status IN ('ended', 'cancelled') THEN cancelled_at IS NULL OR day <= cancelled_at
    ELSE true
  END
$$;
--> statement-breakpoint
-- An organisation's contracts as they stood on a past day: each one's last revision holding by then
-- (valid_from <= day; the last by revision number, so a later correction of a first revision that
-- starts in the future still wins once both hold), but those deleted by then. Nothing dated after
-- the day shows: a cancelled_at after it is not yet known (null, and the status is what could be
-- seen that day: active, or ended once it stopped counting), and later changes are later revisions.
CREATE FUNCTION revintel_contracts_at(org text, day date)
RETURNS TABLE (contract_id text, customer_id text, revision integer, valid_from date, status text, start_date date, end_date date, auto_renew boolean,
               billing_interval text, amount bigint, currency text, seats integer, cancelled_at date, arr bigint, counted boolean)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT r.contract_id, r.customer_id, r.revision, r.valid_from,
         CASE
           WHEN r.status = 'draft' THEN 'draft'
           WHEN r.status = 'cancelled' AND r.cancelled_at <= revintel_contracts_at.day THEN 'cancelled'
           WHEN r.start_date <= revintel_contracts_at.day
                AND NOT revintel_contract_counted_on(r.status, r.start_date, r.end_date, r.cancelled_at, revintel_contracts_at.day) THEN 'ended'
           ELSE 'active'
         END,
         r.start_date, r.end_date, r.auto_renew, r.billing_interval, r.amount, r.currency, r.seats,
         CASE WHEN r.cancelled_at <= revintel_contracts_at.day THEN r.cancelled_at END,
         revintel_contract_arr(r.billing_interval, r.amount),
         revintel_contract_counted_on(r.status, r.start_date, r.end_date, r.cancelled_at, revintel_contracts_at.day)
  FROM (
    SELECT DISTINCT ON (x.contract_id) x.*
    FROM contract_revisions x
    WHERE x.org_id = revintel_contracts_at.org AND x.valid_from <= revintel_contracts_at.day
    ORDER BY x.contract_id, x.revision DESC
  ) r
  WHERE NOT r.deleted
$$;
--> statement-breakpoint
-- An organisation's customers on a past day: whether each had churned by then (churned_at <= day),
-- how many of its contracts counted that day and their ARR. A customer deleted by then is left out;
-- one deleted later is still there.
CREATE FUNCTION revintel_customers_at(org text, day date)
RETURNS TABLE (customer_id text, churned boolean, churned_at date, contracts_counted integer, arr bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT c.id,
         coalesce(c.churned_at <= revintel_customers_at.day, false),
         CASE WHEN c.churned_at <= revintel_customers_at.day THEN c.churned_at END,
         (count(k.contract_id) FILTER (WHERE k.counted))::integer,
         coalesce(sum(k.arr) FILTER (WHERE k.counted), 0)::bigint
  FROM customers c
  LEFT JOIN revintel_contracts_at(revintel_customers_at.org, revintel_customers_at.day) k ON k.customer_id = c.id
  WHERE c.org_id = revintel_customers_at.org
    AND (c.deleted_at IS NULL OR (c.deleted_at AT TIME ZONE 'UTC')::date > revintel_customers_at.day)
  GROUP BY c.id, c.churned_at
$$;

-- One ARR rule for every reader (README "ARR data: which contracts count"). The column is drizzle-kit's;
-- the functions are written by hand (drizzle-kit does not write functions).
--
-- A contract counts on day t when it is not a draft, it has started (start_date <= t) and its
-- service has not ended (t <= its service end, inclusive). Its service end is its end_date; an
-- ended or cancelled contract without one stops on its cancelled_at; an evergreen one runs on.
-- `cancelled` means notice given: the paid term still runs and counts until end_date, and churn is
-- booked at the end of the period. Only a contract whose end_date is on or before its cancelled_at
-- (cancelled with immediate effect) stops counting at once.
--
-- The customer's arr, mrr, renewal_date and renewing (today, from the records), the predictions'
-- arr and renewal_date (from the contracts as they stood on day t, revintel_contracts_at) and the
-- churn days all read these functions; nothing else restates the rule.

-- A prediction says whether its customer renews at its renewal_date, as the customer does.
ALTER TABLE "predictions" ADD COLUMN "renewing" boolean;--> statement-breakpoint
-- The day a contract's service ends (inclusive), or null while it runs on (evergreen, no notice).
CREATE FUNCTION revintel_contract_service_end(status text, end_date date, cancelled_at date) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(end_date, CASE WHEN status IN ('ended', 'cancelled') THEN cancelled_at END)
$$;
--> statement-breakpoint
-- Whether a contract counts on a day, whatever its status says of later days (a contract cancelled
-- with notice counts until its service ends). Written out rather than calling
-- revintel_contract_service_end so that PostgreSQL inlines it whole into the sums.
CREATE OR REPLACE FUNCTION revintel_contract_counted_on(status text, start_date date, end_date date, cancelled_at date, day date) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT status <> 'draft' AND start_date <= day AND CASE
    WHEN end_date IS NOT NULL THEN day <= end_date
    WHEN status IN ('ended', 'cancelled') THEN cancelled_at IS NULL OR day <= cancelled_at
    ELSE true
  END
$$;
--> statement-breakpoint
-- Whether a counting contract renews at its service end: not when notice was given (cancelled) or
-- it is marked ended. Auto-renew aside: a contract without it still renews unless notice is given.
CREATE FUNCTION revintel_contract_renews(status text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT status NOT IN ('cancelled', 'ended')
$$;
--> statement-breakpoint
-- A customer's renewal: its renewal_date is the earliest service end of its counting contracts, and
-- `renewing` is false when a contract ending that day will not renew (the date is then the end of
-- service), null when there is no date. Arguments: that earliest end, and the earliest end of the
-- counting contracts that will not renew.
CREATE FUNCTION revintel_renewing(renewal_date date, first_end_not_renewing date) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN renewal_date IS NULL THEN NULL ELSE first_end_not_renewing IS NULL OR first_end_not_renewing > renewal_date END
$$;
--> statement-breakpoint
-- Each customer's ARR and renewal on a day, from its records as they are now (the API's customers,
-- the console, imports' answers): the counting contracts' ARR summed, the earliest service end,
-- whether it renews. Only customers with a counting contract have a row. An inlinable SQL function:
-- a query filtering on customer_id reads only that customer's contracts.
CREATE FUNCTION revintel_customer_arr(org text, day date)
RETURNS TABLE (customer_id text, arr bigint, renewal_date date, renewing boolean)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT ct.customer_id,
         sum(revintel_contract_arr(ct.billing_interval, ct.amount))::bigint,
         min(revintel_contract_service_end(ct.status, ct.end_date, ct.cancelled_at)),
         revintel_renewing(min(revintel_contract_service_end(ct.status, ct.end_date, ct.cancelled_at)),
                           min(revintel_contract_service_end(ct.status, ct.end_date, ct.cancelled_at)) FILTER (WHERE NOT revintel_contract_renews(ct.status)))
  FROM contracts ct
  WHERE ct.org_id = revintel_customer_arr.org AND ct.deleted_at IS NULL
    AND revintel_contract_counted_on(ct.status, ct.start_date, ct.end_date, ct.cancelled_at, revintel_customer_arr.day)
  GROUP BY ct.customer_id
$$;
--> statement-breakpoint
-- The old rule (status = 'active' only) hid a cancelled contract's ARR during its notice period.
DROP FUNCTION revintel_contract_active_on(text, date, date, date);

-- When an invoice is overdue, defined once (README "ARR data: derived values"): open or
-- uncollectible, something still to pay, and a due date before the day. A zero-amount or fully paid
-- invoice is never overdue, whatever its status says.
--
-- A plain SQL expression without STRICT, so PostgreSQL inlines it into the queries that filter on it
-- and can answer `overdue=true` from the (org_id, status, due_date) index instead of computing it
-- for every invoice.
CREATE FUNCTION revintel_invoice_overdue_on(status text, due_date date, amount_due bigint, amount_paid bigint, day date) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT status IN ('open', 'uncollectible') AND due_date < day AND amount_paid < amount_due
$$;
--> statement-breakpoint
-- How many days an invoice is past due on a day: the calendar days since its due date while it is
-- overdue (above); otherwise 0.
CREATE FUNCTION revintel_days_past_due(status text, due_date date, amount_due bigint, amount_paid bigint, day date) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN coalesce(revintel_invoice_overdue_on(status, due_date, amount_due, amount_paid, day), false) THEN day - due_date ELSE 0 END
$$;
--> statement-breakpoint
DROP FUNCTION revintel_days_past_due(text, date, date);

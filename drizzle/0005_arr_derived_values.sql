-- The derived values of the ARR data, each defined once, here, and used by every query that shows,
-- filters or sorts by them (README "ARR data: derived values"). All are IMMUTABLE: the day they are
-- computed for is an argument, never now(), so a query decides what "today" is (UTC).

-- A contract's annual recurring revenue: its charge per billing interval, annualised.
CREATE FUNCTION revintel_contract_arr(billing_interval text, amount bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE billing_interval
    WHEN 'month' THEN amount * 12
    WHEN 'quarter' THEN amount * 4
    WHEN 'year' THEN amount
  END
$$;
--> statement-breakpoint
-- Whether a contract counts on a day: active, started, and not past its end date (inclusive: a
-- contract ending today still counts today; an evergreen contract has no end date).
CREATE FUNCTION revintel_contract_active_on(status text, start_date date, end_date date, day date) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT status = 'active' AND start_date <= day AND (end_date IS NULL OR end_date >= day)
$$;
--> statement-breakpoint
-- A customer's monthly recurring revenue from its ARR: one twelfth, rounded half away from zero to
-- the minor unit.
CREATE FUNCTION revintel_mrr(arr bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT round(arr / 12.0)::bigint
$$;
--> statement-breakpoint
-- How many days an invoice is past due on a day: open or uncollectible, with a due date before
-- that day; otherwise 0 (paid, void and draft invoices are never past due).
CREATE FUNCTION revintel_days_past_due(status text, due_date date, day date) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN status IN ('open', 'uncollectible') AND due_date IS NOT NULL AND due_date < day THEN day - due_date ELSE 0 END
$$;

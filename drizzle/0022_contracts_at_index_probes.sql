-- revintel_contracts_at for a few customers (a chunk of a recompute, one stale customer): the rows
-- of revintel_contracts_at(org, day) whose customer_id is in `customers`, found from the customers'
-- revisions (contract_revisions_org_customer_idx) with each one's last revision by the day looked up
-- by a correlated max(), an index probe per revision (contract_id, revision) that the planner never
-- turns into a join. Through 0021's NOT EXISTS, a chunk of 300 customers got a hash anti-join over a
-- sequential scan of every organisation's revisions, and the row estimates, poor either way here,
-- put the chunk's joins in nested loops that ran the aggregate again per customer (PostgreSQL,
-- 10,000 demo customers: 112 ms; features.ts materializes the chunk's CTEs). The whole-organisation
-- form stays 0021's: there a hash join over all the revisions is the right plan.
CREATE FUNCTION revintel_contracts_at(org text, day date, customers text[])
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
  FROM contract_revisions r
  WHERE r.org_id = revintel_contracts_at.org AND r.customer_id = ANY (revintel_contracts_at.customers)
    AND r.valid_from <= revintel_contracts_at.day AND NOT r.deleted
    AND r.revision = (
      SELECT max(later.revision) FROM contract_revisions later
      WHERE later.contract_id = r.contract_id AND later.valid_from <= revintel_contracts_at.day
    )
$$;

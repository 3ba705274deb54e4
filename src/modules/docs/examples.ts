// A request body a client can start from, per operation ("METHOD /path" as the route declares
// it), each one a body the test suite sends. The OpenAPI test checks each against its schema, and
// sends those that need only a customer to the server (the one customer id stands for its own).
export const REQUEST_EXAMPLES: Record<string, unknown> = {
  'POST /api/customers': { name: 'Acme', currency: 'EUR', csm: { email: 'ann@example.com' } },
  'POST /api/contracts': {
    customer_id: 'cus_2mQ8xV',
    name: 'Pro',
    status: 'active',
    start_date: '2026-01-01',
    end_date: '2026-12-31',
    billing_interval: 'month',
    amount: 10000,
  },
  'POST /api/invoices': { customer_id: 'cus_2mQ8xV', amount_due: 500, issued_at: '2026-03-01T09:00:00Z' },
  'POST /api/csms': { email: 'bo@example.com', name: 'Bo', role: 'manager', channels: ['slack'] },
  'POST /api/agent-actions': { customer_id: 'cus_2mQ8xV', type: 'discount_offer', params: { percent: 10, months: 3 } },
  'POST /api/agent-actions/:id/approve': { comment: 'go' },
  'POST /api/agent-actions/:id/reject': { comment: 'not now' },
  'POST /api/agent-actions/:id/snooze': { days: 2 },
  'PUT /api/action-rules': { rules: [{ trigger: 'renewal_due', within_days: 30, action: 'renewal_call', params: { due_in_days: 5 } }] },
  'POST /api/cfo/predictions/recompute': { customer_ids: ['cus_2mQ8xV'] },
  'POST /api/cfo/backtests': { method: 'cross_validation', as_of: '2026-06-30', horizon_days: 60 },
  'POST /api/connectors/:id/secret': { secret: 'second-secret-456', grace_seconds: 3600 },
};

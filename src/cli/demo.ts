import { cliActor, DATABASE_OPTIONS_HELP, parseCommand, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';
import { utcToday } from '../lib/today.ts';
import { webhookUrl } from '../modules/connectors/service.ts';

const HELP = `
Usage: revintel demo [--customers N] [--seed S] [--org NAME]

Creates (or refreshes) a demo organisation with realistic ARR data — customers across segments and
currencies, monthly/quarterly/annual contracts with renewals, cancellations and expansions,
invoices paid, open, overdue and void — and support tickets with their intelligence (churning
customers ask to cancel, late payers dispute charges), and prints an API key for it and the webhook
URL of its help desk connector. The same seed gives the same
data on the same day. Defaults: 300 customers, seed 42, organisation "Demo".

${DATABASE_OPTIONS_HELP}
`;

const OPTIONS = {
  customers: { type: 'string' },
  seed: { type: 'string' },
  org: { type: 'string' },
} as const;

const integer = (raw: unknown, name: string, fallback: number, max: number) => {
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new UsageError(`--${name} must be an integer from 1 to ${max}, got "${String(raw)}"`);
  }
  return Number(raw);
};

export async function demoCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const input = {
    orgName: typeof cmd.values.org === 'string' ? cmd.values.org : 'Demo',
    customers: integer(cmd.values.customers, 'customers', 300, 1_000_000),
    seed: integer(cmd.values.seed, 'seed', 42, 2 ** 31),
    today: utcToday(),
    actor: cliActor(),
  };
  const result = await withAdminSession(cmd.config(), 'demo', (s) => s.runner.run('demo.load', input));
  const config = cmd.config();
  const webhook = webhookUrl(result.connector.id, config.publicUrl ?? `http://localhost:${config.port}`);
  cmd.print({ org_id: result.org.id, org: result.org.name, key_id: result.key.id, secret: result.secret, connector_id: result.connector.id, webhook_url: webhook, ...result.counts }, (r) =>
    [
      `demo organisation "${r.org}" (${r.org_id}): ${r.customers} customers, ${r.contracts} contracts, ${r.invoices} invoices, ${r.tickets} tickets`,
      '',
      `  API key: ${r.secret}`,
      '',
      `Try: curl -H "Authorization: Bearer ${r.secret}" http://localhost:${config.port}/api/customers?sort=arr`,
      `     curl -H "Authorization: Bearer ${r.secret}" "http://localhost:${config.port}/api/tickets?churn_signal=cancellation"`,
      `Post a ticket to its help desk (no signature needed):`,
      `     curl -H 'content-type: application/json' -d '{"ticket":{"id":"T-1","subject":"We will cancel","requester_email":"cfo@example.com"}}' "${r.webhook_url}"`,
    ].join('\n'),
  );
}

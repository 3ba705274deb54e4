import { cliActor, DATABASE_OPTIONS_HELP, parseCommand, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';
import { utcToday } from '../lib/today.ts';

const HELP = `
Usage: revintel demo [--customers N] [--seed S] [--org NAME]

Creates (or refreshes) a demo organisation with realistic ARR data — customers across segments and
currencies, monthly/quarterly/annual contracts with renewals, cancellations and expansions,
invoices paid, open, overdue and void — and prints an API key for it. The same seed gives the same
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
  cmd.print({ org_id: result.org.id, org: result.org.name, key_id: result.key.id, secret: result.secret, ...result.counts }, (r) =>
    [
      `demo organisation "${r.org}" (${r.org_id}): ${r.customers} customers, ${r.contracts} contracts, ${r.invoices} invoices`,
      '',
      `  API key: ${r.secret}`,
      '',
      `Try: curl -H "Authorization: Bearer ${r.secret}" http://localhost:3000/api/customers?sort=arr`,
    ].join('\n'),
  );
}

// revintel predictions list|show|recompute: an organisation's churn predictions from a terminal —
// who is at risk and why, and a rescore when the operator wants one now.
import { RISK_BANDS, type RiskBand } from '../db/schema/index.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, parseCommand, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: {
    type: 'string',
    value: 'ORG',
    description: 'an organisation id or its exact name',
    default: 'the only organisation, when there is one',
  },
  risk: {
    type: 'string',
    value: 'BANDS',
    description: `list: only these risk bands, a comma list of ${RISK_BANDS.join(', ')}`,
    default: 'every band',
  },
  limit: { type: 'string', value: 'N', description: 'list: how many, the riskiest ARR first (1 to 1000)', default: '20' },
  retrain: { type: 'boolean', description: 'recompute: fit the model on the history first' },
};

const HELP = helpText({
  usage: 'revintel predictions <list|show|recompute> [options]',
  about: `  list [--org ORG] [--risk BANDS] [--limit N]
                                      the riskiest ARR first, with the summary per currency
  show CUSTOMER_ID [--org ORG]        one prediction with every driver
  recompute [--org ORG] [--retrain]   queue a rescore of every customer (the worker runs it)`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

const percent = (p: number) => `${(100 * p).toFixed(1)}%`;
const signed = (x: number) => (x >= 0 ? '+' : '') + x.toFixed(3);
const signedPoints = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)} pp`;
/** The strongest driver group that is not the sum of the rest, with its points. */
const topDriver = (drivers: { group: string; label: string; points: number }[]) => {
  const top = drivers.find((d) => d.group !== 'other');
  return top ? `${top.label} (${signedPoints(top.points)})` : null;
};
const money = (minor: number, currency: string) => `${Math.round(minor / 100).toLocaleString('en-US')} ${currency}`;
/** A renewal date, or the last day of service when notice was given (one ARR rule: docs/arr-data.md). */
const renewal = (p: { renewal_date: string | null; renewing: boolean | null }) =>
  p.renewal_date && p.renewing === false ? `${p.renewal_date} (ends: notice given)` : p.renewal_date;

export async function predictionsCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...positionals] = cmd.positionals;
  const org = typeof cmd.values.org === 'string' ? cmd.values.org : undefined;
  switch (sub) {
    case 'list': {
      const limit = cmd.values.limit === undefined ? 20 : Number(cmd.values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be 1 to 1000');
      let risk: RiskBand[] | undefined;
      if (typeof cmd.values.risk === 'string') {
        risk = cmd.values.risk.split(',').map((r) => r.trim()) as RiskBand[];
        const wrong = risk.find((r) => !(RISK_BANDS as readonly string[]).includes(r));
        if (wrong !== undefined) throw new UsageError(`--risk must be a comma list of ${RISK_BANDS.join(', ')}, not "${wrong}"`);
      }
      const result = await withAdminSession(cmd.config(), 'predictions list', (s) =>
        s.runner.run('predictions.list', { org, risk, limit }),
      );
      return cmd.print(result, (r) =>
        [
          table(
            r.items.map((p) => ({
              customer: `${p.customer_name} (${p.customer_id})`,
              risk: p.risk,
              probability: percent(p.probability),
              arr_at_risk: money(p.arr_at_risk, p.currency),
              renewal: renewal(p),
              top_driver: topDriver(p.drivers),
            })),
            ['customer', 'risk', 'probability', 'arr_at_risk', 'renewal', 'top_driver'],
          ),
          '',
          ...r.meta.summary.map(
            (s) =>
              `${s.currency}: ${s.customers} customers, ARR ${money(s.total_arr, s.currency)}, at risk ${money(s.arr_at_risk, s.currency)} (expected GRR ${s.expected_grr === null ? '-' : percent(s.expected_grr)})`,
          ),
          `model: ${r.meta.model ? `${r.meta.model.kind} ${r.meta.model.id}` : 'none yet (run "revintel predictions recompute")'}; stale customers: ${r.meta.stale_customers}`,
        ].join('\n'),
      );
    }
    case 'show': {
      const customer = positionals[0];
      if (!customer) throw new UsageError(`predictions show needs CUSTOMER_ID\n${HELP}`);
      const p = await withAdminSession(cmd.config(), 'predictions show', (s) => s.runner.run('predictions.show', { org, customer }));
      return cmd.print(p, (x) =>
        [
          `${x.customer_name} (${x.customer_id}): ${percent(x.probability)} within ${x.horizon_days} days — ${x.risk}${x.previous_risk ? ` (was ${x.previous_risk})` : ''}`,
          `ARR ${money(x.arr, x.currency)}, at risk ${money(x.arr_at_risk, x.currency)}; renewal ${renewal(x) ?? '-'}; model ${x.model_kind} ${x.model_id}; predicted ${x.predicted_at}${x.stale ? ' (stale: a recompute is coming)' : ''}`,
          ...(x.missing_signals.length ? [`missing: ${x.missing_signals.join(', ')}`] : []),
          '',
          table(
            x.drivers.flatMap((d) => [
              { points: signedPoints(d.points), impact: signed(d.impact), driver: d.label },
              // Each group's features beneath it, indented.
              ...(d.features ?? [])
                .filter((f) => f.impact !== 0)
                .map((f) => ({ points: '', impact: signed(f.impact), driver: `  ${f.label}` })),
            ]),
            ['points', 'impact', 'driver'],
          ),
          '',
          "points: what the group adds to the probability, in percentage points, against the reference customer's values (they do not add up); impact: logit units.",
        ].join('\n'),
      );
    }
    case 'recompute': {
      const result = await withAdminSession(cmd.config(), 'predictions recompute', (s) =>
        s.runner.run('predictions.recompute', { org, retrain: cmd.values.retrain === true }),
      );
      const what = cmd.values.retrain ? 'retrain' : 'recompute';
      return cmd.print(
        result,
        (r) => `${r.queued_already ? `a ${what} was queued already` : `${what} queued`}: job ${r.job_id} (revintel jobs show ${r.job_id})`,
      );
    }
    default:
      throw new UsageError(sub ? `unknown predictions command "${sub}"\n${HELP}` : HELP);
  }
}

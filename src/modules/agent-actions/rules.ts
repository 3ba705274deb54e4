// Action rules (docs/agent-actions.md): when a customer's risk band rises to at least a band, when a ticket
// carries a churn signal, or when a renewal without auto-renew comes within N days, propose an
// action. Each organisation's rules are one row (absent: the defaults). Firing goes through
// proposeAction, so at most one action is open per (customer, type) and a firing during a snooze or
// a cool-down only adds to its trigger_count.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { RISK_BANDS, type ActionPriority, type ActionType, type RiskBand } from '../../db/schema/index.ts';
import { AppError } from '../../lib/errors.ts';
import { validator } from '../../lib/validation.ts';
import { RULES, type Rule } from './model.ts';
import { emitOutboundEvent } from './events.ts';
import { paramsProblem, proposeAction, type ProposeOutcome } from './service.ts';
import type { ActionSettings } from './settings.ts';

export type StoredRule = Rule;

export interface EffectiveRule {
  trigger: 'risk_rise' | 'churn_signal' | 'renewal_due';
  band?: RiskBand;
  signal?: string;
  within_days?: number;
  action: ActionType;
  params: Record<string, unknown>;
  priority: ActionPriority;
  enabled: boolean;
}

export const DEFAULT_RULES: readonly EffectiveRule[] = [
  { trigger: 'risk_rise', band: 'high', action: 'check_in', params: { channel: 'call', due_in_days: 3 }, priority: 'high', enabled: true },
  {
    trigger: 'risk_rise',
    band: 'critical',
    action: 'escalation',
    params: { to: 'manager', note: 'Churn risk rose to critical' },
    priority: 'urgent',
    enabled: true,
  },
  {
    trigger: 'churn_signal',
    signal: 'cancellation',
    action: 'renewal_call',
    params: { due_in_days: 2 },
    priority: 'urgent',
    enabled: true,
  },
];

const checkers = Object.fromEntries(Object.entries(RULES).map(([trigger, schema]) => [trigger, validator(schema)])) as Record<
  string,
  (value: unknown) => string | null
>;

/** Checks a PUT body's rules, naming the field (`rules.1.params.percent`). */
export function parseRules(rules: unknown[]): EffectiveRule[] {
  return rules.map((raw, index) => {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw))
      throw new AppError('validation_failed', `Invalid field "rules.${index}": must be an object`);
    const trigger = String((raw as { trigger?: unknown }).trigger);
    const check = Object.hasOwn(checkers, trigger) ? checkers[trigger] : undefined;
    if (!check)
      throw new AppError('validation_failed', `Invalid field "rules.${index}.trigger": must be one of ${Object.keys(RULES).join(', ')}`);
    const problem = check(raw);
    if (problem)
      throw new AppError(
        'validation_failed',
        problem
          .replace(/^Invalid field "/, `Invalid field "rules.${index}.`)
          .replace(/^Invalid record: /, `Invalid field "rules.${index}": `),
      );
    const rule = raw as Rule;
    const bad = paramsProblem(rule.action as ActionType, rule.params, `rules.${index}.params`);
    if (bad) throw new AppError('validation_failed', bad);
    return { ...rule, priority: rule.priority ?? 'normal', enabled: rule.enabled ?? true } as EffectiveRule;
  });
}

export async function rulesOf(db: Db, orgId: string): Promise<{ rules: EffectiveRule[]; defaults: boolean }> {
  const [row] = rowsOf<{ rules: EffectiveRule[] }>(await db.execute(sql`select rules from action_rules where org_id = ${orgId}`));
  return row ? { rules: row.rules, defaults: false } : { rules: [...DEFAULT_RULES], defaults: true };
}

export async function putRules(db: Db, orgId: string, rules: EffectiveRule[]): Promise<EffectiveRule[]> {
  await db.execute(sql`
    insert into action_rules (org_id, rules, updated_at) values (${orgId}, ${JSON.stringify(rules)}::jsonb, now())
    on conflict (org_id) do update set rules = excluded.rules, updated_at = now()`);
  return rules;
}

async function fire(
  db: Db,
  orgId: string,
  customerId: string,
  rule: EffectiveRule,
  reason: 'risk_rise' | 'churn_signal' | 'renewal_due',
  rationale: string,
  settings: ActionSettings,
): Promise<ProposeOutcome | null> {
  // A customer that churned or is gone meanwhile is no one to act for: the rule does nothing.
  const [customer] = rowsOf<{ status: string }>(
    await db.execute(sql`select status from customers where org_id = ${orgId} and id = ${customerId} and deleted_at is null`),
  );
  if (!customer || customer.status === 'churned') return null;
  return proposeAction(
    db,
    {
      orgId,
      customerId,
      type: rule.action,
      params: rule.params,
      reason,
      rationale,
      priority: rule.priority,
      source: 'rule',
      actor: { kind: 'rule', trigger: rule.trigger },
    },
    settings,
  );
}

// --- risk rises (from the predictions' scoring) -------------------------------------------------

const bandIndex = (band: RiskBand) => RISK_BANDS.indexOf(band);

/** The probability a band starts at (`bands`: upper bounds of low, medium, high). */
const lowerEdge = (band: RiskBand, bands: readonly [number, number, number]) => (band === 'low' ? 0 : bands[bandIndex(band) - 1]!);

export interface ScoredCustomer {
  customer_id: string;
  probability: number;
  risk: RiskBand;
  drivers: { label: string; impact: number; points?: number }[];
}

/**
 * Fires the organisation's risk-rise rules for a chunk of new scores, before they replace the
 * stored ones (in the chunk's transaction). Only customers in `changed` count — those whose own
 * inputs changed (their stale marks): a retrain that moves every band proposes nothing. A rule for
 * band B fires when the band rose from below B to B or above, and the probability stands at least
 * 10 % of B's lower edge above that edge (no flapping at an edge). Of the rules that match, those
 * of the highest band fire. A customer's first prediction is no rise. Every band change of such a
 * customer (up or down) is also a `prediction.risk_changed` event for the organisation's endpoints.
 */
export async function fireRiskRises(
  db: Db,
  args: { orgId: string; changed: string[]; scores: ScoredCustomer[]; bands: readonly [number, number, number] },
  settings: ActionSettings,
): Promise<number> {
  const changed = new Set(args.changed);
  const candidates = args.scores.filter((s) => changed.has(s.customer_id));
  if (candidates.length === 0) return 0;
  const before = new Map(
    rowsOf<{ customer_id: string; risk: RiskBand; probability: number }>(
      await db.execute(
        sql`select customer_id, risk, probability from predictions where org_id = ${args.orgId} and customer_id in (${sql.join(
          candidates.map((c) => sql`${c.customer_id}`),
          sql`, `,
        )})`,
      ),
    ).map((r) => [r.customer_id, r]),
  );
  // Every band change of a customer whose own inputs changed is an event for the organisation.
  for (const score of candidates) {
    const previous = before.get(score.customer_id);
    if (previous && previous.risk !== score.risk) {
      await emitOutboundEvent(db, args.orgId, 'prediction.risk_changed', {
        customer_id: score.customer_id,
        from: previous.risk,
        to: score.risk,
        probability_before: previous.probability,
        probability: score.probability,
        drivers: score.drivers.slice(0, 3).map((d) => ({ label: d.label, impact: d.impact, points: d.points })),
      });
    }
  }
  const rising = candidates.filter(
    (s) => s.risk !== 'low' && before.has(s.customer_id) && bandIndex(before.get(s.customer_id)!.risk) < bandIndex(s.risk),
  );
  if (rising.length === 0) return 0;
  const { rules } = await rulesOf(db, args.orgId);
  const riskRules = rules.filter((r) => r.enabled && r.trigger === 'risk_rise' && r.band);
  let fired = 0;
  for (const score of rising) {
    const previous = before.get(score.customer_id)!.risk;
    const matching = riskRules.filter((r) => {
      const band = r.band!;
      return (
        bandIndex(previous) < bandIndex(band) &&
        bandIndex(score.risk) >= bandIndex(band) &&
        score.probability >= lowerEdge(band, args.bands) * 1.1
      );
    });
    if (matching.length === 0) continue;
    const top = Math.max(...matching.map((r) => bandIndex(r.band!)));
    const drivers = score.drivers
      .filter((d) => d.impact > 0)
      .slice(0, 3)
      .map((d) => d.label);
    const rationale = `Churn risk rose from ${previous} to ${score.risk} (${Math.round(score.probability * 1000) / 10} %)${drivers.length ? `: ${drivers.join('; ')}` : ''}`;
    for (const rule of matching.filter((r) => bandIndex(r.band!) === top)) {
      if (await fire(db, args.orgId, score.customer_id, rule, 'risk_rise', rationale, settings)) fired++;
    }
  }
  return fired;
}

// --- churn signals (from ticket processing) -----------------------------------------------------

/** Fires churn-signal rules for tickets just written (created or changed) that carry a signal and
 * are linked to a customer. A re-delivered ticket that changes nothing is not written, so fires
 * nothing. */
export async function fireTicketSignals(db: Db, ticketIds: string[], settings: ActionSettings): Promise<number> {
  if (ticketIds.length === 0) return 0;
  const tickets = rowsOf<{ id: string; org_id: string; customer_id: string; churn_signals: string[]; subject: string | null }>(
    await db.execute(sql`
      select id, org_id, customer_id, churn_signals, subject from tickets
      where id in (${sql.join(
        ticketIds.map((id) => sql`${id}`),
        sql`, `,
      )}) and customer_id is not null and jsonb_array_length(coalesce(churn_signals, '[]'::jsonb)) > 0
      order by id`),
  );
  let fired = 0;
  const rulesByOrg = new Map<string, EffectiveRule[]>();
  for (const ticket of tickets) {
    let rules = rulesByOrg.get(ticket.org_id);
    if (!rules)
      rulesByOrg.set(
        ticket.org_id,
        (rules = (await rulesOf(db, ticket.org_id)).rules.filter((r) => r.enabled && r.trigger === 'churn_signal')),
      );
    for (const rule of rules) {
      if (!ticket.churn_signals.includes(rule.signal!)) continue;
      const rationale = `Ticket ${ticket.id}${ticket.subject ? ` ("${ticket.subject.slice(0, 120)}")` : ''} carries the churn signal "${rule.signal}"`;
      if (await fire(db, ticket.org_id, ticket.customer_id, rule, 'churn_signal', rationale, settings)) fired++;
    }
  }
  return fired;
}

// --- renewals due (a scheduled sweep) -----------------------------------------------------------

/** The organisations with an enabled renewal rule. */
export async function renewalRuleOrgs(db: Db): Promise<string[]> {
  const rows = rowsOf<{ org_id: string }>(
    await db.execute(
      sql`select org_id from action_rules where rules @> '[{"trigger": "renewal_due", "enabled": true}]'::jsonb order by org_id`,
    ),
  );
  return rows.map((r) => r.org_id);
}

/** Where a renewal batch starts: after this contract end (in end-date, then id order). */
export interface RenewalCursor {
  endDate: string;
  contractId: string;
}

export interface RenewalBatch {
  fired: number;
  /** Where the rule's next batch starts; null when it has nothing more due. */
  next: RenewalCursor | null;
  /** How many renewal rules the organisation has. */
  rules: number;
}

/**
 * One batch of one organisation's renewal rule (the `rule`-th of its renewal rules): up to `limit`
 * contracts after `after` due within the rule's days, each claimed once per contract end. A batch
 * per unit, so an organisation with tens of thousands of renewals due holds the embedded database
 * no longer than one batch.
 */
export async function fireRenewalsDueBatch(
  db: Db,
  args: { orgId: string; today: string; rule: number; after: RenewalCursor | null; limit: number },
  settings: ActionSettings,
): Promise<RenewalBatch> {
  const renewalRules = (await rulesOf(db, args.orgId)).rules.filter((r) => r.enabled && r.trigger === 'renewal_due');
  const rule = renewalRules[args.rule];
  if (!rule) return { fired: 0, next: null, rules: renewalRules.length };
  const after = args.after ? sql`and (ct.end_date, ct.id) > (${args.after.endDate}::date, ${args.after.contractId})` : sql``;
  const due = rowsOf<{ id: string; customer_id: string; end_date: string }>(
    await db.execute(sql`
      select ct.id, ct.customer_id, ct.end_date::text as end_date from contracts ct join customers c on c.org_id = ct.org_id and c.id = ct.customer_id
      where ct.org_id = ${args.orgId} and ct.deleted_at is null and c.deleted_at is null and c.status <> 'churned' and ct.status = 'active' and not ct.auto_renew
        and ct.end_date >= ${args.today}::date and ct.end_date <= ${args.today}::date + ${rule.within_days!}::int ${after}
      order by ct.end_date, ct.id limit ${args.limit}`),
  );
  let fired = 0;
  for (const contract of due) {
    const claimed = rowsOf(
      await db.execute(sql`
        insert into action_rule_firings (org_id, key) values (${args.orgId}, ${`renewal_due:${rule.action}:${contract.id}:${contract.end_date}`})
        on conflict do nothing returning key`),
    );
    if (claimed.length === 0) continue;
    const rationale = `Contract ${contract.id} ends on ${contract.end_date} without auto-renew`;
    if (await fire(db, args.orgId, contract.customer_id, rule, 'renewal_due', rationale, settings)) fired++;
  }
  const last = due.at(-1);
  return {
    fired,
    next: due.length === args.limit && last ? { endDate: last.end_date, contractId: last.id } : null,
    rules: renewalRules.length,
  };
}

/** Fires renewal rules for active contracts without auto-renew ending within the rule's days —
 * once per (rule, contract end): a firing is remembered in action_rule_firings. Every
 * organisation's rules of `orgs`, batch after batch through `batch` (fireRenewalsDueBatch on a
 * database, or a job's unit). */
export async function fireRenewalsDueInBatches(
  orgs: string[],
  batch: (args: { orgId: string; rule: number; after: RenewalCursor | null }) => Promise<RenewalBatch>,
): Promise<number> {
  let fired = 0;
  for (const orgId of orgs) {
    let rules = 1;
    for (let rule = 0; rule < rules; rule++) {
      let after: RenewalCursor | null = null;
      do {
        const result: RenewalBatch = await batch({ orgId, rule, after });
        rules = result.rules;
        fired += result.fired;
        after = result.next;
      } while (after);
    }
  }
  return fired;
}

/** Renewal rules of every organisation, in batches of `limit` on `db` (in its transaction if it is one). */
export async function fireRenewalsDue(db: Db, today: string, settings: ActionSettings, limit = 500): Promise<number> {
  return fireRenewalsDueInBatches(await renewalRuleOrgs(db), (args) => fireRenewalsDueBatch(db, { ...args, today, limit }, settings));
}

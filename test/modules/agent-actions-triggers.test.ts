// Action rules firing on both backends (docs/agent-actions.md → Rules): a risk rise from the
// predictions' scoring — only for customers whose own inputs changed, only past the 10 % margin,
// two rises making one action with trigger_count 2, each band change a prediction.risk_changed event; a ticket's cancellation signal proposing a
// renewal call once, its re-delivery nothing more; a renewal without auto-renew within the rule's
// days proposing once per contract end; a firing during a snooze or a cool-down only counted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { newId } from '../../src/lib/ids.ts';
import { utcToday } from '../../src/lib/today.ts';
import { fireRenewalsDue } from '../../src/modules/agent-actions/rules.ts';
import { recomputePredictions } from '../../src/modules/predictions/service.ts';
import { DEFAULT_PREDICTION_SETTINGS, type PredictionSettings } from '../../src/modules/predictions/settings.ts';
import { addDays } from '../../src/modules/predictions/training.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, insertRow, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { drainQueue } from '../helpers/tickets.ts';
import { runHandler } from '../helpers/jobs.ts';
import { renewalsDueJob } from '../../src/modules/agent-actions/jobs/renewals.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

for (const backend of BACKENDS) {
  describe(`agent action rules (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await createOrgWithKey(database);
      key = made.secret;
      orgId = made.org.id;
    });
    afterAll(() => database?.dispose());

    const get = (path: string) => call(app, 'GET', path, { key });

    /** A scored customer: one active yearly contract. */
    async function scoredCustomer(options: { autoRenew?: boolean; endInDays?: number | null; email?: string } = {}): Promise<string> {
      const id = newId('cus');
      const today = utcToday();
      await insertRow(database.db, 'customers', {
        id,
        org_id: orgId,
        name: `Customer ${id.slice(4, 10)}`,
        currency: 'EUR',
        email: options.email ?? null,
      });
      await insertRow(database.db, 'contracts', {
        id: newId('ctr'),
        org_id: orgId,
        customer_id: id,
        name: 'Plan',
        currency: 'EUR',
        status: 'active',
        billing_interval: 'year',
        start_date: addDays(today, -300),
        end_date: options.endInDays === null ? null : addDays(today, options.endInDays ?? 200),
        auto_renew: options.autoRenew ?? true,
        amount: 1_200_000,
      });
      return id;
    }

    const recompute = (customerId: string, settings: PredictionSettings) =>
      database.db.transaction((tx) =>
        recomputePredictions(tx as never, {
          orgId,
          today: utcToday(),
          customerIds: [customerId],
          settings: { ...DEFAULT_SETTINGS, predictions: settings },
        }),
      );
    const probabilityOf = async (customerId: string) =>
      (
        await queryText<{ probability: number }>(
          database.db,
          `select probability from predictions where org_id = $1 and customer_id = $2`,
          [orgId, customerId],
        )
      )[0]!.probability;
    /** Bands that put probability p in `band`'s range, `margin` times its lower edge. */
    const bandsFor = (p: number, margin: number): PredictionSettings => ({
      ...DEFAULT_PREDICTION_SETTINGS,
      riskBands: [p / margin / 4, p / margin, p * 4],
    });
    const setBand = (customerId: string, risk: string) =>
      queryText(database.db, `update predictions set risk = $3 where org_id = $1 and customer_id = $2`, [orgId, customerId, risk]);
    const markChanged = (customerId: string) =>
      queryText(
        database.db,
        `insert into risk_input_changes (org_id, customer_id, changed_at) values ($1, $2, now()) on conflict (org_id, customer_id) do update set changed_at = now()`,
        [orgId, customerId],
      );
    const actionsOf = async (customerId: string) => (await get(`/api/agent-actions?customer_id=${customerId}`)).body.data as any[];

    test('two risk rises of a customer whose inputs changed: one check_in with trigger_count 2', async () => {
      const id = await scoredCustomer();
      await recompute(id, DEFAULT_PREDICTION_SETTINGS);
      const p = await probabilityOf(id);
      // Its band was low; its inputs changed; it is now high, 20 % past the edge.
      await setBand(id, 'low');
      await markChanged(id);
      await recompute(id, bandsFor(p, 1.2));
      const [first, ...none] = await actionsOf(id);
      expect(none).toHaveLength(0);
      expect(first).toMatchObject({
        type: 'check_in',
        reason: 'risk_rise',
        trigger_count: 1,
        status: 'pending_approval',
        priority: 'high',
      });
      expect(first.rationale).toContain('rose from low to high');
      const changes = await queryText<{ data: any }>(
        database.db,
        `select data from outbound_events where org_id = $1 and type = 'prediction.risk_changed' and data->>'customer_id' = $2`,
        [orgId, id],
      );
      expect(changes.map((c) => [c.data.from, c.data.to])).toEqual([['low', 'high']]);
      // It fell back to medium, and rose again.
      await setBand(id, 'medium');
      await markChanged(id);
      await recompute(id, bandsFor(p, 1.2));
      const again = await actionsOf(id);
      expect(again).toHaveLength(1);
      expect(again[0]).toMatchObject({ id: first.id, trigger_count: 2 });
    });

    test('no rise without a change of its own inputs (a retrain), nor within 10 % of the edge', async () => {
      const id = await scoredCustomer();
      await recompute(id, DEFAULT_PREDICTION_SETTINGS);
      const p = await probabilityOf(id);
      await setBand(id, 'low');
      await recompute(id, bandsFor(p, 1.2)); // every band moved, its inputs did not
      expect(await actionsOf(id)).toHaveLength(0);
      expect(
        await queryText(
          database.db,
          `select 1 from outbound_events where org_id = $1 and type = 'prediction.risk_changed' and data->>'customer_id' = $2`,
          [orgId, id],
        ),
      ).toHaveLength(0);
      await setBand(id, 'low');
      await markChanged(id);
      await recompute(id, bandsFor(p, 1.05)); // just past the edge: flapping, not a rise
      expect(await actionsOf(id)).toHaveLength(0);
    });

    test('a rise to critical proposes the escalation only; during a snooze a rise is counted on it', async () => {
      const id = await scoredCustomer();
      await recompute(id, DEFAULT_PREDICTION_SETTINGS);
      const p = await probabilityOf(id);
      const critical: PredictionSettings = { ...DEFAULT_PREDICTION_SETTINGS, riskBands: [p / 8, p / 4, p / 2] };
      await setBand(id, 'low');
      await markChanged(id);
      await recompute(id, critical);
      const [action, ...none] = await actionsOf(id);
      expect(none).toHaveLength(0);
      expect(action).toMatchObject({ type: 'escalation', reason: 'risk_rise' });
      expect((await call(app, 'POST', `/api/agent-actions/${action.id}/snooze`, { key })).status).toBe(200);
      await setBand(id, 'medium');
      await markChanged(id);
      await recompute(id, critical);
      const [snoozed] = await actionsOf(id);
      expect(snoozed).toMatchObject({ id: action.id, status: 'snoozed', trigger_count: 2 });
    });

    test('a ticket with a cancellation signal proposes a renewal call; its re-delivery nothing more; during the cool-down it is counted', async () => {
      const email = `buyer@${newId('cus').slice(4, 12).toLowerCase()}.example`;
      const id = await scoredCustomer({ email });
      const ticket = {
        id: `T-${id}`,
        subject: 'We want to cancel our subscription',
        description: 'Please cancel at the end of the term; we are moving away.',
        requester_email: email,
      };
      const imported = await call(app, 'POST', '/api/ticket-intelligence/import', { key, body: { tickets: [ticket] } });
      expect(imported.status).toBe(202);
      await drainQueue(database);
      const [action, ...none] = await actionsOf(id);
      expect(none).toHaveLength(0);
      expect(action).toMatchObject({ type: 'renewal_call', reason: 'churn_signal', trigger_count: 1, priority: 'urgent' });
      expect(action.rationale).toContain('cancellation');
      await call(app, 'POST', '/api/ticket-intelligence/import', { key, body: { tickets: [ticket] } });
      await drainQueue(database);
      expect((await actionsOf(id))[0].trigger_count).toBe(1);
      expect((await call(app, 'POST', `/api/agent-actions/${action.id}/reject`, { key })).status).toBe(200);
      await call(app, 'POST', '/api/ticket-intelligence/import', { key, body: { tickets: [{ ...ticket, id: `T2-${id}` }] } });
      await drainQueue(database);
      const after = await actionsOf(id);
      expect(after).toHaveLength(1);
      expect(after[0]).toMatchObject({ id: action.id, status: 'rejected', trigger_count: 2 });
    });

    test("a renewal without auto-renew within the rule's days proposes once per contract end", async () => {
      const rules = await call(app, 'PUT', '/api/action-rules', {
        key,
        body: { rules: [{ trigger: 'renewal_due', within_days: 30, action: 'renewal_call', params: { due_in_days: 5 } }] },
      });
      expect(rules.status).toBe(200);
      const due = await scoredCustomer({ autoRenew: false, endInDays: 12 });
      const renewing = await scoredCustomer({ autoRenew: true, endInDays: 12 });
      const later = await scoredCustomer({ autoRenew: false, endInDays: 60 });
      await database.db.transaction((tx) => fireRenewalsDue(tx as never, utcToday(), DEFAULT_ACTION_SETTINGS));
      await database.db.transaction((tx) => fireRenewalsDue(tx as never, utcToday(), DEFAULT_ACTION_SETTINGS));
      const [action, ...none] = await actionsOf(due);
      expect(none).toHaveLength(0);
      expect(action).toMatchObject({ type: 'renewal_call', reason: 'renewal_due', trigger_count: 1 });
      expect(await actionsOf(renewing)).toHaveLength(0);
      expect(await actionsOf(later)).toHaveLength(0);
    });

    test('the renewals job, a contract per unit, proposes once for every contract due', async () => {
      const rules = await call(app, 'PUT', '/api/action-rules', {
        key,
        body: { rules: [{ trigger: 'renewal_due', within_days: 30, action: 'renewal_call', params: { due_in_days: 5 } }] },
      });
      expect(rules.status).toBe(200);
      const due = [
        await scoredCustomer({ autoRenew: false, endInDays: 3 }),
        await scoredCustomer({ autoRenew: false, endInDays: 9 }),
        await scoredCustomer({ autoRenew: false, endInDays: 9 }),
      ];
      let units = 0;
      await runHandler(
        database.db,
        renewalsDueJob,
        { batchSize: 1 },
        { orgId: null },
        { seen: (unit) => void (unit === 'batch' && units++) },
      );
      await runHandler(database.db, renewalsDueJob, { batchSize: 1 }, { orgId: null });
      for (const customer of due) expect((await actionsOf(customer)).map((a) => a.trigger_count)).toEqual([1]);
      expect(units).toBeGreaterThanOrEqual(due.length);
    });
  });
}

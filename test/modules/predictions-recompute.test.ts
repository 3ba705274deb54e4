// Scoring an organisation on both backends: the scorecard is stored as its first model; every
// scored customer gets a prediction whose drivers add up to its probability; a new signal for one
// customer moves its prediction and no other; the stale marks of the customers it rescored are
// answered, others' stay; a customer no longer scored loses its prediction.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { sigmoid } from '../../src/modules/predictions/logistic.ts';
import { DRIVER_GROUPS } from '../../src/modules/predictions/model.ts';
import { recomputePredictions, riskBand } from '../../src/modules/predictions/service.ts';
import { sweepStaleJob } from '../../src/modules/predictions/jobs/sweep-stale.ts';
import { recomputeStaleJob } from '../../src/modules/predictions/jobs/recompute-stale.ts';
import { insertRow, BACKENDS, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { makeConnector } from '../helpers/tickets.ts';
import { runHandler } from '../helpers/jobs.ts';

const TODAY = '2026-06-30';

interface Stored {
  customer_id: string;
  probability: number;
  base_logit: number;
  risk: string;
  previous_risk: string | null;
  drivers: { group: string; label: string; impact: number }[];
  predicted_at: string;
  data_completeness: number;
  missing_signals: string[];
  arr: string | number;
}

for (const backend of BACKENDS) {
  describe(`scoring an organisation (${backend})`, () => {
    let database: TestDatabase;
    let orgId: string;
    let connectorId: string;
    const id = (name: string) => `${name}_${orgId.slice(4, 14)}`;
    const stored = async () =>
      new Map(
        (
          await queryText<Stored>(
            database.db,
            `select customer_id, probability, base_logit, risk, previous_risk, drivers, predicted_at::text, data_completeness, missing_signals, arr from predictions where org_id = $1`,
            [orgId],
          )
        ).map((r) => [r.customer_id, r]),
      );

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      orgId = (await createOrgWithKey(database)).org.id;
      connectorId = (await makeConnector(database, orgId)).id;
      const db = database.db;
      for (const name of ['steady', 'renewing', 'over'])
        await insertRow(db, 'customers', { id: id(name), org_id: orgId, name, currency: 'EUR' });
      const contract = (name: string, customer: string, terms: Record<string, unknown>) =>
        insertRow(db, 'contracts', {
          id: id(name),
          org_id: orgId,
          customer_id: id(customer),
          name,
          currency: 'EUR',
          billing_interval: 'year',
          amount: 1_200_000,
          ...terms,
        });
      await contract('s1', 'steady', { status: 'active', start_date: '2024-01-01', end_date: '2027-12-31', auto_renew: true });
      await contract('r1', 'renewing', { status: 'active', start_date: '2025-08-01', end_date: '2026-07-31', auto_renew: false });
      await contract('o1', 'over', { status: 'ended', start_date: '2024-01-01', end_date: '2026-01-31' });
    });
    afterAll(() => database?.dispose());

    test('the scorecard is the first model; drivers add up; the renewal without auto-renew ranks higher', async () => {
      const result = await recomputePredictions(database.db, { orgId, today: TODAY });
      expect(result.scored).toBe(2);
      const [model] = await queryText<{ kind: string; status: string; id: string }>(
        database.db,
        `select id, kind, status from prediction_models where org_id = $1`,
        [orgId],
      );
      expect(model).toEqual({ id: result.modelId!, kind: 'prior', status: 'active' });
      const rows = await stored();
      expect([...rows.keys()].sort()).toEqual([id('renewing'), id('steady')].sort());
      for (const row of rows.values()) {
        expect(Math.abs(sigmoid(row.base_logit + row.drivers.reduce((s, d) => s + d.impact, 0)) - row.probability)).toBeLessThan(1e-9);
        expect(row.risk).toBe(riskBand(row.probability, [0.05, 0.15, 0.35]));
        expect(row.missing_signals).toEqual(['invoices', 'tickets']);
        expect(row.data_completeness).toBeCloseTo(1 / 3, 6);
        expect(Number(row.arr)).toBe(1_200_000);
      }
      const renewing = rows.get(id('renewing'))!;
      expect(renewing.probability).toBeGreaterThan(rows.get(id('steady'))!.probability);
      // One driver per concept; the renewal's, with its features beneath it.
      expect(renewing.drivers[0]).toMatchObject({ group: 'renewal', label: 'Renewal in 31 days, no auto-renew', at_reference: false });
      expect((renewing.drivers[0] as any).features[0]).toMatchObject({
        feature: 'renewal_due_no_autorenew',
        label: 'Renewal in 31 days, no auto-renew',
        value: 1,
        reference: 0,
      });
      expect(renewing.drivers.map((d: any) => d.group).sort()).toEqual([...DRIVER_GROUPS].sort());
    });

    test("a signal for one customer moves its prediction and no other's; its mark is answered, others' are not", async () => {
      const before = await stored();
      await insertRow(database.db, 'tickets', {
        id: id('t1'),
        org_id: orgId,
        connector_id: connectorId,
        external_id: 'T-1',
        customer_id: id('steady'),
        source_created_at: '2026-06-29T10:00:00Z',
        first_urgency: 'critical',
        first_sentiment: -0.8,
        first_churn_signals: JSON.stringify(['cancellation', 'competitor']),
      });
      await insertRow(database.db, 'risk_input_changes', { org_id: orgId, customer_id: id('steady'), changed_at: '2026-06-30T08:00:00Z' });
      await insertRow(database.db, 'risk_input_changes', {
        org_id: orgId,
        customer_id: id('renewing'),
        changed_at: '2026-06-30T08:00:00Z',
      });
      await recomputePredictions(database.db, { orgId, today: TODAY, customerIds: [id('steady')] });
      const after = await stored();
      const steady = after.get(id('steady'))!;
      expect(steady.probability).toBeGreaterThan(before.get(id('steady'))!.probability);
      expect(steady.predicted_at).not.toBe(before.get(id('steady'))!.predicted_at);
      expect(steady.missing_signals).toEqual(['invoices']);
      if (steady.risk !== before.get(id('steady'))!.risk) expect(steady.previous_risk).toBe(before.get(id('steady'))!.risk);
      expect(after.get(id('renewing'))).toEqual(before.get(id('renewing')));
      const marks = await queryText<{ customer_id: string }>(database.db, `select customer_id from risk_input_changes where org_id = $1`, [
        orgId,
      ]);
      expect(marks).toEqual([{ customer_id: id('renewing') }]);
    });

    test('a customer no longer scored loses its prediction', async () => {
      await queryText(database.db, `update customers set status = 'churned', churned_at = '2026-06-01' where id = $1`, [id('renewing')]);
      const result = await recomputePredictions(database.db, { orgId, today: TODAY });
      expect(result).toMatchObject({ scored: 1, removed: 1 });
      expect([...(await stored()).keys()]).toEqual([id('steady')]);
    });

    test('a record write marks its customer stale in the database; the sweep asks for the debounced recompute, which answers it', async () => {
      await queryText(database.db, `delete from risk_input_changes where org_id = $1`, [orgId]);
      await queryText(database.db, `update contracts set amount = 2400000 where id = $1`, [id('s1')]);
      const marks = await queryText<{ customer_id: string }>(database.db, `select customer_id from risk_input_changes where org_id = $1`, [
        orgId,
      ]);
      expect(marks).toEqual([{ customer_id: id('steady') }]);
      const swept = await runHandler(database.db, sweepStaleJob, {}, { orgId: null });
      expect(swept.asked).toBeGreaterThanOrEqual(1);
      const again = await runHandler(database.db, sweepStaleJob, {}, { orgId: null });
      const queued = await queryText<{ id: string }>(
        database.db,
        `select id from jobs where org_id = $1 and kind = 'predictions.recompute-stale' and state = 'queued'`,
        [orgId],
      );
      expect(queued).toHaveLength(1);
      expect(again.organisations).toBeGreaterThanOrEqual(1);
      const before = (await stored()).get(id('steady'))!;
      await runHandler(database.db, recomputeStaleJob, {}, { id: queued[0]!.id, orgId });
      const after = (await stored()).get(id('steady'))!;
      expect(Number(after.arr)).toBe(2 * Number(before.arr));
      expect(await queryText(database.db, `select 1 from risk_input_changes where org_id = $1`, [orgId])).toEqual([]);
    });
  });
}

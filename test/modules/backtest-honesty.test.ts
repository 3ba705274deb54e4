// Backtests said honestly: the scorecard's AUC and its interval beside the model's, a sentence when
// the model did not beat it, and `no_revision_history` only on evidence that contracts were changed
// before they were recorded (never merely because contracts were never amended), on both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { localRunner } from '../../src/db/units-of-work.ts';
import { utcToday } from '../../src/lib/today.ts';
import { againstScorecard, explainWarning } from '../../src/modules/predictions/backtest-words.ts';
import { gatherHistory, historyUnits } from '../../src/modules/predictions/history.ts';
import { addDays, evaluate, type Snapshot } from '../../src/modules/predictions/training.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, insertRow, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

const today = utcToday();

describe('the model against the scorecard', () => {
  /** 60 customers, one row each; every fifth churns. */
  const rows = (model: (i: number) => number, prior: (i: number) => number) =>
    Array.from(
      { length: 60 },
      (_, i) =>
        ({
          customerId: `c${i}`,
          t: today,
          outcome: i % 5 === 0 ? 1 : 0,
          churnDay: i % 5 === 0 ? today : null,
          values: [],
          noticeKnown: false,
          probability: model(i),
          priorProbability: prior(i),
        }) as Snapshot & { probability: number; priorProbability: number },
    );

  test("the report gives the scorecard's AUC on the same rows and its 95 % interval from the same resamples", () => {
    const same = evaluate(
      rows(
        (i) => ((i * 37) % 60) / 60,
        (i) => ((i * 37) % 60) / 60,
      ),
    );
    expect(same.prior_auc).toBe(same.auc);
    expect(same.prior_auc_ci95).toEqual(same.auc_ci95); // same scores, same resamples: the same interval
    const m = evaluate(
      rows(
        (i) => (i % 5 === 0 ? 0.9 : 0.1) + (i % 7) / 100,
        (i) => ((i * 37) % 60) / 60,
      ),
    );
    expect(m.auc!).toBeGreaterThan(m.prior_auc!);
    expect(m.prior_auc_ci95![0]).toBeLessThanOrEqual(m.prior_auc_ci95![1]);
  });

  test('a model that did not beat the scorecard is said so in words, with both AUCs', () => {
    expect(againstScorecard({ auc: 0.866, auc_ci95: [0.84, 0.89], prior_auc: 0.895 }, 'logistic')).toBe(
      "The trained model did not beat the scorecard on these rows (AUC 0.866 against the scorecard's 0.895): it ranks churners no better than the fixed points.",
    );
    expect(againstScorecard({ auc: 0.91, auc_ci95: [0.88, 0.94], prior_auc: 0.895 }, 'logistic')).toContain('within this test');
    expect(againstScorecard({ auc: 0.95, auc_ci95: [0.93, 0.97], prior_auc: 0.895 }, 'logistic')).toContain('beat the scorecard');
    expect(againstScorecard({ auc: 0.8, auc_ci95: [0.7, 0.9], prior_auc: 0.8 }, 'prior')).toContain('This model is the scorecard');
    expect(againstScorecard({ auc: null, prior_auc: null }, 'logistic')).toBeNull();
  });

  test('each warning is explained in one sentence', () => {
    const sentence = explainWarning('no_revision_history', { lost_history: { contracts: 40, with_lost_history: 7 } });
    expect(sentence).toStartWith('7 of 40 contracts were changed before revintel recorded them');
    expect(sentence.split('. ')).toHaveLength(1);
    expect(explainWarning('insufficient_events', {})).toContain('Fewer than 10 churn events');
  });
});

for (const backend of BACKENDS) {
  describe(`no_revision_history only on evidence of lost history (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
    });
    afterAll(() => database?.dispose());

    /** An organisation with one customer and `contracts` (API bodies), each with its invoices at
     * the amounts given, issued monthly up to last month (before the contract was recorded). */
    const organisation = async (contracts: { body: Record<string, unknown>; invoiced: number[]; patch?: Record<string, unknown> }[]) => {
      const { org, secret: key } = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      expect(
        (await call(app, 'POST', '/api/customers', { key, body: { external_id: 'c', name: 'Customer', currency: 'EUR' } })).status,
      ).toBe(201);
      for (const [n, c] of contracts.entries()) {
        const made = await call(app, 'POST', '/api/contracts', {
          key,
          body: {
            external_id: `k${n}`,
            customer_external_id: 'c',
            name: 'Plan',
            billing_interval: 'month',
            start_date: addDays(today, -400),
            ...c.body,
          },
        });
        expect(made.status).toBe(201);
        for (const [i, amount] of c.invoiced.entries()) {
          await insertRow(database.db, 'invoices', {
            id: `inv_${org.id.slice(4, 14)}_${n}_${i}`,
            org_id: org.id,
            customer_id: made.body.data.customer_id,
            contract_id: made.body.data.id,
            currency: 'EUR',
            status: 'paid',
            amount_due: amount,
            amount_paid: amount,
            issued_at: `${addDays(today, -30 * (c.invoiced.length - i))}T09:00:00Z`,
          });
        }
        if (c.patch) expect((await call(app, 'PATCH', `/api/contracts/${made.body.data.id}`, { key, body: c.patch })).status).toBe(200);
      }
      return org.id;
    };
    const history = (orgId: string) =>
      gatherHistory(localRunner(database.db, historyUnits, DEFAULT_SETTINGS), {
        orgId,
        today,
        horizonDays: 90,
        graceDays: 30,
        days: [],
        maxCustomers: 100,
      });

    test('contracts never amended, invoiced at their amounts, with their notice days: no warning', async () => {
      const orgId = await organisation([
        { body: { amount: 1_000 }, invoiced: [1_000, 1_000, 1_000] },
        {
          body: { amount: 2_000, status: 'cancelled', cancelled_at: addDays(today, -40), end_date: addDays(today, 20) },
          invoiced: [2_000, 2_000],
        },
        { body: { amount: 500 }, invoiced: [] },
      ]);
      const found = await history(orgId);
      expect(found.lostHistory).toEqual({ contracts: 3, notice_day_unknown: 0, amount_not_invoiced: 0, with_lost_history: 0 });
      expect(found.noRevisionHistory).toBe(false);
    });

    test('a cancellation recorded without its notice day, or an amount its earlier invoices never charged, is evidence: the warning is raised', async () => {
      const orgId = await organisation([
        { body: { amount: 1_000 }, invoiced: [1_000, 1_000] },
        { body: { amount: 1_200 }, invoiced: [1_000, 1_000, 1_000] }, // raised in place before it was recorded
        { body: { amount: 800, status: 'cancelled', end_date: addDays(today, 30) }, invoiced: [800] }, // notice day stamped on recording
        { body: { amount: 900 }, invoiced: [900], patch: { amount: 950 } }, // amended after it was recorded: its history is kept
      ]);
      const found = await history(orgId);
      expect(found.lostHistory).toEqual({ contracts: 4, notice_day_unknown: 1, amount_not_invoiced: 1, with_lost_history: 2 });
      expect(found.noRevisionHistory).toBe(true);
    });
  });
}

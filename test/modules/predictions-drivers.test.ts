// Drivers a person can read, on the demo organisation and both backends, under the scorecard and
// under a trained logistic model: every item of every list page (each sort, walked by cursor) and
// every single prediction, through the API and the CLI's units, satisfies
// σ(base_logit + Σ drivers[].impact) = probability; a list item carries the five strongest groups
// and `other`; a single prediction has one driver per group whose impact is the sum of its
// features'; points are the change in probability were the group the reference customer's; labels
// never call a contract with notice given "auto-renewing".
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { queryText, type Db } from '../../src/db/client.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { adminUnits } from '../../src/admin/cli-units.ts';
import { loadDemo } from '../../src/modules/demo/service.ts';
import { FEATURE_KEYS, FEATURES, PRIOR_SCORECARD } from '../../src/modules/predictions/features.ts';
import { DRIVER_GROUPS, type DriverGroup } from '../../src/modules/predictions/model.ts';
import { groupedDrivers, listDrivers } from '../../src/modules/predictions/drivers.ts';
import { topDrivers } from '../../src/modules/chat/facts.ts';
import { trainingDays } from '../../src/modules/predictions/fitting.ts';
import { gatherHistory, historyUnits } from '../../src/modules/predictions/history.ts';
import { sigmoid } from '../../src/modules/predictions/logistic.ts';
import { Prediction, PREDICTION_SORTS } from '../../src/modules/predictions/model.ts';
import { recomputePredictions } from '../../src/modules/predictions/service.ts';
import { DEFAULT_PREDICTION_SETTINGS } from '../../src/modules/predictions/settings.ts';
import { trainModel } from '../../src/modules/predictions/training.ts';
import { utcToday } from '../../src/lib/today.ts';
import { BACKENDS, buildApp, call, openTestDatabase, uniqueName, type TestDatabase } from '../helpers/harness.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';

const TODAY = utcToday();
const SETTINGS = { ...DEFAULT_PREDICTION_SETTINGS, horizonDays: 90, graceDays: 30, priorAnnualChurn: 0.12, lookbackDays: 730 };

interface Driver {
  group: string;
  label: string;
  impact: number;
  points: number;
  at_reference: boolean;
  features?: { feature: string; label: string; value: number; reference?: number; impact: number }[];
}
interface Item {
  customer_id: string;
  probability: number;
  base_logit: number;
  drivers: Driver[];
}

const logitOf = (item: Item) => item.drivers.reduce((sum, d) => sum + d.impact, item.base_logit);
/** Points to 0.01, as the prediction states them (the last digit may round either way). */
const expectPoints = (points: number, z: number, impact: number) =>
  expect(Math.abs(points - 100 * (sigmoid(z) - sigmoid(z - impact)))).toBeLessThanOrEqual(0.005 + 1e-9);

/** The identity, and what a list item's drivers are. */
function checkListItem(item: Item) {
  expect(Math.abs(sigmoid(logitOf(item)) - item.probability)).toBeLessThan(1e-9);
  expect(item.drivers.map((d) => d.group).slice(5)).toEqual(['other']);
  expect(item.drivers).toHaveLength(6);
  const shown = item.drivers.slice(0, 5);
  for (let i = 1; i < shown.length; i++) expect(Math.abs(shown[i - 1]!.impact)).toBeGreaterThanOrEqual(Math.abs(shown[i]!.impact));
  for (const d of item.drivers) {
    expect(d.features).toBeUndefined();
    expectPoints(d.points, logitOf(item), d.impact);
  }
}

/** The identity, one driver per group summing its features, points, and labels that agree with the record. */
function checkSingle(item: Item) {
  expect(Value.Check(Prediction, item)).toBe(true);
  expect(Math.abs(sigmoid(logitOf(item)) - item.probability)).toBeLessThan(1e-9);
  expect(item.drivers.map((d) => d.group).sort()).toEqual([...DRIVER_GROUPS].sort());
  expect(item.drivers.flatMap((d) => d.features!.map((f) => f.feature)).sort()).toEqual([...FEATURE_KEYS].sort());
  for (const d of item.drivers) {
    expect(Math.abs(d.impact - d.features!.reduce((sum, f) => sum + f.impact, 0))).toBeLessThan(1e-12);
    expectPoints(d.points, logitOf(item), d.impact);
    expect(d.at_reference).toBe(d.features!.every((f) => f.value === f.reference));
    if (d.at_reference) expect(d.impact).toBe(0);
    expect(d.label).not.toMatch(/raises risk|lowers risk/);
  }
  const notice = item.drivers.find((d) => d.group === 'cancellation_notice')!;
  if (notice.features![0]!.value === 1) {
    const renewal = item.drivers.find((d) => d.group === 'renewal')!;
    expect(renewal.label).not.toContain('auto');
    expect(renewal.label).toMatch(/notice given|ended/);
    for (const f of renewal.features!) expect(f.label).not.toMatch(/auto-renewing|Renews automatically/);
  }
}

describe('grouping a prediction (no database)', () => {
  // Every feature at the scorecard's neutral value but a notice and two tickets speaking of leaving.
  const values = FEATURES.map((f) =>
    f.key === 'cancellation_notice' ? 1 : f.key === 'churn_signal_tickets_90d' ? Math.log1p(2) : f.neutral,
  );
  const row = {
    values,
    labels: FEATURES.map((f) => `label of ${f.key}`),
    groupLabels: Object.fromEntries(DRIVER_GROUPS.map((g) => [g, `${g} label`])) as Record<DriverGroup, string>,
  };
  const model = { base: -2, features: PRIOR_SCORECARD.map((f) => ({ key: f.key, weight: f.weight, centre: f.neutral })) };

  test('impacts sum per group; only the groups away from the reference move it; points are σ differences, not additive', () => {
    const { probability, drivers } = groupedDrivers(model, row);
    const z = -2 + 3 + 1.2 * Math.log1p(2);
    expect(probability).toBeCloseTo(sigmoid(z), 14);
    expect(drivers.map((d) => d.group).slice(0, 2)).toEqual(['cancellation_notice', 'churn_signals']);
    expect(drivers[0]).toMatchObject({
      impact: 3,
      at_reference: false,
      label: 'cancellation_notice label',
      points: Math.round(10_000 * (sigmoid(z) - sigmoid(z - 3))) / 100,
    });
    for (const d of drivers.slice(2)) expect(d).toMatchObject({ impact: 0, points: 0, at_reference: true });
    // Both back at the reference move it by more than their two points summed: points do not add up.
    expect(100 * (sigmoid(z) - sigmoid(-2))).toBeGreaterThan(drivers[0]!.points + drivers[1]!.points);
    const listed = listDrivers(drivers, -2);
    expect(listed.map((d) => d.group)).toEqual([...drivers.slice(0, 5).map((d) => d.group), 'other']);
    expect(listed[5]).toMatchObject({ impact: 0, points: 0, at_reference: true, label: '6 more drivers' });
  });

  test('chat messages name the strongest drivers with their points, never one at the reference', () => {
    const { drivers } = groupedDrivers(model, row);
    expect(topDrivers(drivers)).toEqual([
      `↑ cancellation_notice label (+${drivers[0]!.points.toFixed(1)} pts)`,
      `↑ churn_signals label (+${drivers[1]!.points.toFixed(1)} pts)`,
    ]);
    // A prediction stored before groups: its labels, without points.
    expect(topDrivers([{ label: 'Renewal in 31 days, no auto-renew', impact: 1 }])).toEqual(['↑ Renewal in 31 days, no auto-renew']);
  });
});

for (const backend of BACKENDS) {
  describe(`drivers on the demo (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;
    let orgName: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      orgName = uniqueName('drivers');
      const demo = await database.db.transaction((tx) =>
        loadDemo(tx as unknown as Db, { orgName, customers: 300, seed: 11, today: TODAY, actor: 'test' }, DEFAULT_ACTION_SETTINGS),
      );
      key = demo.secret;
      orgId = demo.org.id;
      // Every single prediction is read, several times: more than a plan's requests per minute.
      await queryText(
        database.db,
        `update organisations set rate_limit_per_minute = 1000000, rate_limit_per_day = 100000000 where id = $1`,
        [orgId],
      );
    }, 240_000);
    afterAll(() => database?.dispose());

    /** Every item of every sort's list, walked by cursor, and every single prediction. */
    async function checkEveryRoute(): Promise<Item[]> {
      const singles: Item[] = [];
      for (const sort of PREDICTION_SORTS) {
        let cursor: string | null = null;
        let seen = 0;
        do {
          const res = await call(
            app,
            'GET',
            `/api/cfo/predictions?sort=${sort}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
            { key },
          );
          expect(res.status).toBe(200);
          for (const item of res.body.data as Item[]) {
            expect(Value.Check(Prediction, item)).toBe(true);
            checkListItem(item);
          }
          seen += res.body.data.length;
          cursor = res.body.meta.next_cursor ?? null;
        } while (cursor);
        expect(seen).toBeGreaterThan(100);
      }
      const n = (await queryText<{ n: number }>(database.db, `select count(*)::int as n from predictions where org_id = $1`, [orgId]))[0]!
        .n;
      const ids = await queryText<{ customer_id: string }>(
        database.db,
        `select customer_id from predictions where org_id = $1 order by customer_id`,
        [orgId],
      );
      expect(ids).toHaveLength(n);
      for (const { customer_id } of ids) {
        const res = await call(app, 'GET', `/api/cfo/predictions/${customer_id}`, { key });
        expect(res.status).toBe(200);
        checkSingle(res.body.data as Item);
        singles.push(res.body.data as Item);
      }
      // The CLI's list and show read through the same presenters.
      const cliList = (await adminUnits['predictions.list'](database.db, { org: orgId, limit: 1000 }, DEFAULT_SETTINGS)) as {
        items: Item[];
      };
      expect(cliList.items).toHaveLength(n);
      for (const item of cliList.items) checkListItem(item);
      checkSingle((await adminUnits['predictions.show'](database.db, { org: orgId, customer: ids[0]!.customer_id })) as unknown as Item);
      return singles;
    }

    test('under the scorecard: the identity on every item of every list and single prediction; groups at the neutral values count 0', async () => {
      await recomputePredictions(database.db, { orgId, today: TODAY });
      const singles = await checkEveryRoute();
      // The demo has customers whose notice is given: their renewal reads "Term ends in N days; notice given".
      const noticed = singles.filter((s) => s.drivers.find((d) => d.group === 'cancellation_notice')!.features![0]!.value === 1);
      expect(noticed.length).toBeGreaterThan(0);
      for (const s of noticed)
        expect(s.drivers.find((d) => d.group === 'renewal')!.label).toMatch(/^Term ends in \d+ days?; notice given$|^Contract ended/);
      // The scorecard's reference is its neutral customer: a customer without notice is at it there.
      const quiet = singles.find((s) => s.drivers.find((d) => d.group === 'cancellation_notice')!.features![0]!.value === 0)!;
      expect(quiet.drivers.find((d) => d.group === 'cancellation_notice')).toMatchObject({
        at_reference: true,
        impact: 0,
        points: 0,
        label: 'Contract running, no notice given',
      });
    }, 240_000);

    test('a prediction stored before drivers were grouped (one per feature) reads as groups, the identity kept, until its rescore', async () => {
      const [row] = await queryText<{ customer_id: string; drivers: Driver[] }>(
        database.db,
        `select customer_id, drivers from predictions where org_id = $1 order by customer_id limit 1`,
        [orgId],
      );
      const perFeature = row!.drivers.flatMap((d) =>
        d.features!.map((f) => ({ feature: f.feature, label: f.label, value: f.value, impact: f.impact })),
      );
      await queryText(database.db, `update predictions set drivers = $3::jsonb where org_id = $1 and customer_id = $2`, [
        orgId,
        row!.customer_id,
        JSON.stringify(perFeature),
      ]);
      const single = (await call(app, 'GET', `/api/cfo/predictions/${row!.customer_id}`, { key })).body.data as Item;
      expect(Value.Check(Prediction, single)).toBe(true);
      expect(Math.abs(sigmoid(logitOf(single)) - single.probability)).toBeLessThan(1e-9);
      expect(single.drivers.map((d) => d.group).sort()).toEqual([...DRIVER_GROUPS].sort());
      const listed = (await call(app, 'GET', `/api/cfo/predictions?customer_id=${row!.customer_id}`, { key })).body.data as Item[];
      expect(Value.Check(Prediction, listed[0])).toBe(true);
      checkListItem(listed[0]!);
      await recomputePredictions(database.db, { orgId, today: TODAY, customerIds: [row!.customer_id] });
      const [after] = await queryText<{ drivers: Driver[] }>(
        database.db,
        `select drivers from predictions where org_id = $1 and customer_id = $2`,
        [orgId, row!.customer_id],
      );
      expect(after!.drivers.every((d) => 'group' in d)).toBe(true);
    });

    test('under a logistic model trained on the demo: the same, and its reference is a typical customer (most groups of a quiet one at 0)', async () => {
      const history = await gatherHistory(localRunner(database.db, historyUnits, DEFAULT_SETTINGS), {
        orgId,
        today: TODAY,
        horizonDays: 90,
        graceDays: 30,
        days: trainingDays(TODAY, SETTINGS),
        maxCustomers: 25_000,
      });
      const model = trainModel('logistic', FEATURE_KEYS, PRIOR_SCORECARD, history.rows, { horizonDays: 90, priorAnnualChurn: 0.12 });
      // The median customer of the rows: a yes/no feature's reference is one of its values.
      for (const [j, key] of ['cancellation_notice', 'renewal_due_no_autorenew', 'segment_smb'].map(
        (k) => [FEATURE_KEYS.indexOf(k), k] as const,
      )) {
        expect([0, 1]).toContain(model.additive.features[j]!.centre);
        expect(model.additive.features[j]!.key).toBe(key);
      }
      await queryText(database.db, `update prediction_models set status = 'retired' where org_id = $1 and status = 'active'`, [orgId]);
      await queryText(
        database.db,
        `insert into prediction_models (id, org_id, kind, status, horizon_days, parameters, metrics) values ($1, $2, 'logistic', 'active', 90, $3::jsonb, '{}'::jsonb)`,
        [`mdl_drv${orgId.slice(4, 20)}`, orgId, JSON.stringify(model.additive)],
      );
      await recomputePredictions(database.db, { orgId, today: TODAY });
      const singles = await checkEveryRoute();
      const byModel = await queryText<{ kind: string }>(
        database.db,
        `select distinct m.kind from predictions p join prediction_models m on m.id = p.model_id where p.org_id = $1`,
        [orgId],
      );
      expect(byModel).toEqual([{ kind: 'logistic' }]);
      // Most customers gave no notice, so the reference has none: theirs is not a driver.
      const atReference = singles.filter((s) => s.drivers.find((d) => d.group === 'cancellation_notice')!.at_reference);
      expect(atReference.length).toBeGreaterThan(singles.length / 2);
    }, 240_000);
  });
}

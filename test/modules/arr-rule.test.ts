// One ARR rule for every reader: a table of contract situations (notice given, immediate
// cancellation, evergreen cancelled, ended, draft, future start, plain active), each the only
// contract of its customer, and every reader of a customer's ARR and renewal — the customer (single,
// list sorted by ARR, renewing_before), its contracts' counts_today, its prediction, the CFO
// summary and the point-in-time features of today — giving the same figures, on both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { recomputePredictions } from '../../src/modules/predictions/service.ts';
import { featuresAt } from '../../src/modules/predictions/features.ts';
import { addDays } from '../../src/modules/predictions/training.ts';
import { utcToday } from '../../src/lib/today.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

const today = utcToday();

interface Case {
  name: string;
  contract: Record<string, unknown>;
  /** What every reader must say: ARR in minor units, renewal date and whether it renews. */
  arr: number;
  renewal_date: string | null;
  renewing: boolean | null;
  /** Whether the customer has a prediction (a contract counts today, or ended within the grace period). */
  scored: boolean;
  /** The label of the prediction's renewal driver when notice was given: the service end, never a renewal. */
  renewal_label?: string;
}

const yearly = { billing_interval: 'year', amount: 60_000, start_date: addDays(today, -300) };
const CASES: Case[] = [
  {
    name: 'active',
    contract: { ...yearly, end_date: addDays(today, 200), auto_renew: true },
    arr: 60_000,
    renewal_date: addDays(today, 200),
    renewing: true,
    scored: true,
  },
  {
    name: 'notice given',
    contract: { ...yearly, status: 'cancelled', cancelled_at: addDays(today, -10), end_date: addDays(today, 45), auto_renew: true },
    arr: 60_000,
    renewal_date: addDays(today, 45),
    renewing: false,
    scored: true,
    renewal_label: 'Term ends in 45 days; notice given',
  },
  {
    name: 'immediate cancellation',
    contract: { ...yearly, status: 'cancelled', cancelled_at: addDays(today, -5), end_date: addDays(today, -5) },
    arr: 0,
    renewal_date: null,
    renewing: null,
    scored: true, // ended within the grace period: still scored, with nothing counting
  },
  {
    name: 'evergreen cancelled today',
    contract: { billing_interval: 'month', amount: 5_000, start_date: addDays(today, -400), status: 'cancelled', cancelled_at: today },
    arr: 60_000,
    renewal_date: today,
    renewing: false,
    scored: true,
    renewal_label: 'Term ends today; notice given',
  },
  {
    name: 'evergreen cancelled earlier',
    contract: {
      billing_interval: 'month',
      amount: 5_000,
      start_date: addDays(today, -400),
      status: 'cancelled',
      cancelled_at: addDays(today, -60),
    },
    arr: 0,
    renewal_date: null,
    renewing: null,
    scored: false,
  },
  {
    name: 'ended',
    contract: { ...yearly, start_date: addDays(today, -500), status: 'ended', end_date: addDays(today, -90) },
    arr: 0,
    renewal_date: null,
    renewing: null,
    scored: false,
  },
  {
    name: 'draft',
    contract: { ...yearly, status: 'draft', end_date: addDays(today, 300) },
    arr: 0,
    renewal_date: null,
    renewing: null,
    scored: false,
  },
  {
    name: 'future start',
    contract: { ...yearly, start_date: addDays(today, 10), end_date: addDays(today, 375) },
    arr: 0,
    renewal_date: null,
    renewing: null,
    scored: false,
  },
];

for (const backend of BACKENDS) {
  describe(`one ARR rule for every reader (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;
    const ids = new Map<string, string>();
    const get = async (path: string) => {
      const res = await call(app, 'GET', path, { key });
      return res;
    };

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await createOrgWithKey(database, { perMinute: 100_000, perDay: 1_000_000 });
      key = made.secret;
      orgId = made.org.id;
      for (const [i, c] of CASES.entries()) {
        const customer = await call(app, 'POST', '/api/customers', { key, body: { external_id: `c${i}`, name: c.name, currency: 'EUR' } });
        expect(customer.status).toBe(201);
        ids.set(c.name, customer.body.data.id);
        const contract = await call(app, 'POST', '/api/contracts', {
          key,
          body: { external_id: `k${i}`, customer_external_id: `c${i}`, name: 'Plan', ...c.contract },
        });
        expect(contract.status).toBe(201);
      }
      await database.db.transaction((tx) => recomputePredictions(tx as never, { orgId, today }));
    });
    afterAll(() => database?.dispose());

    for (const c of CASES) {
      test(`${c.name}: the customer, its contracts, its prediction and today's features say the same`, async () => {
        const id = ids.get(c.name)!;
        const expected = { arr: c.arr, mrr: Math.round(c.arr / 12), renewal_date: c.renewal_date, renewing: c.renewing };

        const single = (await get(`/api/customers/${id}`)).body.data;
        expect({ arr: single.arr, mrr: single.mrr, renewal_date: single.renewal_date, renewing: single.renewing }).toEqual(expected);

        const listed = ((await get('/api/customers?sort=arr&limit=200')).body.data as any[]).find((x) => x.id === id);
        expect({ arr: listed.arr, mrr: listed.mrr, renewal_date: listed.renewal_date, renewing: listed.renewing }).toEqual(expected);

        const renewingSoon = ((await get(`/api/customers?renewing_before=${addDays(today, 366)}&limit=200`)).body.data as any[]).some(
          (x) => x.id === id,
        );
        expect(renewingSoon).toBe(c.renewal_date !== null);

        const contracts = (await get(`/api/contracts?customer_id=${id}`)).body.data as any[];
        expect(contracts.filter((k) => k.counts_today).reduce((s, k) => s + k.arr, 0)).toBe(c.arr);

        const prediction = await get(`/api/cfo/predictions/${id}`);
        if (!c.scored) {
          expect(prediction.status).toBe(404);
          expect(prediction.body.code).toBe('not_scored');
        } else {
          const p = prediction.body.data;
          expect({ arr: p.arr, renewal_date: p.renewal_date, renewing: p.renewing }).toEqual({
            arr: c.arr,
            renewal_date: c.renewal_date,
            renewing: c.renewing,
          });
          expect(p.arr_at_risk).toBe(Math.round(c.arr * p.probability));
          // A contract with notice given is never described as renewing, in a driver or its features.
          if (c.renewing === false) {
            expect(p.drivers.find((d: any) => d.group === 'renewal').label).toBe(c.renewal_label);
            for (const d of p.drivers)
              for (const f of [d, ...d.features]) expect(f.label).not.toMatch(/auto-renewing|Renews automatically/);
          }
        }

        const [features] = await featuresAt(database.db, {
          orgId,
          day: today,
          horizonDays: 90,
          population: 'scored',
          graceDays: 30,
          customerIds: [id],
        });
        expect(features ? { arr: features.arr, renewal_date: features.renewalDate, renewing: features.renewing } : null).toEqual(
          c.scored ? { arr: c.arr, renewal_date: c.renewal_date, renewing: c.renewing } : null,
        );
      });
    }

    test("the CFO summary's total ARR is the sum of the scored customers' ARR", async () => {
      const summary = (await get('/api/cfo/predictions?limit=200')).body.meta.summary as any[];
      expect(summary).toHaveLength(1);
      expect(summary[0].total_arr).toBe(CASES.filter((c) => c.scored).reduce((s, c) => s + c.arr, 0));
      expect(summary[0].customers).toBe(CASES.filter((c) => c.scored).length);
    });
  });
}

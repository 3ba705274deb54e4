// The CLI's doors to the CFO's history (`revintel arr`, `revintel fx`): units of work, so that on
// the embedded database a running server runs them (src/admin/cli-units.ts registers them).
import type { Db } from '../../db/client.ts';
import { importTarget } from '../imports/service.ts';
import { cohorts } from './cohorts.ts';
import { listRates, reportingCurrencyOf, setRates, setReportingCurrency, type FxRateInput } from './fx.ts';
import { arrHistory } from './history.ts';
import { monthRange, parseMonth } from './months.ts';

interface Range {
  org?: string;
  from?: string;
  to?: string;
  today: string;
}

export const cfoAdminUnits = {
  'cfo.arr': async (db: Db, input: Range & { currency?: string }) => {
    const org = await importTarget(db, { org: input.org });
    const range = monthRange(input);
    const reportingCurrency = await reportingCurrencyOf(db, org.id);
    return arrHistory(db, { orgId: org.id, ...range, today: input.today, currency: input.currency, reportingCurrency });
  },
  'cfo.cohorts': async (db: Db, input: Range & { currency?: string }) => {
    const org = await importTarget(db, { org: input.org });
    return cohorts(db, { orgId: org.id, ...monthRange(input), today: input.today, currency: input.currency });
  },
  'fx.list': async (db: Db, input: { org?: string; from?: string; to?: string; currency?: string }) => {
    const org = await importTarget(db, { org: input.org });
    const filters = { from: parseMonth(input.from, 'from'), to: parseMonth(input.to, 'to'), currency: input.currency };
    return { reporting_currency: await reportingCurrencyOf(db, org.id), rates: await listRates(db, { orgId: org.id, ...filters }) };
  },
  'fx.set': async (db: Db, input: { org?: string; rates: FxRateInput[] }) => {
    const org = await importTarget(db, { org: input.org });
    return setRates(db, { orgId: org.id, rates: input.rates });
  },
  'fx.reporting-currency': async (db: Db, input: { org?: string; currency: string | null }) => {
    const org = await importTarget(db, { org: input.org });
    return { reporting_currency: await setReportingCurrency(db, { orgId: org.id, currency: input.currency }) };
  },
};

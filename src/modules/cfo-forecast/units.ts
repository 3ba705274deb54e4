// The CLI's doors to the forecast (`revintel forecast`, `revintel forecast backtest`): units of work,
// so that on the embedded database a running server runs them (src/admin/cli-units.ts registers them).
import type { Db } from '../../db/client.ts';
import { importTarget } from '../imports/service.ts';
import { reportingCurrencyOf } from '../cfo-history/fx.ts';
import { predictionSettings } from '../predictions/settings.ts';
import { forecastBacktest } from './backtest.ts';
import { cfoForecast } from './forecast.ts';

export const cfoForecastAdminUnits = {
  'cfo.forecast': async (db: Db, input: { org?: string; months: number; currency?: string; today: string }) => {
    const org = await importTarget(db, { org: input.org });
    const settings = predictionSettings();
    return cfoForecast(db, {
      orgId: org.id,
      today: input.today,
      months: input.months,
      currency: input.currency,
      reportingCurrency: await reportingCurrencyOf(db, org.id),
      graceDays: settings.graceDays,
      priorAnnualChurn: settings.priorAnnualChurn,
    });
  },
  'cfo.forecast-backtest': async (db: Db, input: { org?: string; origins: number; horizon: number; currency?: string; today: string }) => {
    const org = await importTarget(db, { org: input.org });
    return forecastBacktest(db, { orgId: org.id, ...input, settings: predictionSettings() });
  },
};

// The CLI's doors to the forecast (`revintel forecast`, `revintel forecast backtest`): units of work,
// so that on the embedded database a running server runs them (and its fitting thread the backtest) (src/admin/cli-units.ts registers them).
import type { Db } from '../../db/client.ts';
import { importTarget } from '../imports/service.ts';
import { reportingCurrencyOf } from '../cfo-history/fx.ts';
import type { Settings } from '../../settings.ts';
import { forecastBacktestJob } from './jobs/backtest.ts';
import { forecastBacktestUnits, getForecastBacktest, requestForecastBacktest, type BacktestQuestion } from './runs.ts';
import { cfoForecast } from './forecast.ts';

export const cfoForecastAdminUnits = {
  'cfo.forecast': async (db: Db, input: { org?: string; months: number; currency?: string; today: string }, both: Settings) => {
    const org = await importTarget(db, { org: input.org });
    const settings = both.predictions;
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
  /** Queues a forecast backtest for the running server's fitting thread (`queue`), or opens one the
   * command runs itself (the units below); the same question pending answers that run. */
  'cfo.forecast-backtest-request': async (db: Db, input: { org?: string; question: BacktestQuestion; queue: boolean }) => {
    const org = await importTarget(db, { org: input.org });
    const { run } = await requestForecastBacktest(db, input.queue ? forecastBacktestJob : null, {
      orgId: org.id,
      question: input.question,
      requestedBy: 'cli',
    });
    return { ...run, org_id: org.id };
  },
  'cfo.forecast-backtest-show': async (db: Db, input: { org?: string; id: string }) =>
    getForecastBacktest(db, (await importTarget(db, { org: input.org })).id, input.id),
  ...forecastBacktestUnits,
};

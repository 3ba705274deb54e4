// The CFO page's time series: the ARR history (movements by month as bars, the closing ARR as a
// line), the retention figures, and the forecast as a fan chart with its 80 % and 90 % bands, each
// band followed by its backtest's coverage in words.
import { useMemo } from 'preact/hooks';
import uPlot from 'uplot';
import { api, ApiError, query } from '../api.ts';
import { Chart } from '../chart.tsx';
import { Empty, Loading, money, percent, useLoad } from '../ui.tsx';
import type { ArrHistory, Forecast, ForecastBacktest, ForecastBacktestRun } from '../models.ts';
import { type CurrencyMode, MissingRates } from './cfo-currency.tsx';

const reportingParam = (mode: CurrencyMode) => (mode === 'reporting' ? 'reporting' : undefined);

type Options = Omit<uPlot.Options, 'width' | 'height'> & { height: number };
type ArrSeries = ArrHistory['series'][number];
type ForecastSeries = Forecast['series'][number];
type BacktestSeries = ForecastBacktest['series'][number];

const AXIS = '#3d4650';
const monthStart = (month: string) => Date.parse(`${month}-01T00:00:00Z`) / 1000;
const monthLabel = new Intl.DateTimeFormat(undefined, { month: 'short', year: '2-digit', timeZone: 'UTC' });
const major = (minor: number, currency: string) => money(minor, currency);
const bars = (fill: string) => ({ width: 0, fill, paths: uPlot.paths.bars!({ size: [0.6, 40] }) });
const timeAxis = { stroke: AXIS, values: (_u: uPlot, ticks: number[]) => ticks.map((t) => monthLabel.format(new Date(t * 1000))) };
const moneyAxis = (currency: string, label: string) => ({
  stroke: AXIS,
  label,
  size: 80,
  values: (_u: uPlot, ticks: number[]) => ticks.map((t) => major(Math.round(t), currency)),
});

/** Movements of each month as bars (gains above zero, losses below) and the closing ARR as a line. */
function HistoryChart({ series }: { series: ArrSeries }) {
  const data = useMemo<uPlot.AlignedData>(() => {
    const m = series.months;
    return [
      m.map((x) => monthStart(x.month)),
      m.map((x) => x.new + x.reactivation),
      m.map((x) => x.expansion),
      m.map((x) => -x.contraction),
      m.map((x) => -x.churn),
      m.map((x) => x.end_arr),
    ];
  }, [series]);
  const options = useMemo<Options>(
    () => ({
      height: 300,
      tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true }, arr: { auto: true } },
      axes: [
        timeAxis,
        moneyAxis(series.currency, 'Movements'),
        { ...moneyAxis(series.currency, 'ARR'), scale: 'arr', side: 1, grid: { show: false } },
      ],
      series: [
        {},
        { label: 'New and reactivated', stroke: '#1a7f37', ...bars('#1a7f37') },
        { label: 'Expansion', stroke: '#0550ae', ...bars('#0550ae') },
        { label: 'Contraction', stroke: '#9a6700', ...bars('#9a6700') },
        { label: 'Churn', stroke: '#b3261e', ...bars('#b3261e') },
        { label: 'ARR at the close', stroke: '#1f2328', width: 2, scale: 'arr' },
      ],
    }),
    [series],
  );
  const last = series.months.at(-1);
  return (
    <section class="panel" aria-labelledby={`history-${series.currency}`}>
      <h3 id={`history-${series.currency}`}>{series.currency}</h3>
      <Chart
        options={options}
        data={data}
        label={`ARR movements by month in ${series.currency} as bars, and the closing ARR as a line; ${last ? `${major(last.end_arr, series.currency)} at the last close` : ''}`}
      />
      {last ? (
        <dl class="facts">
          <div>
            <dt>ARR now</dt>
            <dd class="big">{major(last.end_arr, series.currency)}</dd>
          </div>
          <div>
            <dt>Gross revenue retention, 12 months</dt>
            <dd class="big">{last.grr_12m === null ? '—' : percent(last.grr_12m)}</dd>
          </div>
          <div>
            <dt>Net revenue retention, 12 months</dt>
            <dd class="big">{last.nrr_12m === null ? '—' : percent(last.nrr_12m)}</dd>
          </div>
          <div>
            <dt>Customers</dt>
            <dd>{last.customers_end}</dd>
          </div>
        </dl>
      ) : null}
    </section>
  );
}

/** "In the backtest (11 past month starts, every month since each), the 80 % band held the ARR the
 * book actually kept 58 times in 66 (87.9 %; 80 % expected), the 90 % band 64 times in 66 (…)." */
export function coverageWords(backtest: BacktestSeries | undefined): string {
  const months = backtest?.origins.flatMap((o) => o.months) ?? [];
  if (months.length === 0) return 'Not yet backtested: too little history before this month.';
  const held = (band: 80 | 90) =>
    months.filter((m) => {
      const [lo, hi] = band === 80 ? [m.p10, m.p90] : [m.p05, m.p95];
      return lo <= m.actual_arr && m.actual_arr <= hi;
    }).length;
  const [h80, h90] = [held(80), held(90)];
  return `In the backtest (${backtest!.origins.length} past month starts, every month since each), the 80 % band held the ARR the book actually kept ${h80} times in ${months.length} (${percent(h80 / months.length)}; 80 % expected), the 90 % band ${h90} times in ${months.length} (${percent(h90 / months.length)}; 90 % expected).`;
}

/** The forecast as a fan: the 90 % band, the 80 % band inside it, the median and the expected ARR. */
function FanChart({ series, coverage }: { series: ForecastSeries; coverage: string }) {
  const data = useMemo<uPlot.AlignedData>(() => {
    const m = series.months;
    const start = [monthStart(m[0]!.month) - 30 * 86_400];
    const at = (pick: (x: ForecastSeries['months'][number]) => number) => [series.book_arr, ...m.map(pick)];
    return [
      [...start, ...m.map((x) => monthStart(x.month))],
      at((x) => x.p05),
      at((x) => x.p10),
      at((x) => x.p50),
      at((x) => x.p90),
      at((x) => x.p95),
      at((x) => x.expected_arr),
    ];
  }, [series]);
  const options = useMemo<Options>(
    () => ({
      height: 300,
      tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true } },
      axes: [timeAxis, moneyAxis(series.currency, 'ARR kept')],
      // Bands fill between their edges: 5–95 lightest, 10–90 darker.
      bands: [
        { series: [5, 1], fill: 'rgba(5, 80, 174, 0.12)' },
        { series: [4, 2], fill: 'rgba(5, 80, 174, 0.22)' },
      ],
      series: [
        {},
        { label: '5th percentile', stroke: 'rgba(5, 80, 174, 0.4)', width: 1 },
        { label: '10th percentile', stroke: 'rgba(5, 80, 174, 0.6)', width: 1 },
        { label: 'Median', stroke: '#0550ae', width: 1, dash: [4, 4] },
        { label: '90th percentile', stroke: 'rgba(5, 80, 174, 0.6)', width: 1 },
        { label: '95th percentile', stroke: 'rgba(5, 80, 174, 0.4)', width: 1 },
        { label: 'Expected', stroke: '#1f2328', width: 2 },
      ],
    }),
    [series],
  );
  const last = series.months.at(-1)!;
  return (
    <section class="panel" aria-labelledby={`forecast-${series.currency}`}>
      <h3 id={`forecast-${series.currency}`}>{series.currency}</h3>
      <Chart
        options={options}
        data={data}
        label={`Forecast of today's ${series.currency} book: expected ARR with its 80 % and 90 % bands for the next ${series.months.length} months`}
      />
      <p>
        Of today's {major(series.book_arr, series.currency)}, expected in {series.months.length} months:{' '}
        <strong>{major(last.expected_arr, series.currency)}</strong> (gross retention{' '}
        {last.grr_forecast === null ? '—' : percent(last.grr_forecast)}, about {last.expected_churned_customers.toFixed(1)} customers lost);
        80 % band {major(last.p10, series.currency)}–{major(last.p90, series.currency)}, 90 % band {major(last.p05, series.currency)}–
        {major(last.p95, series.currency)}.
      </p>
      <p class="muted">{coverage}</p>
      {last.expected_arr_with_expansion !== null ? (
        <p class="muted">
          Apart, with the last twelve months' net expansion ({percent(series.net_expansion_rate_12m ?? 0)} a year) continuing:{' '}
          {major(last.expected_arr_with_expansion, series.currency)}.
        </p>
      ) : null}
    </section>
  );
}

export function ArrHistorySection({ mode }: { mode: CurrencyMode }) {
  const history = useLoad(
    () => api<ArrHistory>('GET', `/api/cfo/arr${query({ currency: reportingParam(mode) })}`).then((r) => r.data),
    [mode],
  );
  return (
    <Loading state={history}>
      {(h) =>
        h.series.length === 0 ? (
          <Empty>No ARR in the last twelve months.</Empty>
        ) : (
          <>
            <MissingRates answer={h} />
            {h.converted ? (
              <p class="muted">Converted to {h.reporting_currency}, each month at its own rate, its opening and close alike.</p>
            ) : null}
            <div class="grid">
              {h.series.map((s) => (
                <HistoryChart key={s.currency} series={s} />
              ))}
            </div>
          </>
        )
      }
    </Loading>
  );
}

export function ForecastSection({ mode }: { mode: CurrencyMode }) {
  const forecast = useLoad(
    () => api<Forecast>('GET', `/api/cfo/forecast${query({ months: 12, currency: reportingParam(mode) })}`).then((r) => r.data),
    [mode],
  );
  // The backtest is a job (it trains a model per past month): the page quotes the latest finished
  // report, and a 404 only means none has run yet.
  const backtest = useLoad(
    () =>
      api<ForecastBacktestRun>('GET', '/api/cfo/forecast-backtests/latest')
        .then((r) => r.data)
        .catch((error: unknown) => {
          if (error instanceof ApiError && error.status === 404) return null;
          throw error;
        }),
    [],
  );
  const coverage = (currency: string, converted: boolean) =>
    // The backtest runs per currency: a converted book's bands have no backtest of their own.
    converted
      ? `The forecast backtest runs in each currency: the bands of the book converted to ${currency} are not backtested (each currency's are, shown in each currency).`
      : backtest.error
        ? `The backtest could not be read: ${backtest.error}`
        : backtest.loading
          ? 'Reading the latest backtest…'
          : !backtest.data?.report
            ? 'No forecast backtest has run yet: `revintel forecast backtest` (or POST /api/cfo/forecast-backtests) runs one.'
            : `${coverageWords(backtest.data.report.series.find((b) => b.currency === currency))} (Backtest of ${backtest.data.finished_at?.slice(0, 10)}.)`;
  return (
    <Loading state={forecast}>
      {(f) =>
        f.series.length === 0 ? (
          <Empty>No customer has ARR today: nothing to forecast.</Empty>
        ) : (
          <>
            <MissingRates answer={f} />
            <p class="muted">
              Today's customers only (no new ones), each with its chance to churn within a year ({f.model.kind} model); bands are exact
              quantiles of the ARR kept.
              {f.converted ? ` Converted to ${f.reporting_currency} at this month's rates, kept for the months ahead.` : ''}
            </p>
            <div class="grid">
              {f.series.map((s) => (
                <FanChart key={s.currency} series={s} coverage={coverage(s.currency, f.converted)} />
              ))}
            </div>
          </>
        )
      }
    </Loading>
  );
}

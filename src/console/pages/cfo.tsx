// CFO: the ARR history and retention, cohorts, the forecast with its bands, ARR at risk by band and currency
// (the predictions' summary), the renewals of the next 90 days against their churn risk, and the
// latest backtest's AUC and calibration plot.
import { useMemo } from 'preact/hooks';
import uPlot from 'uplot';
import { api, ApiError } from '../api.ts';
import { Chart } from '../chart.tsx';
import { Empty, ErrorBox, Loading, money, PageTitle, percent, RiskBadge, Spinner, Time, useLoad, TableScroll } from '../ui.tsx';
import { points, Renewal, visibleDrivers } from './customers.tsx';
import { againstScorecard, explainWarning, interval } from '../../modules/predictions/backtest-words.ts';
import type { Backtest, Prediction, PredictionSummary } from '../models.ts';
import { ArrHistorySection, ForecastSection } from './cfo-forecast.tsx';
import { CohortsSection } from './cfo-cohorts.tsx';
import { CurrencySwitch, useCurrencyMode } from './cfo-currency.tsx';

const BANDS = ['low', 'medium', 'high', 'critical'] as const;

function RiskByBand({ summary }: { summary: PredictionSummary[] }) {
  if (summary.length === 0) return <Empty>No customer has a churn prediction yet.</Empty>;
  return (
    <div class="grid">
      {summary.map((row) => {
        const total = Math.max(row.total_arr, 1);
        return (
          <section class="panel" key={row.currency} aria-labelledby={`band-${row.currency}`}>
            <h3 id={`band-${row.currency}`}>{row.currency}</h3>
            <p class="big">
              {money(row.arr_at_risk, row.currency)} <span class="muted">at risk of {money(row.total_arr, row.currency)}</span>
            </p>
            <p class="muted">
              Expected gross revenue retention {percent(row.expected_grr)} · about {row.expected_churned_customers.toFixed(1)} of{' '}
              {row.customers} customers expected to churn
            </p>
            <div class="stacked" aria-hidden="true">
              {BANDS.map((band) => (
                <span
                  key={band}
                  class={`seg risk-${band}`}
                  style={{ width: `${(row.by_risk[band].arr / total) * 100}%` }}
                  title={`${band}: ${money(row.by_risk[band].arr, row.currency)}`}
                />
              ))}
            </div>
            <table>
              <caption class="sr-only">ARR by risk band in {row.currency}</caption>
              <thead>
                <tr>
                  <th scope="col">Band</th>
                  <th scope="col" class="num">
                    Customers
                  </th>
                  <th scope="col" class="num">
                    ARR
                  </th>
                </tr>
              </thead>
              <tbody>
                {BANDS.map((band) => (
                  <tr key={band}>
                    <td>
                      <RiskBadge risk={band} />
                    </td>
                    <td class="num">{row.by_risk[band].customers}</td>
                    <td class="num">{money(row.by_risk[band].arr, row.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        );
      })}
    </div>
  );
}

const DAY = 86_400_000;
const shortDate = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });

function Renewals({ predictions }: { predictions: Prediction[] }) {
  const today = Date.now();
  const upcoming = predictions
    .filter((p) => p.renewal_date && Date.parse(`${p.renewal_date}T00:00:00Z`) <= today + 90 * DAY)
    .sort((a, b) => a.renewal_date!.localeCompare(b.renewal_date!));
  const data = useMemo<uPlot.AlignedData>(
    () => [upcoming.map((p) => Date.parse(`${p.renewal_date}T00:00:00Z`) / 1000), upcoming.map((p) => p.probability * 100)],
    [predictions],
  );
  const options = useMemo(
    () =>
      ({
        height: 260,
        legend: { show: false },
        // Renewal dates are calendar days: ticks at UTC midnights, labelled as such.
        tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: {
          x: { time: true },
          y: { range: (_u: uPlot, _min: number, max: number) => [0, Math.min(100, Math.max(10, Math.ceil(max * 1.2)))] },
        },
        axes: [
          { stroke: '#3d4650', values: (_u: uPlot, ticks: number[]) => ticks.map((t) => shortDate.format(new Date(t * 1000))) },
          { stroke: '#3d4650', label: 'Churn probability (%)', values: (_u: uPlot, ticks: number[]) => ticks.map((t) => `${t} %`) },
        ],
        series: [
          {},
          { label: 'Churn probability', stroke: '#b3261e', width: 0, points: { show: true, size: 8, fill: '#b3261e' }, paths: () => null },
        ],
      }) as Omit<uPlot.Options, 'width' | 'height'> & { height: number },
    [],
  );
  if (upcoming.length === 0) return <Empty>No scored customer renews in the next 90 days.</Empty>;
  const riskiest = [...upcoming].sort((a, b) => b.arr_at_risk - a.arr_at_risk).slice(0, 10);
  return (
    <>
      <Chart options={options} data={data} label={`Renewals of the next 90 days by churn probability: ${upcoming.length} customers`} />
      <TableScroll label="Renewals table">
        <table>
          <caption>The ten renewals with the most ARR at risk (of {upcoming.length})</caption>
          <thead>
            <tr>
              <th scope="col">Renewal</th>
              <th scope="col">Customer</th>
              <th scope="col">Risk</th>
              <th scope="col" class="num">
                Probability
              </th>
              <th scope="col" class="num">
                ARR
              </th>
              <th scope="col" class="num">
                ARR at risk
              </th>
              <th scope="col">Main drivers (points)</th>
            </tr>
          </thead>
          <tbody>
            {riskiest.map((p) => (
              <tr key={p.customer_id}>
                <td>
                  <Renewal date={p.renewal_date} renewing={p.renewing} />
                </td>
                <td>
                  <a href={`/customers/${encodeURIComponent(p.customer_id)}`}>{p.customer_name}</a>
                </td>
                <td>
                  <RiskBadge risk={p.risk} />
                </td>
                <td class="num">{percent(p.probability)}</td>
                <td class="num">{money(p.arr, p.currency)}</td>
                <td class="num">{money(p.arr_at_risk, p.currency)}</td>
                <td class="drivers-cell">
                  {visibleDrivers(p.drivers)
                    .slice(0, 2)
                    .map((d) => `${d.label} (${points(d.points)})`)
                    .join('; ') || '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <p class="muted">
        Points: how many percentage points a driver adds to (or takes from) the customer's probability, against the model's reference
        customer in that respect; they do not add up.
      </p>
    </>
  );
}

function Calibration({ backtest }: { backtest: Backtest | null }) {
  const table = backtest?.metrics?.calibration_table ?? [];
  const data = useMemo<uPlot.AlignedData>(() => {
    const bins = [...table].sort((a, b) => a.mean_predicted - b.mean_predicted);
    return [bins.map((b) => b.mean_predicted * 100), bins.map((b) => b.observed_rate * 100), bins.map((b) => b.mean_predicted * 100)];
  }, [backtest]);
  // One scale for both axes, so perfect calibration is the diagonal.
  const top = useMemo(
    () => Math.min(100, Math.max(5, Math.ceil(Math.max(...(data[1] as number[]), ...(data[0] as number[])) * 1.1))),
    [data],
  );
  const options = useMemo(
    () =>
      ({
        height: 280,
        legend: { live: false },
        scales: { x: { time: false, range: [0, top] }, y: { range: [0, top] } },
        axes: [
          { stroke: '#3d4650', label: 'Predicted churn (%)' },
          { stroke: '#3d4650', label: 'Observed churn (%)' },
        ],
        series: [
          { label: 'Predicted' },
          { label: 'Observed', stroke: '#0550ae', width: 2, points: { show: true, size: 7, fill: '#0550ae' } },
          { label: 'Perfect calibration', stroke: '#6e7781', dash: [6, 4], width: 1, points: { show: false } },
        ],
      }) as Omit<uPlot.Options, 'width' | 'height'> & { height: number },
    [top],
  );
  if (!backtest) return <Empty>No backtest has finished yet. Run one with revintel backtest or POST /api/cfo/backtests.</Empty>;
  if (backtest.status !== 'succeeded')
    return (
      <p class="error">
        The latest backtest ({backtest.method}, {backtest.horizon_days} days) failed{' '}
        <Time iso={backtest.finished_at ?? backtest.created_at} />: {backtest.error ?? 'no reason was recorded'}.
      </p>
    );
  const m = backtest.metrics ?? {};
  const verdict = againstScorecard(m, backtest.model_kind);
  const warnings = backtest.warnings ?? (backtest.warning ? [backtest.warning] : []);
  return (
    <>
      <dl class="facts">
        <div>
          <dt>AUC</dt>
          <dd class="big">{m.auc === null || m.auc === undefined ? '—' : m.auc.toFixed(3)}</dd>
        </div>
        <div>
          <dt>95 % interval</dt>
          <dd>{interval(m.auc_ci95)}</dd>
        </div>
        <div>
          <dt>Scorecard AUC, same rows</dt>
          <dd>
            {m.prior_auc === null || m.prior_auc === undefined ? '—' : m.prior_auc.toFixed(3)}{' '}
            <span class="muted">(95 % {interval(m.prior_auc_ci95)})</span>
          </dd>
        </div>
        <div>
          <dt>Calibration error (ECE)</dt>
          <dd>{m.ece === null || m.ece === undefined ? '—' : percent(m.ece)}</dd>
        </div>
        <div>
          <dt>Method</dt>
          <dd>
            {backtest.method}, {backtest.horizon_days} days
          </dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>
            <Time iso={backtest.finished_at ?? backtest.created_at} />
          </dd>
        </div>
      </dl>
      {verdict ? <p>{verdict}</p> : null}
      {warnings.map((w) => (
        <p class="muted" key={w}>
          Warning: {explainWarning(w, m)}
        </p>
      ))}
      {table.length === 0 ? (
        <Empty>This backtest had too few churn events for a calibration plot.</Empty>
      ) : (
        <Chart options={options} data={data} label="Calibration: observed churn rate against the predicted probability, per bin" />
      )}
    </>
  );
}

export function CfoPage() {
  const currency = useCurrencyMode();
  const summary = useLoad(
    () =>
      api<Prediction[]>('GET', '/api/cfo/predictions?limit=1').then((r) => ({
        summary: (r.meta?.summary as PredictionSummary[] | undefined) ?? [],
        model: r.meta?.model as { kind: string; trained_at: string; backtest_auc: number | null } | null,
      })),
    [],
  );
  const renewals = useLoad(() => api<Prediction[]>('GET', '/api/cfo/predictions?sort=renewal_date&limit=200').then((r) => r.data), []);
  const backtest = useLoad(
    () =>
      api<Backtest>('GET', '/api/cfo/backtests/latest').then(
        (r): Backtest | null => r.data,
        (error) => {
          if (error instanceof ApiError && error.status === 404) return null;
          throw error;
        },
      ),
    [],
  );
  return (
    <section>
      <PageTitle>CFO</PageTitle>
      <CurrencySwitch fx={currency.fx} mode={currency.mode} onChoose={currency.choose} />
      <h2>ARR history and retention</h2>
      {currency.mode === null ? <Spinner /> : <ArrHistorySection mode={currency.mode} />}
      <h2>Cohorts</h2>
      <CohortsSection />
      <h2>Forecast of today's book</h2>
      {currency.mode === null ? <Spinner /> : <ForecastSection mode={currency.mode} />}
      <h2>ARR at risk by band and currency</h2>
      <Loading state={summary}>
        {({ summary: rows, model }) => (
          <>
            {model ? (
              <p class="muted">
                Model {model.kind}, trained <Time iso={model.trained_at} />.
              </p>
            ) : null}
            <RiskByBand summary={rows} />
          </>
        )}
      </Loading>
      <h2>Renewals in the next 90 days</h2>
      <Loading state={renewals}>{(list) => <Renewals predictions={list} />}</Loading>
      <h2>Latest backtest</h2>
      {backtest.error ? <ErrorBox message={backtest.error} /> : backtest.loading ? <Spinner /> : <Calibration backtest={backtest.data} />}
    </section>
  );
}

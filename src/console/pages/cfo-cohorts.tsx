// The CFO page's cohorts: one heat-map table per currency, a row per month's new customers and a
// column per month since, each cell the share of the cohort's first-month ARR (or of its customers)
// still there at that close. The number is in every cell; the shade only repeats it.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Cohorts } from '../models.ts';
import { Empty, Loading, money, TableScroll, useLoad } from '../ui.tsx';

type Cohort = Cohorts['cohorts'][number];
type Metric = 'net_arr_retention' | 'logo_retention';

const METRICS: Record<Metric, { label: string; caption: string }> = {
  net_arr_retention: {
    label: 'Net ARR retention',
    caption: "the cohort's ARR at each close against its first month's (expansion and reactivation included)",
  },
  logo_retention: { label: 'Customers kept', caption: "the cohort's customers with ARR at each close against its size" },
};

/** Shades from pale (little kept) to the darkest at 105 % and over; every shade keeps the text at
 * WCAG AA contrast (styles.css `.heat-*`). */
const SHADES = [
  { below: 0.5, label: 'under 50 %' },
  { below: 0.7, label: '50–70 %' },
  { below: 0.85, label: '70–85 %' },
  { below: 0.95, label: '85–95 %' },
  { below: 1.05, label: '95–105 %' },
  { below: Number.POSITIVE_INFINITY, label: '105 % and over' },
] as const;

export const heatShade = (ratio: number): number => SHADES.findIndex((s) => ratio < s.below);

const monthName = new Intl.DateTimeFormat(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });
const monthOf = (month: string) => monthName.format(new Date(`${month}-01T00:00:00Z`));
const whole = (ratio: number) => `${Math.round(ratio * 100)} %`;

function CohortTable({ currency, cohorts, metric }: { currency: string; cohorts: Cohort[]; metric: Metric }) {
  const width = Math.max(...cohorts.map((c) => c.ages.length));
  const ages = Array.from({ length: width }, (_, k) => k);
  return (
    <section class="panel" aria-labelledby={`cohorts-${currency}`}>
      <h3 id={`cohorts-${currency}`}>{currency}</h3>
      <TableScroll label={`Cohorts in ${currency}`}>
        <table class="cohorts" data-testid={`cohorts-${currency}`}>
          <caption>
            {METRICS[metric].label} by cohort, {currency}: {METRICS[metric].caption}
          </caption>
          <thead>
            <tr>
              <th scope="col">Cohort</th>
              <th scope="col" class="num">
                Customers
              </th>
              <th scope="col" class="num">
                ARR at start
              </th>
              {ages.map((k) => (
                <th scope="col" class="num" key={k}>
                  <span aria-hidden="true">M{k}</span>
                  <span class="sr-only">{k === 0 ? 'First month' : `${k} month${k === 1 ? '' : 's'} after`}</span>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {cohorts.map((cohort) => (
              <tr key={cohort.month} data-month={cohort.month}>
                <th scope="row">{monthOf(cohort.month)}</th>
                <td class="num">{cohort.customers}</td>
                <td class="num">{money(cohort.start_arr, currency)}</td>
                {ages.map((k) => {
                  const age = cohort.ages[k];
                  if (!age) return <td key={k} class="heat-none" />;
                  const ratio = age[metric];
                  return (
                    <td
                      key={k}
                      class={`num heat-${heatShade(ratio)}`}
                      title={`${monthOf(age.month)}: ${money(age.arr, currency)}, ${age.customers} of ${cohort.customers} customers`}
                    >
                      {whole(ratio)}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}

export function CohortsSection() {
  const answer = useLoad(() => api<Cohorts>('GET', '/api/cfo/cohorts').then((r) => r.data), []);
  const [metric, setMetric] = useState<Metric>('net_arr_retention');
  return (
    <Loading state={answer}>
      {(a) => {
        if (a.cohorts.length === 0) return <Empty>No customer had ARR for the first time in the last twelve months.</Empty>;
        const byCurrency = new Map<string, Cohort[]>();
        for (const cohort of a.cohorts) byCurrency.set(cohort.currency, [...(byCurrency.get(cohort.currency) ?? []), cohort]);
        return (
          <>
            <p class="muted">
              Customers grouped by their first month with ARR ({monthOf(a.from)} to {monthOf(a.to)}), each followed to this month. Per
              currency: a retention ratio is the same in any currency.
            </p>
            <div class="inline-form">
              <div>
                <label for="cohort-metric">Show</label>
                <select id="cohort-metric" value={metric} onChange={(e) => setMetric(e.currentTarget.value as Metric)}>
                  {(Object.keys(METRICS) as Metric[]).map((m) => (
                    <option key={m} value={m}>
                      {METRICS[m].label}
                    </option>
                  ))}
                </select>
              </div>
            </div>
            <ul class="heat-legend" aria-label="Shades">
              {SHADES.map((shade, i) => (
                <li key={shade.label}>
                  <span class={`swatch heat-${i}`} aria-hidden="true" />
                  {shade.label}
                </li>
              ))}
            </ul>
            {[...byCurrency].map(([currency, list]) => (
              <CohortTable key={currency} currency={currency} cohorts={list} metric={metric} />
            ))}
          </>
        );
      }}
    </Loading>
  );
}

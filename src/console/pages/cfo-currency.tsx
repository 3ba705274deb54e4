// The CFO page's reporting-currency switch: shown once the organisation has a reporting currency
// and rates for the months on the page; the choice stays in the address (`?currency=reporting`) so
// a reload or a shared link shows the same figures. An answer that could not be converted names
// the rates it lacked, per currency, as runs of months.
import { useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import type { ArrHistory, FxRates } from '../models.ts';
import { useLoad } from '../ui.tsx';

export type CurrencyMode = 'all' | 'reporting';
type MissingRate = ArrHistory['missing_rates'][number];

const monthName = new Intl.DateTimeFormat(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });
const monthLabel = (month: string) => monthName.format(new Date(`${month}-01T00:00:00Z`));
const monthIndex = (month: string) => Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1;

/** The first month the page shows (the ARR history's default: eleven months before this one). */
function firstMonthShown(): string {
  const now = new Date();
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11, 1));
  return first.toISOString().slice(0, 7);
}

/** `GBP: Mar 2026; USD: Jan 2026 to Nov 2026`: each currency's missing months, consecutive ones as a run. */
export function missingRatesWords(missing: MissingRate[]): string {
  const byCurrency = new Map<string, string[]>();
  for (const m of missing) byCurrency.set(m.currency, [...(byCurrency.get(m.currency) ?? []), m.month]);
  return [...byCurrency]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, months]) => {
      const runs: [string, string][] = [];
      for (const month of [...new Set(months)].sort()) {
        const last = runs.at(-1);
        if (last && monthIndex(month) === monthIndex(last[1]) + 1) last[1] = month;
        else runs.push([month, month]);
      }
      const words = runs.map(([from, to]) => (from === to ? monthLabel(from) : `${monthLabel(from)} to ${monthLabel(to)}`));
      return `${currency}: ${words.join(', ')}`;
    })
    .join('; ');
}

/** Under a section asked in the reporting currency whose answer stayed per currency. */
export function MissingRates({ answer }: { answer: Pick<ArrHistory, 'currency' | 'converted' | 'reporting_currency' | 'missing_rates'> }) {
  if (answer.currency !== 'reporting' || answer.converted) return null;
  const first = answer.missing_rates[0];
  return (
    <p class="notice" data-testid="missing-rates">
      Not converted to {answer.reporting_currency}: rates are missing for {missingRatesWords(answer.missing_rates)}. The figures stay in
      each currency until an admin sets them
      {first ? (
        <>
          {' '}
          (
          <code>
            revintel fx set {first.currency} {first.month} RATE
          </code>
          , or <code>PUT /api/cfo/fx-rates</code>)
        </>
      ) : null}
      .
    </p>
  );
}

/** The mode the page's sections load in; null while the rates are read to know whether the
 * address's `?currency=reporting` can be honoured. */
export function useCurrencyMode(): {
  mode: CurrencyMode | null;
  fx: FxRates | null;
  choose: (mode: CurrencyMode) => void;
} {
  const [wanted, setWanted] = useState<CurrencyMode>(() =>
    new URLSearchParams(location.search).get('currency') === 'reporting' ? 'reporting' : 'all',
  );
  const fx = useLoad(() => api<FxRates>('GET', `/api/cfo/fx-rates${query({ from: firstMonthShown() })}`).then((r) => r.data), []);
  const convertible = !!fx.data?.reporting_currency && fx.data.rates.length > 0;
  const mode = wanted === 'all' ? 'all' : fx.loading ? null : convertible ? 'reporting' : 'all';
  const choose = (next: CurrencyMode) => {
    const search = new URLSearchParams(location.search);
    if (next === 'reporting') search.set('currency', 'reporting');
    else search.delete('currency');
    const text = search.toString();
    history.replaceState(null, '', `${location.pathname}${text ? `?${text}` : ''}${location.hash}`);
    setWanted(next);
  };
  return { mode, fx: fx.data, choose };
}

/** The switch itself: nothing without a reporting currency; a word when it has no rates yet. */
export function CurrencySwitch({
  fx,
  mode,
  onChoose,
}: {
  fx: FxRates | null;
  mode: CurrencyMode | null;
  onChoose: (mode: CurrencyMode) => void;
}) {
  const reporting = fx?.reporting_currency;
  if (!fx || !reporting) return null;
  if (fx.rates.length === 0)
    return (
      <p class="muted" data-testid="no-rates">
        The reporting currency is {reporting}, but no exchange rates are set for these months: the figures stay in each currency. An admin
        sets them with <code>revintel fx set</code> or <code>PUT /api/cfo/fx-rates</code>.
      </p>
    );
  return (
    <fieldset class="switch">
      <legend>Show the figures</legend>
      <label>
        <input type="radio" name="cfo-currency" checked={mode !== 'reporting'} onChange={() => onChoose('all')} /> In each currency
      </label>
      <label>
        <input type="radio" name="cfo-currency" checked={mode === 'reporting'} onChange={() => onChoose('reporting')} /> In {reporting}, the
        reporting currency
      </label>
    </fieldset>
  );
}

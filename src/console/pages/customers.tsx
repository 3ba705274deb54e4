// Customers: search, sorted by ARR (GET /api/customers?sort=arr) or by risk (the churn
// predictions, riskiest ARR first); and a customer's page with its contracts, invoices, tickets,
// notes and its churn prediction with the drivers behind it.
import { useState } from 'preact/hooks';
import { api, ApiError, query } from '../api.ts';
import type { Customer, Driver, Prediction } from '../models.ts';
import { navigate, useLocation } from '../router.ts';
import { ProposeAction } from './propose.tsx';
import { Empty, ErrorBox, Loading, money, PageTitle, percent, RiskBadge, Spinner, Time, day, useLoad, TableScroll } from '../ui.tsx';

/** "+4.2 pts", "−0.8 pts": a change in probability, in percentage points. */
export const points = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)} pts`;

/** The drivers a person reads: groups away from the reference customer that move the probability
 * by a visible amount (0.05 points or more), never the `other` sum of a list item; largest points
 * first (the API orders by logit impact, which σ bends). */
export const visibleDrivers = (drivers: Driver[]) =>
  drivers
    .filter((d) => d.group !== 'other' && !d.at_reference && Math.abs(d.points) >= 0.05)
    .sort((a, b) => Math.abs(b.points) - Math.abs(a.points));

type Row = {
  id: string;
  name: string;
  currency: string;
  arr: number;
  renewal_date: string | null;
  renewing: boolean | null;
  risk: string | null;
  probability: number | null;
  arr_at_risk: number | null;
};

const SORTS = { arr: 'ARR, largest first', risk: 'ARR at risk, largest first', name: 'Name' } as const;
type Sort = keyof typeof SORTS;

async function loadRows(q: string, sort: Sort, cursor: string | null): Promise<{ rows: Row[]; next: string | null }> {
  if (sort === 'risk') {
    // The predictions list ranks by ARR at risk and searches like the customers list.
    const { data, meta } = await api<Prediction[]>(
      'GET',
      `/api/cfo/predictions${query({ q: q.trim() || undefined, sort: '-arr_at_risk', limit: 50, cursor })}`,
    );
    return {
      rows: data.map((p) => ({
        id: p.customer_id,
        name: p.customer_name,
        currency: p.currency,
        arr: p.arr,
        renewal_date: p.renewal_date,
        renewing: p.renewing,
        risk: p.risk,
        probability: p.probability,
        arr_at_risk: p.arr_at_risk,
      })),
      next: meta?.next_cursor ?? null,
    };
  }
  const { data, meta } = await api<Customer[]>('GET', `/api/customers${query({ q: q.trim() || undefined, sort, limit: 50, cursor })}`);
  return {
    rows: data.map((c) => ({
      id: c.id,
      name: c.name,
      currency: c.currency,
      arr: c.arr,
      renewal_date: c.renewal_date,
      renewing: c.renewing,
      risk: c.churn_risk,
      probability: null,
      arr_at_risk: null,
    })),
    next: meta?.next_cursor ?? null,
  };
}

export function CustomersPage() {
  const { search } = useLocation();
  const q = search.get('q') ?? '';
  const sort = (search.get('sort') as Sort | null) ?? 'arr';
  const cursor = search.get('cursor');
  const [draft, setDraft] = useState(q);
  const page = useLoad(() => loadRows(q, sort in SORTS ? sort : 'arr', cursor), [q, sort, cursor]);
  const go = (next: { q?: string; sort?: string; cursor?: string | null }) =>
    navigate(`/customers${query({ q: next.q ?? q, sort: next.sort ?? sort, cursor: next.cursor ?? undefined })}`);
  return (
    <section>
      <PageTitle>Customers</PageTitle>
      {/* biome-ignore lint/a11y/useSemanticElements: role=search on the form itself, as on the inbox's filters */}
      <form
        class="inline-form"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          go({ q: draft, cursor: null });
        }}
      >
        <div>
          <label for="customer-search">Search name, domain or e-mail</label>
          <input id="customer-search" type="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </div>
        <div>
          <label for="customer-sort">Sort by</label>
          <select id="customer-sort" value={sort} onChange={(e) => go({ sort: e.currentTarget.value, cursor: null })}>
            {Object.entries(SORTS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Search</button>
      </form>
      <Loading state={page}>
        {({ rows, next }) =>
          rows.length === 0 ? (
            <Empty>
              {q
                ? `No customer matches “${q}”.`
                : sort === 'risk'
                  ? 'No customer has a churn prediction yet.'
                  : 'No customers yet. Import them or run revintel demo.'}
            </Empty>
          ) : (
            <>
              <TableScroll label="Customers table">
                <table>
                  <caption class="sr-only">Customers</caption>
                  <thead>
                    <tr>
                      <th scope="col">Customer</th>
                      <th scope="col" class="num">
                        ARR
                      </th>
                      <th scope="col">Risk</th>
                      {sort === 'risk' ? (
                        <>
                          <th scope="col" class="num">
                            Probability
                          </th>
                          <th scope="col" class="num">
                            ARR at risk
                          </th>
                        </>
                      ) : null}
                      <th scope="col">Renewal</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((row) => (
                      <tr key={row.id}>
                        <td>
                          <a href={`/customers/${encodeURIComponent(row.id)}`}>{row.name}</a>
                        </td>
                        <td class="num">{money(row.arr, row.currency)}</td>
                        <td>
                          <RiskBadge risk={row.risk} />
                        </td>
                        {sort === 'risk' ? (
                          <>
                            <td class="num">{percent(row.probability)}</td>
                            <td class="num">{money(row.arr_at_risk, row.currency)}</td>
                          </>
                        ) : null}
                        <td>
                          <Renewal date={row.renewal_date} renewing={row.renewing} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
              <nav class="pager" aria-label="Pages">
                {cursor ? (
                  <button type="button" class="secondary" onClick={() => history.back()}>
                    Previous page
                  </button>
                ) : null}
                {next ? (
                  <button type="button" class="secondary" onClick={() => go({ cursor: next })}>
                    Next page
                  </button>
                ) : null}
              </nav>
            </>
          )
        }
      </Loading>
    </section>
  );
}

function List<T>({
  title,
  path,
  empty,
  render,
}: {
  title: string;
  path: string;
  empty: string;
  render: (items: T[]) => preact.ComponentChildren;
}) {
  const state = useLoad(() => api<T[]>('GET', path).then((r) => r.data), [path]);
  return (
    <section class="panel">
      <h2>{title}</h2>
      <Loading state={state}>{(items) => (items.length === 0 ? <Empty>{empty}</Empty> : render(items))}</Loading>
    </section>
  );
}

function PredictionPanel({ id }: { id: string }) {
  const state = useLoad(
    () =>
      api<Prediction>('GET', `/api/cfo/predictions/${encodeURIComponent(id)}`).then(
        (r): Prediction | null => r.data,
        (error) => {
          if (error instanceof ApiError && error.code === 'not_scored') return null;
          throw error;
        },
      ),
    [id],
  );
  if (state.error) return <ErrorBox message={state.error} />;
  if (state.loading) return <Spinner />;
  const p = state.data;
  if (!p) return <Empty>No churn prediction yet: this customer has not been scored.</Empty>;
  // Points, not logits: what a CS lead can weigh. The strongest sets the bars' scale.
  const drivers = visibleDrivers(p.drivers);
  const strongest = Math.max(...drivers.map((d) => Math.abs(d.points)), 0.01);
  return (
    <section class="panel">
      <h2>Churn prediction</h2>
      <dl class="facts">
        <div>
          <dt>Risk</dt>
          <dd>
            <RiskBadge risk={p.risk} />
            {p.previous_risk ? <span class="muted"> (was {p.previous_risk})</span> : null}
          </dd>
        </div>
        <div>
          <dt>Probability of churning within {p.horizon_days} days</dt>
          <dd>{percent(p.probability)}</dd>
        </div>
        <div>
          <dt>ARR at risk</dt>
          <dd>{money(p.arr_at_risk, p.currency)}</dd>
        </div>
        <div>
          <dt>Data completeness</dt>
          <dd>{percent(p.data_completeness, 0)}</dd>
        </div>
        <div>
          <dt>Predicted</dt>
          <dd>
            <Time iso={p.predicted_at} />
            {p.stale ? ' (a recompute is coming)' : ''}
          </dd>
        </div>
      </dl>
      <h3>Drivers</h3>
      <ul class="drivers" aria-label="Drivers of the churn probability">
        {drivers.map((d) => (
          <li key={d.group} data-group={d.group}>
            <span>
              {d.label}
              {d.features && d.features.filter((f) => f.impact !== 0).length > 1 ? (
                <details>
                  <summary class="muted">detail</summary>
                  <ul>
                    {d.features
                      .filter((f) => f.impact !== 0)
                      .map((f) => (
                        <li key={f.feature}>{f.label}</li>
                      ))}
                  </ul>
                </details>
              ) : null}
            </span>
            <span class="bar-track" aria-hidden="true">
              <span class={`bar ${d.points >= 0 ? 'up' : 'down'}`} style={{ width: `${(Math.abs(d.points) / strongest) * 100}%` }} />
            </span>
            <span class="num">{points(d.points)}</span>
          </li>
        ))}
      </ul>
      <p class="muted">
        Points: how many percentage points each driver adds to (or takes from) the probability, against the model's reference customer in
        that respect, everything else kept. They do not add up to the probability.
        {drivers.length < p.drivers.length
          ? ` ${p.drivers.length - drivers.length} more ${p.drivers.length - drivers.length === 1 ? 'area is' : 'areas are'} like the reference customer's or move it by less than 0.05 points.`
          : ''}
      </p>
    </section>
  );
}

/** A renewal date, said as the end of service when notice was given (the ARR still counts until then). */
export function Renewal({ date, renewing }: { date: string | null; renewing: boolean | null }) {
  if (!date) return <>{day(date)}</>;
  return renewing === false ? (
    <>
      {day(date)} <span class="muted">(notice given: ends, not renewing)</span>
    </>
  ) : (
    day(date)
  );
}

export function CustomerPage({ id }: { id: string }) {
  const customer = useLoad(() => api<Customer>('GET', `/api/customers/${encodeURIComponent(id)}`).then((r) => r.data), [id]);
  const q = encodeURIComponent(id);
  return (
    <section>
      <p>
        <a href="/customers">← Customers</a>
      </p>
      <Loading state={customer}>
        {(c) => (
          <>
            <PageTitle>{c.name}</PageTitle>
            <dl class="facts">
              <div>
                <dt>ARR</dt>
                <dd>{money(c.arr, c.currency)}</dd>
              </div>
              <div>
                <dt>Status</dt>
                <dd>{c.status}</dd>
              </div>
              <div>
                <dt>{c.renewing === false ? 'Service ends' : 'Renewal'}</dt>
                <dd>
                  <Renewal date={c.renewal_date} renewing={c.renewing} />
                </dd>
              </div>
              <div>
                <dt>Segment</dt>
                <dd>{c.segment ?? '—'}</dd>
              </div>
              <div>
                <dt>CSM</dt>
                <dd>{c.csm?.name ?? c.csm?.email ?? '—'}</dd>
              </div>
            </dl>
            <p>
              <a href={`/agent-actions${query({ customer_id: c.id, status: 'any' })}`}>Actions proposed for {c.name}</a>
            </p>
            <PredictionPanel id={c.id} />
            <List<{
              id: string;
              name: string;
              status: string;
              amount: number;
              currency: string;
              billing_interval: string;
              start_date: string;
              end_date: string | null;
              arr: number;
              counts_today: boolean;
            }>
              title="Contracts"
              path={`/api/contracts?customer_id=${q}&limit=50`}
              empty="No contracts."
              render={(items) => (
                <TableScroll label="Contracts table">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Name</th>
                        <th scope="col">Status</th>
                        <th scope="col" class="num">
                          ARR
                        </th>
                        <th scope="col">In ARR today</th>
                        <th scope="col">Start</th>
                        <th scope="col">End</th>
                      </tr>
                    </thead>
                    <tbody>
                      {items.map((k) => (
                        <tr key={k.id}>
                          <td>{k.name}</td>
                          <td>{k.status}</td>
                          <td class="num">{money(k.arr, k.currency)}</td>
                          <td>{k.counts_today ? 'yes' : 'no'}</td>
                          <td>{day(k.start_date)}</td>
                          <td>{k.end_date ? day(k.end_date) : 'evergreen'}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableScroll>
              )}
            />
            <List<{
              id: string;
              number: string | null;
              status: string;
              amount_due: number;
              amount_paid: number;
              currency: string;
              issued_at: string;
              due_date: string | null;
              days_past_due: number;
            }>
              title="Invoices"
              path={`/api/invoices?customer_id=${q}&limit=50`}
              empty="No invoices."
              render={(items) => (
                <TableScroll label="Invoices table">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Number</th>
                        <th scope="col">Status</th>
                        <th scope="col" class="num">
                          Due
                        </th>
                        <th scope="col" class="num">
                          Paid
                        </th>
                        <th scope="col">Issued</th>
                        <th scope="col">Days past due</th>
                      </tr>
                    </thead>
                    <tbody>
                      {items.map((i) => (
                        <tr key={i.id}>
                          <td>{i.number ?? i.id}</td>
                          <td>{i.status}</td>
                          <td class="num">{money(i.amount_due, i.currency)}</td>
                          <td class="num">{money(i.amount_paid, i.currency)}</td>
                          <td>{day(i.issued_at.slice(0, 10))}</td>
                          <td>{i.days_past_due}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableScroll>
              )}
            />
            <List<{
              id: string;
              subject: string | null;
              status: string | null;
              source_created_at: string | null;
              intelligence: { sentiment: number | null; urgency: string | null; churn_signals: string[] };
            }>
              title="Tickets"
              path={`/api/tickets?customer_id=${q}&limit=50`}
              empty="No tickets."
              render={(items) => (
                <TableScroll label="Tickets table">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Subject</th>
                        <th scope="col">Status</th>
                        <th scope="col">Urgency</th>
                        <th scope="col">Churn signals</th>
                        <th scope="col">Opened</th>
                      </tr>
                    </thead>
                    <tbody>
                      {items.map((t) => (
                        <tr key={t.id}>
                          <td>{t.subject ?? '(no subject)'}</td>
                          <td>{t.status ?? '—'}</td>
                          <td>{t.intelligence.urgency ?? '—'}</td>
                          <td>{t.intelligence.churn_signals.join(', ') || '—'}</td>
                          <td>
                            <Time iso={t.source_created_at} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableScroll>
              )}
            />
            <List<{ id: string; body?: string; text?: string; created_at: string }>
              title="Notes"
              path={`/api/customers/${q}/notes?limit=50`}
              empty="No notes."
              render={(items) => (
                <ul class="notes">
                  {items.map((n) => (
                    <li key={n.id}>
                      <Time iso={n.created_at} /> — {n.body ?? n.text ?? ''}
                    </li>
                  ))}
                </ul>
              )}
            />
            <ProposeAction customer={c} />
          </>
        )}
      </Loading>
    </section>
  );
}

// Agent actions: the inbox by status, CSM and customer, each with approve / reject / snooze (and an
// optional comment). Every decision is confirmed above the list, with what can still be done about
// it under the API's rules; decided actions say who decided, when, and with what comment.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorMessage, query } from '../api.ts';
import type { Action, Csm } from '../models.ts';
import { navigate, useLocation } from '../router.ts';
import { Empty, ErrorBox, Loading, PageTitle, Time, useLoad, useSubmit } from '../ui.tsx';

const STATUSES = ['pending_approval', 'proposed', 'approved', 'snoozed', 'executed', 'rejected', 'expired', 'cancelled', 'failed'] as const;
type Status = (typeof STATUSES)[number];
/** The status filter's value for every status (the API's list without `status`). */
const ANY_STATUS = 'any';
type Verb = 'approve' | 'reject' | 'snooze' | 'cancel';
/** What each decision may start from (the API answers 409 otherwise): a snoozed action can be
 * approved or rejected, not snoozed again; an approved one can be cancelled until it is executed. */
const DECIDABLE: Record<Verb, readonly Status[]> = {
  approve: ['proposed', 'pending_approval', 'snoozed'],
  reject: ['proposed', 'pending_approval', 'snoozed'],
  snooze: ['proposed', 'pending_approval'],
  cancel: ['proposed', 'pending_approval', 'snoozed', 'approved'],
};
/** Statuses waiting for a decision: only they can expire. */
const AWAITING: readonly Status[] = ['proposed', 'pending_approval'];

export const label = (text: string) => text.replace(/_/g, ' ');

/** "Approved by Ana Lima": the verb of the decision that left the action in its status. */
const DECIDED_AS: Partial<Record<Status, string>> = {
  approved: 'Approved',
  executed: 'Approved',
  failed: 'Approved',
  rejected: 'Rejected',
  snoozed: 'Snoozed',
  cancelled: 'Cancelled',
};

function Decision({ action }: { action: Action }) {
  const verb = DECIDED_AS[action.status];
  if (!verb || !action.decided_by) return null;
  const who = action.decided_by.name ?? label(action.decided_by.kind);
  return (
    <div class="decision" data-testid="decision">
      <p>
        {verb} by <strong>{who}</strong>, <Time iso={action.decided_by.at} />
        {action.executed_at ? (
          <>
            ; executed <Time iso={action.executed_at} />
          </>
        ) : null}
        .
      </p>
      {action.decision_comment ? <p>“{action.decision_comment}”</p> : null}
    </div>
  );
}

function ActionCard({ action, onDecided }: { action: Action; onDecided: (verb: Verb, action: Action) => void }) {
  const [comment, setComment] = useState('');
  const [days, setDays] = useState('3');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const decide = async (verb: Verb) => {
    setBusy(true);
    setError(null);
    try {
      const body: { comment?: string; days?: number } = {};
      if (comment.trim()) body.comment = comment.trim();
      if (verb === 'snooze') body.days = Number(days);
      const { data } = await api<Action>('POST', `/api/agent-actions/${encodeURIComponent(action.id)}/${verb}`, body);
      onDecided(verb, data);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const open = DECIDABLE.approve.includes(action.status);
  const snoozable = DECIDABLE.snooze.includes(action.status);
  return (
    <li class="card">
      <h3>
        {label(action.type)} <span class={`badge priority-${action.priority}`}>{action.priority}</span>{' '}
        <span class="badge">{label(action.status)}</span>
      </h3>
      <p>
        For <a href={`/customers/${encodeURIComponent(action.customer_id)}`}>{action.customer_name}</a> — {label(action.reason)}. Proposed{' '}
        <Time iso={action.created_at} />
        {action.expires_at && AWAITING.includes(action.status) ? (
          <>
            , expires <Time iso={action.expires_at} />
          </>
        ) : null}
        {action.snoozed_until ? (
          <>
            , snoozed until <Time iso={action.snoozed_until} />
          </>
        ) : null}
        .
      </p>
      {Object.keys(action.params).length ? (
        <p class="muted">
          {Object.entries(action.params)
            .map(([name, value]) => `${label(name)}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
            .join(' · ')}
        </p>
      ) : null}
      {action.rationale ? <p>{action.rationale}</p> : null}
      <Decision action={action} />
      {action.last_error ? <p class="error">{action.last_error}</p> : null}
      {open ? (
        <div class="stack">
          <label for={`comment-${action.id}`}>Comment (optional)</label>
          <input id={`comment-${action.id}`} value={comment} maxLength={2000} onInput={(e) => setComment(e.currentTarget.value)} />
          <div class="inline-form">
            <button type="button" disabled={busy} onClick={() => decide('approve')}>
              Approve
            </button>
            <button type="button" class="danger" disabled={busy} onClick={() => decide('reject')}>
              Reject
            </button>
            {snoozable ? (
              <>
                <div>
                  <label for={`days-${action.id}`}>Snooze for (days)</label>
                  <input
                    id={`days-${action.id}`}
                    type="number"
                    min={1}
                    max={30}
                    value={days}
                    onInput={(e) => setDays(e.currentTarget.value)}
                  />
                </div>
                <button type="button" class="secondary" disabled={busy} onClick={() => decide('snooze')}>
                  Snooze
                </button>
              </>
            ) : null}
          </div>
          <ErrorBox message={error} />
        </div>
      ) : null}
    </li>
  );
}

/** The last decision taken on this page: what it did, and what can still be done about it (an
 * approval can be cancelled until the action is executed; a snoozed action can still be approved
 * or rejected; a rejection is final). */
function DecisionNotice({ verb, action, onChanged }: { verb: Verb; action: Action; onChanged: (verb: Verb, action: Action) => void }) {
  const ref = useRef<HTMLDivElement>(null);
  const [current, setCurrent] = useState(action);
  const undo = useSubmit();
  // The confirmation takes the focus the vanished card had.
  useEffect(() => {
    setCurrent(action);
    ref.current?.focus();
  }, [action]);
  // An approval is re-read each second while it waits for its execution (which follows at once and
  // ends the chance to cancel), so the confirmation says when it is done.
  useEffect(() => {
    if (current.status !== 'approved') return;
    let live = true;
    const timer = setTimeout(() => {
      api<Action>('GET', `/api/agent-actions/${encodeURIComponent(current.id)}`).then(
        ({ data }) => live && setCurrent(data),
        () => {},
      );
    }, 1000);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [current]);
  const what = (
    <>
      {label(current.type)} for <a href={`/customers/${encodeURIComponent(current.customer_id)}`}>{current.customer_name}</a>
    </>
  );
  let text;
  if (verb === 'approve' && current.status === 'approved')
    text = (
      <>Approved: {what}. It is carried out in a moment (a task for the CSM and a note on the customer); until then it can be cancelled.</>
    );
  else if (verb === 'approve' && current.status === 'executed')
    text = <>Approved and done: {what}. The CSM has a task and the customer a note; an executed action cannot be undone.</>;
  else if (verb === 'approve')
    text = (
      <>
        Approved: {what}. It is now {label(current.status)}.
      </>
    );
  else if (verb === 'reject')
    text = <>Rejected: {what}. A rejection is final; proposing the same action for this customer again is refused for a cool-down.</>;
  else if (verb === 'snooze')
    text = (
      <>
        Snoozed: {what}, until <Time iso={current.snoozed_until} />. It comes back to the inbox then; meanwhile it is listed under{' '}
        <a href="/agent-actions?status=snoozed">snoozed</a>, where it can still be approved or rejected.
      </>
    );
  else text = <>Cancelled: {what}. It will not be carried out.</>;
  return (
    <div class="notice done" role="status" tabIndex={-1} ref={ref} data-testid="decision-notice">
      <span>{text}</span>
      {verb === 'approve' && DECIDABLE.cancel.includes(current.status) ? (
        <button
          type="button"
          class="secondary"
          disabled={undo.busy}
          onClick={() =>
            void undo.run(async () => {
              const { data } = await api<Action>('POST', `/api/agent-actions/${encodeURIComponent(current.id)}/cancel`, {});
              onChanged('cancel', data);
            })
          }
        >
          Cancel this action
        </button>
      ) : null}
      <ErrorBox message={undo.error} />
    </div>
  );
}

/** Filters by customer: the customer chosen (by id in the address), or a search that offers the
 * matching customers to choose from. */
function CustomerFilter({ customerId, choose }: { customerId: string | null; choose: (id: string | null) => void }) {
  const [draft, setDraft] = useState('');
  const [matches, setMatches] = useState<{ id: string; name: string }[] | null>(null);
  const search = useSubmit();
  const chosen = useLoad(
    () =>
      customerId
        ? api<{ id: string; name: string }>('GET', `/api/customers/${encodeURIComponent(customerId)}`).then((r) => r.data)
        : Promise.resolve(null),
    [customerId],
  );
  if (customerId)
    return (
      <div>
        <p class="filter-chosen">
          Customer: <strong>{chosen.data?.name ?? customerId}</strong>{' '}
          <button type="button" class="secondary" onClick={() => choose(null)}>
            Any customer
          </button>
        </p>
      </div>
    );
  return (
    // biome-ignore lint/a11y/useSemanticElements: role=search on the form itself is what the ARIA practices show; a <search> wrapper is not announced by every screen reader yet
    <form
      role="search"
      aria-label="Filter by customer"
      onSubmit={(event) => {
        event.preventDefault();
        void search.run(async () => {
          const { data } = await api<{ id: string; name: string }[]>(
            'GET',
            `/api/customers${query({ q: draft.trim(), sort: 'name', limit: 10 })}`,
          );
          setMatches(data);
        });
      }}
    >
      <label for="action-customer">Customer</label>
      <div class="secret">
        <input
          id="action-customer"
          type="search"
          value={draft}
          onInput={(e) => setDraft(e.currentTarget.value)}
          placeholder="Name, domain or e-mail"
        />
        <button type="submit" class="secondary" disabled={search.busy}>
          Find
        </button>
      </div>
      <ErrorBox message={search.error} />
      {matches !== null ? (
        matches.length === 0 ? (
          <p class="muted">No customer matches “{draft}”.</p>
        ) : (
          <ul class="matches" aria-label="Matching customers">
            {matches.map((match) => (
              <li key={match.id}>
                <button type="button" class="secondary" onClick={() => choose(match.id)}>
                  {match.name}
                </button>
              </li>
            ))}
          </ul>
        )
      ) : null}
    </form>
  );
}

export function ActionsPage() {
  const { search } = useLocation();
  const status = search.get('status') ?? 'pending_approval';
  const csmId = search.get('csm_id');
  const customerId = search.get('customer_id');
  const [last, setLast] = useState<{ verb: Verb; action: Action } | null>(null);
  const filters = { status, csm_id: csmId, customer_id: customerId };
  const go = (next: Partial<typeof filters>) => navigate(`/agent-actions${query({ ...filters, ...next })}`);
  const actions = useLoad(
    () =>
      api<Action[]>(
        'GET',
        `/api/agent-actions${query({ status: status === ANY_STATUS ? undefined : status, csm_id: csmId, customer_id: customerId, limit: 50 })}`,
      ).then((r) => r.data),
    [status, csmId, customerId],
  );
  const csms = useLoad(() => api<Csm[]>('GET', '/api/csms?limit=100').then((r) => r.data), []);
  const decided = (verb: Verb, action: Action) => {
    setLast({ verb, action });
    actions.reload();
  };
  return (
    <section>
      <PageTitle>Agent actions</PageTitle>
      <div class="inline-form">
        <div>
          <label for="action-status">Status</label>
          <select id="action-status" value={status} onChange={(e) => go({ status: e.currentTarget.value })}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {label(s)}
              </option>
            ))}
            <option value={ANY_STATUS}>any status</option>
          </select>
        </div>
        <div>
          <label for="action-csm">CSM</label>
          <select id="action-csm" value={csmId ?? ''} onChange={(e) => go({ csm_id: e.currentTarget.value || null })}>
            <option value="">Any CSM</option>
            {(csms.data ?? []).map((csm) => (
              <option key={csm.id} value={csm.id}>
                {csm.name ? `${csm.name} (${csm.email})` : csm.email}
                {csm.active ? '' : ' — inactive'}
              </option>
            ))}
          </select>
        </div>
        <CustomerFilter customerId={customerId} choose={(id) => go({ customer_id: id })} />
      </div>
      {last ? <DecisionNotice verb={last.verb} action={last.action} onChanged={decided} /> : null}
      <Loading state={actions}>
        {(list) =>
          list.length === 0 ? (
            <Empty>
              Nothing here: no {status === ANY_STATUS ? '' : `${label(status)} `}actions{csmId || customerId ? ' for this filter' : ''}.
            </Empty>
          ) : (
            <ul class="cards">
              {list.map((action) => (
                <ActionCard key={action.id} action={action} onDecided={decided} />
              ))}
            </ul>
          )
        }
      </Loading>
    </section>
  );
}

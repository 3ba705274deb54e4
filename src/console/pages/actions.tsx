// Agent actions: the inbox by status, each with approve / reject / snooze (and an optional comment).
import { useState } from 'preact/hooks';
import { api, errorMessage, query } from '../api.ts';
import { navigate, useLocation } from '../router.ts';
import { Empty, ErrorBox, Loading, PageTitle, Time, useLoad } from '../ui.tsx';

const STATUSES = ['pending_approval', 'proposed', 'approved', 'snoozed', 'executed', 'rejected', 'expired', 'cancelled', 'failed'] as const;
type Status = (typeof STATUSES)[number];
/** What each decision may start from (the API answers 409 otherwise): a snoozed action can be
 * approved or rejected, not snoozed again. */
const DECIDABLE: Record<'approve' | 'reject' | 'snooze', readonly Status[]> = {
  approve: ['proposed', 'pending_approval', 'snoozed'],
  reject: ['proposed', 'pending_approval', 'snoozed'],
  snooze: ['proposed', 'pending_approval'],
};

interface Action {
  id: string;
  customer_id: string;
  customer_name: string;
  type: string;
  params: Record<string, unknown>;
  reason: string;
  rationale: string | null;
  priority: string;
  status: Status;
  requires_approval: boolean;
  snoozed_until: string | null;
  expires_at: string | null;
  created_at: string;
  last_error: string | null;
}

const label = (text: string) => text.replace(/_/g, ' ');

function ActionCard({ action, onDone }: { action: Action; onDone: () => void }) {
  const [comment, setComment] = useState('');
  const [days, setDays] = useState('3');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const decide = async (verb: 'approve' | 'reject' | 'snooze') => {
    setBusy(true);
    setError(null);
    try {
      const body: { comment?: string; days?: number } = {};
      if (comment.trim()) body.comment = comment.trim();
      if (verb === 'snooze') body.days = Number(days);
      await api('POST', `/api/agent-actions/${encodeURIComponent(action.id)}/${verb}`, body);
      onDone();
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
        {label(action.type)} <span class={`badge priority-${action.priority}`}>{action.priority}</span> <span class="badge">{label(action.status)}</span>
      </h3>
      <p>
        For <a href={`/customers/${encodeURIComponent(action.customer_id)}`}>{action.customer_name}</a> — {label(action.reason)}. Proposed <Time iso={action.created_at} />
        {action.expires_at ? (
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
                  <input id={`days-${action.id}`} type="number" min={1} max={30} value={days} onInput={(e) => setDays(e.currentTarget.value)} />
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

export function ActionsPage() {
  const { search } = useLocation();
  const status = search.get('status') ?? 'pending_approval';
  const actions = useLoad(() => api<Action[]>('GET', `/api/agent-actions${query({ status, limit: 50 })}`).then((r) => r.data), [status]);
  return (
    <section>
      <PageTitle>Agent actions</PageTitle>
      <div class="inline-form">
        <div>
          <label for="action-status">Status</label>
          <select id="action-status" value={status} onChange={(e) => navigate(`/agent-actions${query({ status: e.currentTarget.value })}`)}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {label(s)}
              </option>
            ))}
          </select>
        </div>
      </div>
      <Loading state={actions}>
        {(list) =>
          list.length === 0 ? (
            <Empty>Nothing here: no {label(status)} actions.</Empty>
          ) : (
            <ul class="cards">
              {list.map((action) => (
                <ActionCard key={action.id} action={action} onDone={actions.reload} />
              ))}
            </ul>
          )
        }
      </Loading>
    </section>
  );
}

// "Propose an action" on a customer's page: POST /api/agent-actions with the type's params. A
// proposal from the console always waits for a decision (requires_approval): who may approve it is
// the customer's CSM or a manager, the same rule as everywhere, so proposing is never a way around
// it. An open action of the same type is answered instead of a new one; during a rejection's
// cool-down the API refuses, and the form offers to propose anyway (force).
import { useState } from 'preact/hooks';
import { api, ApiError, query } from '../api.ts';
import { ErrorBox, useSubmit } from '../ui.tsx';
import { label } from './actions.tsx';
import type { Action } from '../models.ts';

const TYPES = ['check_in', 'escalation', 'discount_offer', 'renewal_call', 'success_plan'] as const;
type ActionType = (typeof TYPES)[number];
const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;

/** The form's fields, as typed (numbers are checked by the API, which names the field). */
interface Draft {
  channel: string;
  dueInDays: string;
  to: string;
  note: string;
  percent: string;
  months: string;
  goals: string;
}

/** The params the API takes for `type` (model.ts's PARAMS), from the fields of the form. */
function paramsOf(type: ActionType, draft: Draft): Record<string, unknown> {
  const note = draft.note.trim() ? { note: draft.note.trim() } : {};
  switch (type) {
    case 'check_in':
      return { channel: draft.channel, due_in_days: Number(draft.dueInDays), ...note };
    case 'escalation':
      return { to: draft.to, note: draft.note.trim() };
    case 'discount_offer':
      return { percent: Number(draft.percent), months: Number(draft.months), ...note };
    case 'renewal_call':
      return { due_in_days: Number(draft.dueInDays) };
    case 'success_plan':
      return {
        goals: draft.goals
          .split('\n')
          .map((goal) => goal.trim())
          .filter(Boolean),
      };
  }
}

function Field({ id, text, children }: { id: string; text: string; children: preact.ComponentChildren }) {
  return (
    <div>
      <label for={id}>{text}</label>
      {children}
    </div>
  );
}

export function ProposeAction({ customer }: { customer: { id: string; name: string } }) {
  const [type, setType] = useState<ActionType>('check_in');
  const [priority, setPriority] = useState('normal');
  const [rationale, setRationale] = useState('');
  const [draft, setDraft] = useState<Draft>({
    channel: 'call',
    dueInDays: '7',
    to: 'manager',
    note: '',
    percent: '10',
    months: '3',
    goals: '',
  });
  const [outcome, setOutcome] = useState<{ action: Action; deduplicated: boolean } | null>(null);
  const [coolingDown, setCoolingDown] = useState(false);
  const submit = useSubmit();
  const field = (name: keyof Draft) => ({
    value: draft[name],
    onInput: (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [name]: e.currentTarget.value }),
  });
  const propose = (force: boolean) =>
    submit.run(async () => {
      setOutcome(null);
      setCoolingDown(false);
      try {
        const body = {
          customer_id: customer.id,
          type,
          params: paramsOf(type, draft),
          priority,
          requires_approval: true,
          ...(rationale.trim() ? { rationale: rationale.trim() } : {}),
          ...(force ? { force } : {}),
        };
        const { data } = await api<Action & { deduplicated: boolean }>('POST', '/api/agent-actions', body);
        setOutcome({ action: data, deduplicated: data.deduplicated });
        if (!data.deduplicated) setRationale('');
      } catch (error) {
        if (error instanceof ApiError && error.code === 'conflict' && error.message.includes('cool-down')) setCoolingDown(true);
        throw error;
      }
    });
  const id = (name: string) => `propose-${name}`;
  return (
    <section class="panel" aria-labelledby="propose-title">
      <h2 id="propose-title">Propose an action</h2>
      <p class="muted">
        It waits for a decision by {customer.name}'s CSM or a manager, in the{' '}
        <a href={`/agent-actions${query({ customer_id: customer.id, status: 'any' })}`}>inbox</a> and on their chat channels.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void propose(false);
        }}
      >
        <div class="inline-form">
          <Field id={id('type')} text="Action">
            <select id={id('type')} value={type} onChange={(e) => setType(e.currentTarget.value as ActionType)}>
              {TYPES.map((t) => (
                <option key={t} value={t}>
                  {label(t)}
                </option>
              ))}
            </select>
          </Field>
          <Field id={id('priority')} text="Priority">
            <select id={id('priority')} value={priority} onChange={(e) => setPriority(e.currentTarget.value)}>
              {PRIORITIES.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </Field>
          {type === 'check_in' ? (
            <Field id={id('channel')} text="Channel">
              <select id={id('channel')} value={draft.channel} onChange={(e) => setDraft({ ...draft, channel: e.currentTarget.value })}>
                <option value="call">call</option>
                <option value="email">email</option>
                <option value="meeting">meeting</option>
              </select>
            </Field>
          ) : null}
          {type === 'check_in' || type === 'renewal_call' ? (
            <Field id={id('due')} text="Due in (days)">
              <input id={id('due')} type="number" min={1} max={type === 'check_in' ? 30 : 90} required {...field('dueInDays')} />
            </Field>
          ) : null}
          {type === 'escalation' ? (
            <Field id={id('to')} text="Escalate to">
              <select id={id('to')} value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.currentTarget.value })}>
                <option value="manager">manager</option>
                <option value="executive">executive</option>
              </select>
            </Field>
          ) : null}
          {type === 'discount_offer' ? (
            <>
              <Field id={id('percent')} text="Discount (%)">
                <input id={id('percent')} type="number" min={1} max={50} required {...field('percent')} />
              </Field>
              <Field id={id('months')} text="For (months)">
                <input id={id('months')} type="number" min={1} max={24} required {...field('months')} />
              </Field>
            </>
          ) : null}
        </div>
        {type === 'check_in' || type === 'escalation' || type === 'discount_offer' ? (
          <>
            <label for={id('note')}>{type === 'escalation' ? 'Note' : 'Note (optional)'}</label>
            <input id={id('note')} maxLength={2000} required={type === 'escalation'} {...field('note')} />
          </>
        ) : null}
        {type === 'success_plan' ? (
          <>
            <label for={id('goals')}>Goals (one a line)</label>
            <textarea id={id('goals')} class="example" rows={3} required {...field('goals')} />
          </>
        ) : null}
        <label for={id('rationale')}>Why (optional)</label>
        <input id={id('rationale')} maxLength={4000} value={rationale} onInput={(e) => setRationale(e.currentTarget.value)} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Proposing…' : 'Propose'}
        </button>
      </form>
      <ErrorBox message={submit.error} />
      {coolingDown ? (
        <button type="button" class="secondary" disabled={submit.busy} onClick={() => void propose(true)}>
          Propose anyway
        </button>
      ) : null}
      {outcome ? (
        <p class="notice" role="status" data-testid="proposed">
          {outcome.deduplicated
            ? `An open ${label(outcome.action.type)} for ${customer.name} already exists (${label(outcome.action.status)}): nothing new was proposed. `
            : `Proposed: ${label(outcome.action.type)} for ${customer.name}, ${label(outcome.action.status)}. `}
          <a href={`/agent-actions${query({ customer_id: customer.id, status: outcome.action.status })}`}>See it in the inbox</a>
        </p>
      ) : null}
    </section>
  );
}

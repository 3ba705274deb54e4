// Small pieces every page uses: loading and error states, a confirm dialog, a copy button, a
// labelled field, a value to copy, a table of webhook events with replay, and formatters that show
// money in its currency and times in the viewer's time zone.
import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, errorMessage } from './api.ts';

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and whenever `deps` change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => current && setState({ data, error: null, loading: false }),
      (error) => current && setState({ data: null, error: errorMessage(error), loading: false }),
    );
    return () => {
      current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="progress" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

export function ErrorBox({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** A page's data: the spinner, the API's error, or the content. */
export function Loading<T>({ state, children }: { state: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (state.error) return <ErrorBox message={state.error} />;
  if (state.data === null) return <Spinner />;
  return <>{children(state.data)}</>;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setCopied(true);
          setTimeout(() => setCopied(false), 2000);
        } catch {
          setCopied(false);
        }
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A modal confirmation (the native <dialog>: focus moves into it, Escape cancels). */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  danger?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onCancel={(event) => (event.preventDefault(), props.onCancel())}>
      <h2 id="dialog-title">{props.title}</h2>
      <div>{props.children}</div>
      <div class="actions">
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class={props.danger ? 'danger' : ''} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** A form's submit state: busy while the call runs, the API's message when it fails. */
export function useSubmit(): {
  busy: boolean;
  error: string | null;
  run: (work: () => Promise<void>) => Promise<void>;
  setError: (message: string | null) => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

/** An instant in the viewer's time zone; `—` for none. */
export function when(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

/** A calendar day (`YYYY-MM-DD`): the same day everywhere. */
export function day(value: string | null | undefined): string {
  return value ? dateOnly.format(new Date(`${value}T00:00:00Z`)) : '—';
}

export function Time({ iso }: { iso: string | null | undefined }) {
  return iso ? <time dateTime={iso}>{when(iso)}</time> : <>—</>;
}

/** Minor units in their currency: 1234500 EUR -> €12,345.00. */
export function money(minor: number | null | undefined, currency: string): string {
  if (minor === null || minor === undefined) return '—';
  try {
    const digits = new Intl.NumberFormat(undefined, { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    return new Intl.NumberFormat(undefined, { style: 'currency', currency, maximumFractionDigits: 0 }).format(minor / 10 ** digits);
  } catch {
    return `${(minor / 100).toFixed(0)} ${currency}`;
  }
}

export const percent = (value: number | null | undefined, digits = 1): string =>
  value === null || value === undefined ? '—' : `${(value * 100).toFixed(digits)} %`;

export function RiskBadge({ risk }: { risk: string | null | undefined }) {
  return risk ? <span class={`badge risk-${risk}`}>{risk}</span> : <span class="muted">not scored</span>;
}

export function PageTitle({ children }: { children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${typeof children === 'string' ? children : 'Console'} · revintel`;
  }, [children]);
  return <h1 tabIndex={-1}>{children}</h1>;
}

let scrollIds = 0;

/** A table's scroll area. When the screen is narrower than the table, it says how many columns are
 * out of sight (and a shadow marks the edge with more), so no column is hidden without a sign. */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  const ref = useRef<HTMLDivElement>(null);
  const [hintId] = useState(() => `scroll-hint-${++scrollIds}`);
  /** Columns whose right edge is past the visible part (null: the table fits). */
  const [outOfSight, setOutOfSight] = useState<number | null>(null);
  useEffect(() => {
    const area = ref.current;
    if (!area) return;
    const measure = () => {
      if (area.scrollWidth <= area.clientWidth + 1) return setOutOfSight(null);
      const visibleRight = area.scrollLeft + area.clientWidth + 1;
      const headers = [...area.querySelectorAll<HTMLElement>('thead tr:first-child > *')];
      setOutOfSight(headers.filter((cell) => cell.offsetLeft + cell.offsetWidth > visibleRight).length);
    };
    const observer = new ResizeObserver(measure);
    observer.observe(area);
    if (area.firstElementChild) observer.observe(area.firstElementChild);
    area.addEventListener('scroll', measure, { passive: true });
    measure();
    return () => {
      observer.disconnect();
      area.removeEventListener('scroll', measure);
    };
  }, []);
  return (
    <>
      {outOfSight !== null ? (
        <p class="scroll-hint" id={hintId}>
          {outOfSight > 0
            ? `${outOfSight} more column${outOfSight === 1 ? '' : 's'}: scroll the table sideways →`
            : '← Scroll back for the first columns'}
        </p>
      ) : null}
      {/* biome-ignore lint/a11y/useSemanticElements: a scrolling table must take keyboard focus to scroll (axe's scrollable-region-focusable), and a labelled region says what it holds */}
      <div
        ref={ref}
        class={outOfSight !== null ? 'table-wrap scrolls' : 'table-wrap'}
        tabIndex={0}
        role="region"
        aria-label={label}
        aria-describedby={outOfSight !== null ? hintId : undefined}
      >
        {children}
      </div>
    </>
  );
}

/** A label and its input (and a help line the input is described by), as siblings: the caller
 * wraps them in a `<div>` where its form lays fields out side by side. */
export function Field({
  id,
  label,
  value,
  onValue,
  help,
  ...input
}: Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onInput' | 'label'> & {
  id: string;
  label: ComponentChildren;
  value: string;
  onValue: (value: string) => void;
  help?: ComponentChildren;
}) {
  const helpId = help ? `${id}-help` : undefined;
  return (
    <>
      <label for={id}>{label}</label>
      <input {...input} id={id} value={value} aria-describedby={helpId} onInput={(e) => onValue(e.currentTarget.value)} />
      {help ? (
        <p class="muted" id={helpId}>
          {help}
        </p>
      ) : null}
    </>
  );
}

/** A read-only value to copy, such as a webhook URL to paste into a platform. */
export function CopyField({
  id,
  label,
  value,
  testId,
  copyLabel,
}: {
  id: string;
  label: string;
  value: string;
  testId: string;
  copyLabel: string;
}) {
  return (
    <>
      <label for={id}>{label}</label>
      <div class="secret">
        <input id={id} readOnly value={value} data-testid={testId} />
        <CopyButton text={value} label={copyLabel} />
      </div>
    </>
  );
}

/** A secret the server shows this once, with its copy button (and whatever else goes beside it). */
export function ShownOnce({
  value,
  testId,
  id,
  copyLabel,
  children,
}: {
  value: string;
  testId: string;
  id?: string;
  copyLabel: string;
  children?: ComponentChildren;
}) {
  return (
    <div class="secret">
      <code id={id} data-testid={testId}>
        {value}
      </code>
      <CopyButton text={value} label={copyLabel} />
      {children}
    </div>
  );
}

export interface EventColumn<E> {
  header: string;
  cell: (event: E) => ComponentChildren;
}

/** Webhook events (ticket deliveries, billing events): when each was received, the page's own
 * columns, its last error, and Replay where `replay.when` allows; a failed replay shows the API's
 * message above the table, and the list is reloaded either way. */
export function EventsTable<E extends { id: string; received_at: string }>({
  label,
  caption,
  testId,
  events,
  columns,
  lastError,
  replay,
}: {
  label: string;
  caption: ComponentChildren;
  testId: string;
  events: E[];
  /** The columns between "Received" and "Last error". */
  columns: EventColumn<E>[];
  lastError: (event: E) => string | null | undefined;
  replay: { label: (event: E) => string; path: (event: E) => string; when?: (event: E) => boolean; done: () => void };
}) {
  const [replayError, setReplayError] = useState<string | null>(null);
  return (
    <>
      <ErrorBox message={replayError} />
      <TableScroll label={label}>
        <table data-testid={testId}>
          <caption class="sr-only">{caption}</caption>
          <thead>
            <tr>
              <th scope="col">Received</th>
              {columns.map((column) => (
                <th scope="col" key={column.header}>
                  {column.header}
                </th>
              ))}
              <th scope="col">Last error</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {events.map((event) => (
              <tr key={event.id}>
                <td>
                  <Time iso={event.received_at} />
                </td>
                {columns.map((column) => (
                  <td key={column.header}>{column.cell(event)}</td>
                ))}
                <td>{lastError(event) ?? '—'}</td>
                <td>
                  {replay.when && !replay.when(event) ? null : (
                    <button
                      type="button"
                      class="secondary"
                      aria-label={replay.label(event)}
                      onClick={async () => {
                        setReplayError(null);
                        try {
                          await api('POST', replay.path(event));
                        } catch (e) {
                          setReplayError(errorMessage(e));
                        }
                        replay.done();
                      }}
                    >
                      Replay
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </>
  );
}

// Settings → Billing (admins): the billing connectors an organisation's ARR data comes from. Add a
// Stripe account or a Chargebee site (secrets typed here are sealed on the server and never shown
// back), the webhook URL to paste into the platform and how the platform proves a delivery, then
// each connector's status: events by state, the lag, the last backfill's outcome, a sync started
// from here, and dead events replayed.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { BillingConnector, BillingStatus } from '../models.ts';
import { isAdmin, useSession } from '../session.ts';
import {
  CopyField,
  Empty,
  ErrorBox,
  type EventColumn,
  EventsTable,
  Field,
  Loading,
  PageTitle,
  TableScroll,
  Time,
  useLoad,
  useSubmit,
} from '../ui.tsx';

/** The URL to paste into the platform: the server's own when it has no PUBLIC_URL. */
const absolute = (url: string) => new URL(url, location.origin).href;

function AddForm({ onAdded }: { onAdded: () => void }) {
  const [platform, setPlatform] = useState<'stripe' | 'chargebee'>('stripe');
  const [name, setName] = useState('');
  const [testMode, setTestMode] = useState(false);
  const [site, setSite] = useState('');
  const [webhookSecret, setWebhookSecret] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const submit = useSubmit();
  const stripe = platform === 'stripe';
  return (
    <form
      class="stack"
      aria-label="Add a billing connector"
      onSubmit={(event) => {
        event.preventDefault();
        void submit.run(async () => {
          await api('POST', '/api/billing/connectors', {
            name,
            platform,
            mode: testMode ? 'test' : 'live',
            ...(stripe ? {} : { site, basic_auth: `${user}:${password}` }),
            ...(stripe && webhookSecret ? { webhook_secret: webhookSecret } : {}),
            ...(apiKey ? { api_key: apiKey } : {}),
          });
          // Secrets leave the page once sent: the server keeps them sealed.
          for (const clear of [setName, setSite, setWebhookSecret, setApiKey, setUser, setPassword]) clear('');
          onAdded();
        });
      }}
    >
      <div class="inline-form">
        <div>
          <label for="billing-platform">Billing system</label>
          <select id="billing-platform" value={platform} onChange={(e) => setPlatform(e.currentTarget.value as 'stripe' | 'chargebee')}>
            <option value="stripe">Stripe</option>
            <option value="chargebee">Chargebee</option>
          </select>
        </div>
        <div>
          <Field
            id="billing-name"
            label="Connector name"
            required
            maxLength={200}
            value={name}
            onValue={setName}
            placeholder={stripe ? 'e.g. Stripe' : 'e.g. Chargebee acme'}
          />
        </div>
        {stripe ? null : (
          <div>
            <Field
              id="billing-site"
              label="Chargebee site"
              required
              pattern="[a-z0-9][a-z0-9\-]{0,62}"
              value={site}
              onValue={setSite}
              help="acme of acme.chargebee.com"
            />
          </div>
        )}
      </div>
      <label>
        <input type="checkbox" checked={testMode} onChange={(e) => setTestMode(e.currentTarget.checked)} />{' '}
        {stripe ? 'Test mode: take test-mode events and ignore live ones' : 'A test site'}
      </label>
      {stripe ? (
        <Field
          id="billing-webhook-secret"
          label="Webhook signing secret (whsec_…, from the endpoint in Stripe)"
          type="password"
          autocomplete="off"
          minLength={8}
          value={webhookSecret}
          onValue={setWebhookSecret}
        />
      ) : (
        <div class="inline-form">
          <div>
            <Field id="billing-basic-user" label="Webhook user" required autocomplete="off" value={user} onValue={setUser} />
          </div>
          <div>
            <Field
              id="billing-basic-password"
              label="Webhook password"
              type="password"
              required
              minLength={8}
              autocomplete="new-password"
              value={password}
              onValue={setPassword}
            />
          </div>
        </div>
      )}
      <Field
        id="billing-api-key"
        label={stripe ? 'API key (a restricted rk_… key with read access will do)' : 'API key (read-only)'}
        type="password"
        autocomplete="off"
        minLength={8}
        value={apiKey}
        onValue={setApiKey}
        help="The backfill reads what the account already holds with it. Secrets are sealed on the server and never shown again."
      />
      <div>
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Adding…' : 'Add connector'}
        </button>
      </div>
      <ErrorBox message={submit.error} />
    </form>
  );
}

/** How the platform proves a delivery, and where to paste the URL. */
function SigningHelp({ connector }: { connector: BillingConnector }) {
  if (connector.platform === 'stripe')
    return (
      <div class="stack" data-testid="billing-signing">
        <p>
          In Stripe's Dashboard, Developers → Webhooks → Add endpoint, paste the URL and choose the customer, subscription and invoice
          events. Stripe signs each delivery in <code>Stripe-Signature: t=…,v1=…</code>: an HMAC-SHA256 of <code>{'{t}.{body}'}</code> with
          the endpoint's signing secret (<code>whsec_…</code>), which must be set here.
        </p>
        <p class="muted">
          A delivery whose timestamp is more than 5 minutes off is refused. While a secret is rolled, Stripe signs with both and either is
          accepted. Events of the other mode ({connector.mode === 'live' ? 'test' : 'live'}) are acknowledged and ignored.
        </p>
      </div>
    );
  return (
    <div class="stack" data-testid="billing-signing">
      <p>
        In Chargebee, Settings → Configure Chargebee → Webhooks → Add webhook, paste the URL, turn on “Protect webhook URL with basic
        authentication” and give the same user and password as here. Chargebee does not sign deliveries: those credentials are what is
        checked.
      </p>
      <p class="muted">Chargebee only calls ports 80, 443, 8080 and 8443.</p>
    </div>
  );
}

const OBJECT_LABELS = { customer: 'Customers', subscription: 'Subscriptions', invoice: 'Invoices' } as const;

function lag(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

const DEAD_COLUMNS: EventColumn<BillingStatus['dead'][number]>[] = [
  { header: 'Event', cell: (event) => event.type },
  { header: 'Object', cell: (event) => event.object_id ?? '—' },
  { header: 'Attempts', cell: (event) => event.attempts },
];

function Status({ connector }: { connector: BillingConnector }) {
  const id = connector.id;
  const status = useLoad(
    () => api<BillingStatus>('GET', `/api/billing/connectors/${encodeURIComponent(id)}/status`).then((r) => r.data),
    [id],
  );
  const sync = useSubmit();
  const [note, setNote] = useState<string | null>(null);
  return (
    <div class="stack" data-testid={`billing-status-${id}`}>
      <div class="inline-form">
        <button
          type="button"
          disabled={sync.busy || !connector.api_key}
          onClick={() =>
            void sync.run(async () => {
              await api('POST', `/api/billing/connectors/${encodeURIComponent(id)}/sync`);
              setNote('Sync started: it runs on the server; refresh to follow it.');
              status.reload();
            })
          }
        >
          {sync.busy ? 'Starting…' : 'Start sync'}
        </button>
        <button type="button" class="secondary" onClick={status.reload}>
          Refresh
        </button>
      </div>
      {connector.api_key ? null : <p class="muted">A sync reads with the API key: add one to start it.</p>}
      <ErrorBox message={sync.error} />
      {note ? (
        <p class="notice" role="status">
          {note}
        </p>
      ) : null}
      <Loading state={status}>
        {(s) => (
          <>
            <dl class="facts">
              <div>
                <dt>Applied</dt>
                <dd>{s.events.applied}</dd>
              </div>
              <div>
                <dt>Pending</dt>
                <dd>{s.events.pending}</dd>
              </div>
              <div>
                <dt>Ignored</dt>
                <dd>{s.events.ignored}</dd>
              </div>
              <div>
                <dt>Dead</dt>
                <dd>{s.events.dead}</dd>
              </div>
              <div>
                <dt>Lag</dt>
                <dd>{s.events.pending === 0 ? 'none' : lag(s.lag_seconds)}</dd>
              </div>
              <div>
                <dt>Last event</dt>
                <dd>
                  {s.last_event ? (
                    <>
                      {s.last_event.type} <Time iso={s.last_event.received_at} />
                    </>
                  ) : (
                    'none yet'
                  )}
                </dd>
              </div>
            </dl>
            <h4>Last sync</h4>
            {s.last_sync ? (
              <>
                <p>
                  <span class={`badge sync-${s.last_sync.state}`}>{s.last_sync.state}</span> started <Time iso={s.last_sync.created_at} />
                  {s.last_sync.finished_at ? (
                    <>
                      , finished <Time iso={s.last_sync.finished_at} />
                    </>
                  ) : (
                    `, now reading ${s.last_sync.phase}s`
                  )}
                  : {s.last_sync.pages} pages, {s.last_sync.requests} requests
                  {s.last_sync.rate_limited ? `, ${s.last_sync.rate_limited} answered 429` : ''}.
                </p>
                <ErrorBox message={s.last_sync.error} />
                {s.last_sync_outcome ? (
                  <TableScroll label="Last sync's outcome">
                    <table data-testid={`billing-outcome-${id}`}>
                      <caption class="sr-only">What the last sync of {connector.name} did</caption>
                      <thead>
                        <tr>
                          <th scope="col">Object</th>
                          <th scope="col">Read</th>
                          <th scope="col">Created</th>
                          <th scope="col">Updated</th>
                          <th scope="col">Unchanged</th>
                        </tr>
                      </thead>
                      <tbody>
                        {(['customer', 'subscription', 'invoice'] as const).map((type) => {
                          const counts = s.last_sync_outcome!.objects[type];
                          return (
                            <tr key={type}>
                              <th scope="row">{OBJECT_LABELS[type]}</th>
                              <td>{counts.read}</td>
                              <td>{counts.created}</td>
                              <td>{counts.updated}</td>
                              <td>{counts.unchanged}</td>
                            </tr>
                          );
                        })}
                      </tbody>
                    </table>
                  </TableScroll>
                ) : null}
                {s.last_sync_outcome?.skipped.length ? (
                  <ul data-testid={`billing-skipped-${id}`}>
                    {s.last_sync_outcome.skipped.map((skip) => (
                      <li key={`${skip.object_type}-${skip.state}-${skip.reason}`}>
                        {skip.count} {skip.object_type ?? 'event'}
                        {skip.count === 1 ? '' : 's'} skipped ({skip.state}): {skip.reason}
                      </li>
                    ))}
                  </ul>
                ) : null}
              </>
            ) : (
              <Empty>No sync yet.</Empty>
            )}
            <h4>Dead events</h4>
            {s.dead.length === 0 ? (
              <Empty>No dead events.</Empty>
            ) : (
              <EventsTable
                label="Dead events table"
                caption={`Dead events of ${connector.name}`}
                testId={`billing-dead-${id}`}
                events={s.dead}
                columns={DEAD_COLUMNS}
                lastError={(event) => event.detail}
                replay={{
                  label: (event) => `Replay event ${event.id}`,
                  path: (event) => `/api/billing/connectors/${encodeURIComponent(id)}/events/${encodeURIComponent(event.id)}/replay`,
                  done: status.reload,
                }}
              />
            )}
            {s.dead_more ? <p class="muted">… and {s.dead_more} more (revintel billing status lists them too).</p> : null}
          </>
        )}
      </Loading>
    </div>
  );
}

export function BillingPage() {
  const session = useSession();
  const admin = isAdmin(session);
  const connectors = useLoad(
    () => (admin ? api<BillingConnector[]>('GET', '/api/billing/connectors').then((r) => r.data) : Promise.resolve([])),
    [admin],
  );
  return (
    <section>
      <PageTitle>Settings → Billing</PageTitle>
      <p class="muted">
        Billing connectors keep customers, contracts and invoices in step with Stripe or Chargebee, with their real history: a backfill
        reads what the account holds, and webhooks bring every change after.
      </p>
      {!admin ? (
        <p>Only admins manage billing connectors.</p>
      ) : (
        <>
          <h2>Add a billing connector</h2>
          <AddForm onAdded={connectors.reload} />
          <h2>Billing connectors</h2>
          <Loading state={connectors}>
            {(list) =>
              list.length === 0 ? (
                <Empty>No billing connector yet. Add one above.</Empty>
              ) : (
                <ul class="cards">
                  {list.map((connector) => (
                    <li key={connector.id} class="card" data-testid={`billing-connector-${connector.id}`}>
                      <h3>
                        {connector.name} <span class="badge">{connector.platform}</span> <span class="badge">{connector.mode}</span>
                      </h3>
                      <CopyField
                        id={`billing-url-${connector.id}`}
                        label="Webhook URL"
                        value={absolute(connector.webhook_url)}
                        testId="billing-webhook-url"
                        copyLabel="Copy URL"
                      />
                      <p class="muted">
                        {connector.platform === 'stripe'
                          ? `Signing secret: ${connector.webhook_secret ? 'set' : 'not set: deliveries cannot be verified until it is'}`
                          : `Webhook credentials: ${connector.basic_auth ? 'set' : 'not set'}`}
                        {` · API key: ${connector.api_key ? 'set' : 'not set'}`}
                        {connector.site ? ` · site ${connector.site}` : ''}
                      </p>
                      <details>
                        <summary>How {connector.platform === 'stripe' ? 'Stripe' : 'Chargebee'} proves a delivery</summary>
                        <SigningHelp connector={connector} />
                      </details>
                      <Status connector={connector} />
                    </li>
                  ))}
                </ul>
              )
            }
          </Loading>
        </>
      )}
    </section>
  );
}

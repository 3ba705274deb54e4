// Settings → API: the organisation's keys (with their last use), a new key (its secret shown once,
// with a copy button), and revoking one after a confirmation. Admins only (the API says 403 else).
import { useState } from 'preact/hooks';
import { api, errorMessage } from '../api.ts';
import type { CreatedKey, Key } from '../models.ts';
import { isAdmin, useSession } from '../session.ts';
import { ConfirmDialog, Empty, ErrorBox, Field, Loading, PageTitle, ShownOnce, Time, useLoad, useSubmit, TableScroll } from '../ui.tsx';

function GenerateForm({ onCreated }: { onCreated: (secret: string, name: string) => void }) {
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const submit = useSubmit();
  return (
    <form
      class="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        void submit.run(async () => {
          const body: { name: string; expires_at?: string } = { name };
          if (expires) body.expires_at = new Date(`${expires}T23:59:59`).toISOString();
          const { data } = await api<CreatedKey>('POST', '/api/keys', body);
          onCreated(data.secret, name);
          setName('');
          setExpires('');
        });
      }}
    >
      <div>
        <Field id="key-name" label="Key name" required maxLength={200} value={name} onValue={setName} placeholder="e.g. CRM sync" />
      </div>
      <div>
        <Field id="key-expires" label="Expires on (optional)" type="date" value={expires} onValue={setExpires} />
      </div>
      <button type="submit" disabled={submit.busy}>
        {submit.busy ? 'Generating…' : 'Generate key'}
      </button>
      <ErrorBox message={submit.error} />
    </form>
  );
}

export function KeysPage() {
  const session = useSession();
  if (!isAdmin(session))
    return (
      <section>
        <PageTitle>Settings → API</PageTitle>
        <p class="notice">Only admins manage API keys. Ask an admin of your organisation for one.</p>
      </section>
    );
  return <AdminKeysPage />;
}

function AdminKeysPage() {
  const keys = useLoad(() => api<Key[]>('GET', '/api/keys').then((r) => r.data), []);
  const [secret, setSecret] = useState<{ value: string; name: string } | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [revokeError, setRevokeError] = useState<string | null>(null);
  return (
    <section>
      <PageTitle>Settings → API</PageTitle>
      <p class="muted">
        API keys let programs call the revintel API. Send one as <code>Authorization: Bearer rvk_…</code>.
      </p>
      <h2>Generate a key</h2>
      <GenerateForm
        onCreated={(value, name) => {
          setSecret({ value, name });
          keys.reload();
        }}
      />
      {secret ? (
        <div class="notice" role="status">
          <p>
            <strong>Your new key “{secret.name}”.</strong> Copy it now: it is shown only this once.
          </p>
          <ShownOnce value={secret.value} id="new-secret" testId="new-secret" copyLabel="Copy key">
            <button type="button" class="secondary" onClick={() => setSecret(null)}>
              Done
            </button>
          </ShownOnce>
        </div>
      ) : null}
      <h2>Keys</h2>
      <ErrorBox message={revokeError} />
      <Loading state={keys}>
        {(list) =>
          list.length === 0 ? (
            <Empty>No keys yet. Generate one above.</Empty>
          ) : (
            <TableScroll label="Keys table">
              <table>
                <caption class="sr-only">API keys</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Prefix</th>
                    <th scope="col">Status</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Expires</th>
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((key) => (
                    <tr key={key.id}>
                      <td>{key.name}</td>
                      <td>
                        <code>{key.prefix}…</code>
                      </td>
                      <td>
                        <span class={`badge status-${key.status}`}>{key.status}</span>
                      </td>
                      <td>
                        <Time iso={key.created_at} />
                      </td>
                      <td>{key.last_used_at ? <Time iso={key.last_used_at} /> : 'never'}</td>
                      <td>{key.expires_at ? <Time iso={key.expires_at} /> : 'never'}</td>
                      <td>
                        {key.revoked_at ? (
                          <span class="muted">
                            revoked <Time iso={key.revoked_at} />
                          </span>
                        ) : (
                          <button type="button" class="danger" aria-label={`Revoke key ${key.name}`} onClick={() => setRevoking(key)}>
                            Revoke
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )
        }
      </Loading>
      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        danger
        onCancel={() => setRevoking(null)}
        onConfirm={async () => {
          const key = revoking;
          setRevoking(null);
          if (!key) return;
          setRevokeError(null);
          try {
            await api('DELETE', `/api/keys/${encodeURIComponent(key.id)}`);
          } catch (e) {
            setRevokeError(errorMessage(e));
          }
          keys.reload();
        }}
      >
        <p>
          Programs using <strong>{revoking?.name}</strong> (<code>{revoking?.prefix}…</code>) will be refused from now on. This cannot be
          undone.
        </p>
      </ConfirmDialog>
    </section>
  );
}

// Users (admins): the organisation's people, an invitation (its one-time link shown once), and a
// change of role or a disable.
import { useState } from 'preact/hooks';
import { api, errorMessage } from '../api.ts';
import type { Invited, User } from '../models.ts';
import { useSession } from '../session.ts';
import { CopyButton, Empty, ErrorBox, Loading, PageTitle, Time, useLoad, useSubmit, TableScroll } from '../ui.tsx';

const isDisabled = (u: User) => u.status === 'disabled';

function InviteForm({ onInvited }: { onInvited: (link: string, email: string) => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<'admin' | 'member'>('member');
  const submit = useSubmit();
  return (
    <form
      class="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        void submit.run(async () => {
          const { data } = await api<Invited>('POST', '/api/users', { email, role, ...(name.trim() ? { name: name.trim() } : {}) });
          onInvited(data.sign_in_link, email);
          setEmail('');
          setName('');
        });
      }}
    >
      <div>
        <label for="invite-email">E-mail</label>
        <input id="invite-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      </div>
      <div>
        <label for="invite-name">Name (optional)</label>
        <input id="invite-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div>
        <label for="invite-role">Role</label>
        <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as 'admin' | 'member')}>
          <option value="member">member</option>
          <option value="admin">admin</option>
        </select>
      </div>
      <button type="submit" disabled={submit.busy}>
        {submit.busy ? 'Inviting…' : 'Invite'}
      </button>
      <ErrorBox message={submit.error} />
    </form>
  );
}

export function UsersPage() {
  const session = useSession();
  const myId = session.state === 'signed-in' ? session.me.user?.id : undefined;
  const users = useLoad(() => api<User[]>('GET', '/api/users').then((r) => r.data), []);
  const [invite, setInvite] = useState<{ link: string; email: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const patch = async (user: User, body: { role?: string; disabled?: boolean }) => {
    setError(null);
    try {
      await api('PATCH', `/api/users/${encodeURIComponent(user.id)}`, body);
    } catch (e) {
      setError(errorMessage(e));
    }
    users.reload();
  };
  /** A fresh one-time link (a forgotten password, a lost invitation), shown like an invitation's. */
  const newLink = async (user: User) => {
    setError(null);
    try {
      const { data } = await api<Invited>('POST', `/api/users/${encodeURIComponent(user.id)}/link`);
      setInvite({ link: data.sign_in_link, email: user.email });
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <section>
      <PageTitle>Users</PageTitle>
      <h2>Invite someone</h2>
      <InviteForm
        onInvited={(link, email) => {
          setInvite({ link, email });
          users.reload();
        }}
      />
      {invite ? (
        <div class="notice" role="status">
          <p>
            Send this one-time link to <strong>{invite.email}</strong>. It is shown only this once and works for 24 hours.
          </p>
          <div class="secret">
            <input readOnly aria-label="Invitation link" value={invite.link} data-testid="invite-link" />
            <CopyButton text={invite.link} label="Copy link" />
          </div>
        </div>
      ) : null}
      <h2>People</h2>
      <ErrorBox message={error} />
      <Loading state={users}>
        {(list) =>
          list.length === 0 ? (
            <Empty>No users yet.</Empty>
          ) : (
            <TableScroll label="Users table">
              <table>
                <caption class="sr-only">Users</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">E-mail</th>
                    <th scope="col">Role</th>
                    <th scope="col">Status</th>
                    <th scope="col">Added</th>
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((user) => (
                    <tr key={user.id}>
                      <td>{user.name ?? '—'}</td>
                      <td>{user.email}</td>
                      <td>
                        <label class="sr-only" for={`role-${user.id}`}>
                          Role of {user.email}
                        </label>
                        <select
                          id={`role-${user.id}`}
                          value={user.role}
                          disabled={user.id === myId}
                          onChange={(e) => patch(user, { role: e.currentTarget.value })}
                        >
                          <option value="member">member</option>
                          <option value="admin">admin</option>
                        </select>
                      </td>
                      <td>
                        <span class={`badge status-${user.status}`}>{user.status}</span>
                      </td>
                      <td>
                        <Time iso={user.created_at} />
                      </td>
                      <td>
                        {user.id === myId ? (
                          <span class="muted">you</span>
                        ) : (
                          <div class="row-actions">
                            {isDisabled(user) ? null : (
                              <button
                                type="button"
                                class="secondary"
                                aria-label={`New sign-in link for ${user.email}`}
                                onClick={() => newLink(user)}
                              >
                                New sign-in link
                              </button>
                            )}
                            <button
                              type="button"
                              class={isDisabled(user) ? 'secondary' : 'danger'}
                              aria-label={`${isDisabled(user) ? 'Enable' : 'Disable'} ${user.email}`}
                              onClick={() => patch(user, { disabled: !isDisabled(user) })}
                            >
                              {isDisabled(user) ? 'Enable' : 'Disable'}
                            </button>
                          </div>
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
    </section>
  );
}

// Sign in with e-mail and password; and the one-time link's page, whose button (not the visit:
// a mail scanner fetching the link must not use it up) posts the token with the new password.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { navigate, useLocation } from '../router.ts';
import { refreshSession } from '../session.ts';
import { ErrorBox, useSubmit } from '../ui.tsx';

export function SignInPage({ error }: { error?: string }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [organisation, setOrganisation] = useState('');
  const submit = useSubmit();
  return (
    <main id="main" class="narrow">
      <h1>Sign in to revintel</h1>
      <ErrorBox message={error ?? null} />
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void submit.run(async () => {
            await api(
              'POST',
              '/api/auth/sign-in',
              organisation.trim() ? { email, password, organisation: organisation.trim() } : { email, password },
            );
            await refreshSession();
            navigate(location.pathname === '/sign-in' ? '/' : location.pathname, true);
          });
        }}
      >
        <label for="email">E-mail</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <details>
          <summary>In several organisations?</summary>
          <label for="organisation">Organisation (its name; without it, your oldest account)</label>
          <input
            id="organisation"
            name="organisation"
            autocomplete="organization"
            value={organisation}
            onInput={(e) => setOrganisation(e.currentTarget.value)}
          />
        </details>
        <ErrorBox message={submit.error} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p class="muted">
        No password yet? Use the one-time link your administrator (or <code>revintel users create</code>) gave you.
      </p>
    </main>
  );
}

export function AcceptPage() {
  const { hash } = useLocation();
  const token = new URLSearchParams(hash.replace(/^#/, '')).get('token');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const submit = useSubmit();
  return (
    <main id="main" class="narrow">
      <h1>Choose your password</h1>
      {!token ? (
        <p class="error" role="alert">
          This link has no token. Open the whole link you were given, or ask your administrator for a new one.
        </p>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (password !== confirm) {
              submit.setError('The two passwords differ.');
              return;
            }
            void submit.run(async () => {
              await api('POST', '/api/auth/accept', { token, password });
              history.replaceState(null, '', '/sign-in/accept'); // the used token leaves the address bar
              await refreshSession();
              navigate('/', true);
            });
          }}
        >
          <p>This one-time link signs you in and sets your password. It works once.</p>
          <label for="new-password">New password</label>
          <input
            id="new-password"
            type="password"
            autocomplete="new-password"
            required
            minLength={10}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            aria-describedby="password-help"
          />
          <p id="password-help" class="muted">
            At least 10 characters.
          </p>
          <label for="confirm-password">Confirm the password</label>
          <input
            id="confirm-password"
            type="password"
            autocomplete="new-password"
            required
            value={confirm}
            onInput={(e) => setConfirm(e.currentTarget.value)}
          />
          <ErrorBox message={submit.error} />
          <button type="submit" disabled={submit.busy}>
            {submit.busy ? 'Signing in…' : 'Set password and sign in'}
          </button>
        </form>
      )}
      <p>
        <a href="/sign-in">Sign in with a password instead</a>
      </p>
    </main>
  );
}

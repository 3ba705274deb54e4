// The console's entry: the shell (header, navigation, sign-out) and the page for the path.
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage } from './api.ts';
import { navigate, useLocation } from './router.ts';
import { isAdmin, refreshSession, signedOut, useSession } from './session.ts';
import { ErrorBox, PageTitle, Spinner } from './ui.tsx';
import { AcceptPage, SignInPage } from './pages/sign-in.tsx';
import { KeysPage } from './pages/keys.tsx';
import { ConnectorsPage } from './pages/connectors.tsx';
import { CustomerPage, CustomersPage } from './pages/customers.tsx';
import { CfoPage } from './pages/cfo.tsx';
import { ActionsPage } from './pages/actions.tsx';
import { UsersPage } from './pages/users.tsx';
import { BillingPage } from './pages/billing.tsx';

const NAV: { path: string; label: string; admin?: boolean }[] = [
  { path: '/cfo', label: 'CFO' },
  { path: '/customers', label: 'Customers' },
  { path: '/agent-actions', label: 'Agent actions' },
  { path: '/support/connectors', label: 'Support Intelligence' },
  { path: '/settings/api', label: 'Settings → API', admin: true },
  { path: '/settings/users', label: 'Users', admin: true },
  { path: '/settings/billing', label: 'Settings → Billing', admin: true },
];

/** The page for a path (the server answers `/cfo/` as `/cfo`); null: the console has none there. */
function pageFor(address: string) {
  const path = address.length > 1 ? address.replace(/\/$/, '') : address;
  const customer = /^\/customers\/([^/]+)$/.exec(path);
  if (path === '/' || path === '/cfo') return <CfoPage />;
  if (path === '/customers') return <CustomersPage />;
  if (customer) return <CustomerPage id={decodeURIComponent(customer[1]!)} />;
  if (path === '/agent-actions') return <ActionsPage />;
  if (path === '/support/connectors') return <ConnectorsPage />;
  if (path === '/settings/api') return <KeysPage />;
  if (path === '/settings/users') return <UsersPage />;
  if (path === '/settings/billing') return <BillingPage />;
  return null;
}

/** A path the console has no page for (the server answers it 404 with this page): where to go
 * instead, signed in or not. */
function NotFound({ path, signedIn, admin = false }: { path: string; signedIn: boolean; admin?: boolean }) {
  return (
    <section>
      <PageTitle>Page not found</PageTitle>
      <p>
        There is no console page at <code>{path}</code>.
      </p>
      {signedIn ? (
        <>
          <p>The console's pages:</p>
          <ul>
            {NAV.filter((item) => !item.admin || admin).map((item) => (
              <li key={item.path}>
                <a href={item.path}>{item.label}</a>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p>
          <a href="/sign-in">Sign in to revintel</a> to open the console.
        </p>
      )}
      <p class="muted">
        The API is under <code>/api</code>; its reference is at <a href="/docs">/docs</a>.
      </p>
    </section>
  );
}

function SignOut() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const out = async (everywhere: boolean) => {
    setBusy(true);
    setError(null);
    try {
      await api('POST', everywhere ? '/api/auth/sign-out-everywhere' : '/api/auth/sign-out');
      signedOut();
      navigate('/sign-in');
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="sign-out">
      <button type="button" class="secondary" disabled={busy} onClick={() => out(false)}>
        Sign out
      </button>
      <button type="button" class="secondary" disabled={busy} onClick={() => out(true)}>
        Sign out everywhere
      </button>
      <ErrorBox message={error} />
    </div>
  );
}

function App() {
  const { path } = useLocation();
  const session = useSession();
  useEffect(() => {
    void refreshSession();
  }, []);
  // Signed in already: the sign-in form has nothing to do, the start page opens instead.
  useEffect(() => {
    if (session.state === 'signed-in' && path === '/sign-in') navigate('/', true);
  }, [session.state, path]);
  // On a narrow screen the menu is folded away; it folds again after a navigation.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  // Focus the page's heading after a navigation, so a screen reader hears where it is.
  useEffect(() => {
    document.querySelector<HTMLElement>('main h1')?.focus({ preventScroll: true });
  }, [path]);

  if (path === '/sign-in/accept') return <AcceptPage />;
  if (session.state === 'loading')
    return (
      <main id="main">
        <Spinner />
      </main>
    );
  const page = pageFor(path);
  if (session.state === 'signed-out')
    return page || path === '/sign-in' ? (
      <SignInPage error={session.error} />
    ) : (
      <main id="main" class="narrow">
        <NotFound path={path} signedIn={false} />
      </main>
    );
  if (path === '/sign-in') return null;
  const me = session.me;
  const admin = isAdmin(session);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          revintel
        </a>
        <button
          type="button"
          class="menu-toggle secondary"
          aria-expanded={menuOpen}
          aria-controls="console-menu"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        {/* biome-ignore lint/a11y/noStaticElementInteractions: Escape closes the menu from any of its links; the links themselves are the interactive elements */}
        <div
          id="console-menu"
          class={menuOpen ? 'menu open' : 'menu'}
          onKeyDown={(event) => {
            if (event.key !== 'Escape' || !menuOpen) return;
            setMenuOpen(false);
            document.querySelector<HTMLElement>('.menu-toggle')?.focus();
          }}
        >
          <nav aria-label="Console">
            <ul>
              {NAV.filter((item) => !item.admin || admin).map((item) => (
                <li key={item.path}>
                  <a
                    href={item.path}
                    aria-current={
                      path === item.path ||
                      (item.path === '/cfo' && path === '/') ||
                      (item.path !== '/' && path.startsWith(`${item.path}/`))
                        ? 'page'
                        : undefined
                    }
                  >
                    {item.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="who">
            <span>
              {me.user ? (me.user.name ?? me.user.email) : 'API key'} · {me.org.name}
              {me.user ? <span class="badge">{me.user.role}</span> : null}
            </span>
            <SignOut />
          </div>
        </div>
      </header>
      <main id="main">{page ?? <NotFound path={path} signedIn admin={admin} />}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);

// The web console (docs/console.md): GET / and every client route answer the one page;
// /assets/<name>-<hash>.<ext> its script and styles, cacheable for ever (the name changes with the
// content); /favicon.ico its icon. A browser asking for any other page outside /api and /assets
// gets the same page with a 404, and the page shows its own "not found" (not the API's JSON). All of it comes from the binary (no CDN), under a CSP that allows nothing inline and
// nothing from another origin. The page talks only to the public /api routes.
//
// Not counted against the address's budget: the answers come from memory, and a person opening
// the console on a shared address (an office) must not use up the anonymous API budget.
import { Elysia, t } from 'elysia';
import { AppError } from '../../lib/errors.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { consoleSourceChangedSince, type ConsoleBundle } from './bundle.ts';
import { faviconBytes } from './favicon.ts';

const page = <Path extends string>(path: Path, summary: string) =>
  ({
    method: 'GET',
    path,
    auth: 'none',
    counted: 'not-counted',
    body: 'none',
    envelope: false,
    response: t.String(),
    produces: ['text/html'],
    summary,
    tag: 'console',
  }) as const;

export const CONSOLE_ROUTES = {
  home: page('/', 'The web console (its home page)'),
  signIn: page('/sign-in', 'The console: sign in'),
  accept: page('/sign-in/accept', "The console: the one-time link's page (the token is in the fragment)"),
  settingsApi: page('/settings/api', 'The console: Settings → API (keys)'),
  connectors: page('/support/connectors', 'The console: Support Intelligence → connectors'),
  customers: page('/customers', 'The console: customers'),
  customer: page('/customers/:id', "The console: a customer's page"),
  cfo: page('/cfo', 'The console: CFO dashboard'),
  actions: page('/agent-actions', 'The console: agent actions inbox'),
  users: page('/settings/users', 'The console: users'),
  billing: page('/settings/billing', 'The console: Settings → Billing (billing connectors, their status)'),
  asset: {
    ...page('/assets/:file', "The console's scripts and styles (immutable, hashed names)"),
    produces: ['text/javascript', 'text/css'],
    errors: [404],
  },
  favicon: { ...page('/favicon.ico', "The console's icon"), produces: ['image/x-icon'] },
} as const satisfies Record<string, RouteDeclaration>;

/** The console's client routes: the page answers each of them. */
export const CONSOLE_PAGES = Object.values(CONSOLE_ROUTES).filter(
  (route) => route !== CONSOLE_ROUTES.asset && route !== CONSOLE_ROUTES.favicon,
);

/** Whether an unknown path is a page a person opened in a browser (it gets the console's own "not
 * found"), rather than a call of the API, a missing asset or a client that asked for JSON (those
 * keep the API's JSON 404). */
export function wantsConsolePage(request: Request, path: string): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (path === '/api' || path.startsWith('/api/') || path.startsWith('/assets/')) return false;
  return (request.headers.get('accept') ?? '').includes('text/html');
}

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** In the binary, the bundle `bun run build` embedded; from source, built from src/console. */
async function loadBundle(): Promise<ConsoleBundle> {
  if (Bun.isStandaloneExecutable) {
    const { packPath } = await import('./embedded-asset.ts');
    return (await Bun.file(packPath).json()) as ConsoleBundle;
  }
  const { buildConsole } = await import('./bundle.ts');
  return buildConsole();
}

export interface ConsolePages {
  /** The page (a client route, or with 404 the page that shows "not found"). */
  page(status?: number): Response | Promise<Response>;
  asset(file: string): Response | Promise<Response>;
}

/** The bundle, loaded at the first request. `changed(since)`: whether the bundle must be made again
 * (from source: a file of src/console changed since it was built, so `bun run dev` shows an edit at
 * the next page load). */
export function consolePages(
  load: () => Promise<ConsoleBundle> = loadBundle,
  changed: ((since: number) => boolean) | null = Bun.isStandaloneExecutable ? null : consoleSourceChangedSince,
): ConsolePages {
  let bundle: ConsoleBundle | null = null;
  let loading: Promise<ConsoleBundle> | null = null;
  let builtAt = 0;
  const ready = (): ConsoleBundle | Promise<ConsoleBundle> =>
    bundle ??
    (loading ??= ((builtAt = Date.now()), load()).then(
      (made) => (bundle = made),
      (error) => {
        loading = null; // the next request tries again (a source file fixed meanwhile)
        throw error;
      },
    ));
  const answerPage = (made: ConsoleBundle, status: number) =>
    new Response(made.index, {
      status,
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY_HEADERS },
    });
  const answerAsset = (made: ConsoleBundle, file: string) => {
    const asset = made.assets[`/assets/${file}`];
    if (!asset) throw new AppError('not_found', `No console asset ${file}`);
    return new Response(asset.body, {
      headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=31536000, immutable', ...SECURITY_HEADERS },
    });
  };
  return {
    page(status = 200) {
      if (bundle && changed?.(builtAt)) {
        bundle = null;
        loading = null;
      }
      const made = ready();
      return made instanceof Promise ? made.then((m) => answerPage(m, status)) : answerPage(made, status);
    },
    asset(file) {
      const made = ready();
      return made instanceof Promise ? made.then((m) => answerAsset(m, file)) : answerAsset(made, file);
    },
  };
}

/** A day in a browser's cache: the icon's name does not change with its content. */
const answerFavicon = () =>
  new Response(faviconBytes(), {
    headers: { 'content-type': 'image/x-icon', 'cache-control': 'public, max-age=86400', ...SECURITY_HEADERS },
  });

export function consoleModule(pages: ConsolePages = consolePages()) {
  const app = new Elysia({ name: 'revintel/console' });
  for (const route of CONSOLE_PAGES) app.get(route.path, () => pages.page());
  return app.get(CONSOLE_ROUTES.favicon.path, answerFavicon).get(CONSOLE_ROUTES.asset.path, ({ params }) => pages.asset(params.file));
}

// GET /api/openapi.json and GET /docs (docs/api.md "API reference"): the OpenAPI 3.1 document of every
// route this server runs, and a page that shows it, both from the binary (nothing from elsewhere).
// Public: the reference is no secret, and a client generating its SDK has no key yet.
import { Elysia, t } from 'elysia';
import type { RouteDeclaration } from '../../lib/routes.ts';
import { VERSION } from '../../version.ts';
import { openApiDocument, type RegisteredRoute } from './openapi.ts';
import { DOCS_PAGE } from './page.ts';

export const DOCS_ROUTES = {
  openapi: {
    method: 'GET',
    path: '/api/openapi.json',
    auth: 'none',
    counted: 'address',
    body: 'none',
    envelope: false,
    response: t.Object({
      openapi: t.Literal('3.1.0'),
      info: t.Object({ title: t.String(), version: t.String() }),
      paths: t.Record(t.String(), t.Any()),
    }),
    summary: 'This API as an OpenAPI 3.1 document (no key needed)',
    tag: 'docs',
  },
  page: {
    method: 'GET',
    path: '/docs',
    auth: 'none',
    counted: 'address',
    body: 'none',
    envelope: false,
    response: t.String(),
    produces: ['text/html'],
    summary: 'The API reference as a web page',
    tag: 'docs',
  },
} as const satisfies Record<string, RouteDeclaration>;

/** `source` is read at the first request, when every module's routes are registered; the document
 * is made once and kept (the routes do not change while the process runs). */
export function docsModule(
  source: () => { declarations: readonly RouteDeclaration[]; routes: readonly RegisteredRoute[]; serverUrl: string | null },
) {
  let body: string | null = null;
  const documentBody = () => (body ??= JSON.stringify(openApiDocument({ ...source(), version: VERSION })));
  return new Elysia({ name: 'revintel/docs' })
    .get(
      DOCS_ROUTES.openapi.path,
      () =>
        new Response(documentBody(), {
          headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=300' },
        }),
    )
    .get(
      DOCS_ROUTES.page.path,
      () =>
        new Response(DOCS_PAGE, {
          headers: {
            'content-type': 'text/html; charset=utf-8',
            'cache-control': 'public, max-age=300',
            'content-security-policy':
              "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'",
          },
        }),
    );
}

// A route that takes a JSON body, mounted by the tests through AppDeps.modules with its declaration:
// the body pipeline (size limit, content type, parsing, validation) is exercised the way every
// POST route uses it.
import { Elysia, t, type AnyElysia } from 'elysia';
import { jsonBody } from '../../src/plugins/body.ts';
import { ok } from '../../src/lib/envelope.ts';
import type { DeclaredModule, RouteDeclaration } from '../../src/lib/routes.ts';
import type { Config } from '../../src/config.ts';

const Echo = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 2_000_000 }),
    expires_at: t.Optional(t.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

export const ECHO_ROUTE = {
  method: 'POST',
  path: '/api/test-fixtures/echo',
  auth: 'key',
  counted: 'organisation',
  body: 'api',
  response: Echo,
  summary: 'Answers its body',
} as const satisfies RouteDeclaration;

export const ECHO_PATH = ECHO_ROUTE.path;

export function echoModule(config: Config): DeclaredModule<AnyElysia> {
  const app = new Elysia({ name: 'test/echo' }).post(ECHO_ROUTE.path, ({ body }) => ok(body), {
    body: Echo,
    parse: jsonBody(ECHO_ROUTE, config),
  });
  return { app, declarations: [ECHO_ROUTE] };
}

// A route that takes a JSON body, mounted by the tests through AppDeps.modules: the body pipeline
// (size limit, content type, parsing, validation) is exercised the way every future POST route
// will use it, before the first of them exists.
import { Elysia, t } from 'elysia';
import { bodyPlugin } from '../../src/plugins/body.ts';
import { ok } from '../../src/lib/envelope.ts';
import type { Config } from '../../src/config.ts';

export const ECHO_PATH = '/api/test-fixtures/echo';

export function echoModule(config: Config) {
  return new Elysia({ name: 'test/echo' })
    .use(bodyPlugin(config, ECHO_PATH))
    .post(ECHO_PATH, ({ body }) => ok(body), {
      body: t.Object(
        {
          name: t.String({ minLength: 1, maxLength: 2_000_000 }),
          expires_at: t.Optional(t.String({ format: 'date-time' })),
        },
        { additionalProperties: false },
      ),
    });
}

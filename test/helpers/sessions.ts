// A person signed in to the console, for tests of routes only a session may use: a user made in
// the organisation, their one-time link accepted through the app, and the headers a browser on the
// console's page would send (the cookie, this server's Origin, the session's CSRF token).
import { createUser } from '../../src/modules/users/service.ts';
import { call, uniqueName, type TestDatabase } from './harness.ts';

export const CONSOLE_ORIGIN = 'http://localhost';
export const CONSOLE_PASSWORD = 'correct horse battery';

/** `origin`: the server's own (PUBLIC_URL's origin when the app has one). */
export async function consoleSession(
  app: Parameters<typeof call>[0],
  database: TestDatabase,
  orgId: string,
  role: 'admin' | 'member' = 'admin',
  origin = CONSOLE_ORIGIN,
) {
  const { user, link } = await database.db.transaction((tx) =>
    createUser(tx as never, { org: orgId, email: `${uniqueName('person')}@example.com`, role, actor: 'test' }),
  );
  const accepted = await call(app, 'POST', '/api/auth/accept', {
    body: { token: link.token, password: CONSOLE_PASSWORD },
    headers: { origin },
  });
  if (accepted.status !== 200) throw new Error(`the sign-in link was refused: ${accepted.status} ${accepted.text}`);
  const cookie = accepted.headers.get('set-cookie')!.split(';')[0]!;
  const csrf = accepted.body.data.csrf_token as string;
  return { user, cookie, csrf, headers: { cookie, origin, 'x-csrf-token': csrf } };
}

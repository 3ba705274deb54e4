// Console users and sessions (SPEC 11): one-time links, sign-in and its limits, the session cookie
// authenticating /api like a key, CSRF on writes, expiry, sign-out, and the routes only an admin
// signed in to the console may use (keys, users).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import {
  awayFromMinuteBoundary,
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  testConfig,
  TEST_DATABASE_URL,
  uniqueName,
  type CallResult,
  type TestDatabase,
} from '../helpers/harness.ts';
import { auditLog, sessions, signInLinks, users } from '../../src/db/schema/index.ts';
import { createUser } from '../../src/modules/users/service.ts';
import { ECHO_PATH } from '../helpers/fixture-routes.ts';
import type { Config } from '../../src/config.ts';

const PASSWORD = 'correct horse battery';
const ORIGIN = 'http://localhost';

interface Signed {
  org: { id: string; name: string };
  secret: string;
  user: { id: string; email: string };
  cookie: string;
  csrf: string;
  accepted: CallResult;
}

for (const backend of BACKENDS) {
  describe(`console users and sessions (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    const configFor = (overrides: Partial<Config> = {}) =>
      testConfig({ databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null, ...overrides });

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
    });
    afterAll(() => database.dispose());

    async function invite(orgId: string, role: 'admin' | 'member' = 'admin', email = `${uniqueName('person')}@example.com`) {
      return database.db.transaction((tx) => createUser(tx as never, { org: orgId, email, role, actor: 'test' }));
    }

    /** A new organisation (with a key) and a user of it who accepted their link. */
    async function signedIn(role: 'admin' | 'member' = 'admin', into?: { org: Signed['org']; secret: string }, on = app): Promise<Signed> {
      const { org, secret } = into ?? (await createOrgWithKey(database));
      const { user, link } = await invite(org.id, role);
      const accepted = await call(on, 'POST', '/api/auth/accept', {
        body: { token: link.token, password: PASSWORD },
        headers: { origin: ORIGIN },
      });
      expect(accepted.status).toBe(200);
      return {
        org,
        secret,
        user,
        cookie: accepted.headers.get('set-cookie')!.split(';')[0]!,
        csrf: accepted.body.data.csrf_token,
        accepted,
      };
    }

    const as = (s: Signed, headers: Record<string, string> = {}) => ({
      headers: { cookie: s.cookie, origin: ORIGIN, 'x-csrf-token': s.csrf, ...headers },
    });

    test('accepting a link sets the password, starts a session, and /api/me names the user and carries the CSRF token', async () => {
      const s = await signedIn();
      expect(s.accepted.body.data).toEqual({
        user: { id: s.user.id, email: s.user.email, name: null, role: 'admin' },
        organisation: { id: s.org.id, name: s.org.name, plan: 'enterprise' },
        csrf_token: expect.stringMatching(/^[\w-]{43}$/),
      });
      const cookie = s.accepted.headers.get('set-cookie')!;
      expect(cookie).toMatch(/^revintel_session=[0-9A-Za-z]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
      const me = await call(app, 'GET', '/api/me', { headers: { cookie: s.cookie } });
      expect(me.status).toBe(200);
      expect(me.body.data).toMatchObject({ org: { id: s.org.id }, key: null, user: { id: s.user.id, role: 'admin' }, csrf_token: s.csrf });
      const [row] = await database.db.select().from(users).where(eq(users.id, s.user.id));
      expect(row!.passwordHash).toStartWith('$argon2id$');
      const [session] = await database.db.select().from(sessions).where(eq(sessions.userId, s.user.id));
      expect(session!.tokenHash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(session)).not.toContain(s.cookie.split('=')[1]!);
    });

    test('with a key, /api/me names no user and no CSRF token', async () => {
      const { secret } = await createOrgWithKey(database);
      const me = await call(app, 'GET', '/api/me', { key: secret });
      expect(me.body.data).toMatchObject({ user: null, csrf_token: null, key: { prefix: secret.slice(0, 12) } });
    });

    test('a link is used once', async () => {
      const { org } = await createOrgWithKey(database);
      const { link } = await invite(org.id);
      expect((await call(app, 'POST', '/api/auth/accept', { body: { token: link.token, password: PASSWORD } })).status).toBe(200);
      const again = await call(app, 'POST', '/api/auth/accept', { body: { token: link.token, password: 'another password 123' } });
      expect(again.status).toBe(401);
      expect(again.body.error).toContain('already been used');
    });

    test('an expired link is refused; an unknown one too', async () => {
      const { org } = await createOrgWithKey(database);
      const { user, link } = await invite(org.id);
      await database.db
        .update(signInLinks)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(signInLinks.userId, user.id));
      const expired = await call(app, 'POST', '/api/auth/accept', { body: { token: link.token, password: PASSWORD } });
      expect(expired.status).toBe(401);
      expect(expired.body.error).toContain('expired');
      const unknown = await call(app, 'POST', '/api/auth/accept', { body: { token: 'x'.repeat(43), password: PASSWORD } });
      expect(unknown.status).toBe(401);
      expect(unknown.body.error).toContain('not valid');
    });

    test('a short password is refused and leaves the link usable', async () => {
      const { org } = await createOrgWithKey(database);
      const { link } = await invite(org.id);
      const short = await call(app, 'POST', '/api/auth/accept', { body: { token: link.token, password: 'short' } });
      expect(short.status).toBe(400);
      expect(short.body.error).toContain('at least 10 characters');
      expect((await call(app, 'POST', '/api/auth/accept', { body: { token: link.token, password: PASSWORD } })).status).toBe(200);
    });

    test('sign-in: a wrong password and an unknown e-mail get the same 401; the right one a new session', async () => {
      const s = await signedIn();
      const wrong = await call(app, 'POST', '/api/auth/sign-in', { body: { email: s.user.email, password: 'not the password' } });
      expect(wrong.status).toBe(401);
      expect(wrong.body.error).toBe('Wrong e-mail or password');
      const unknown = await call(app, 'POST', '/api/auth/sign-in', { body: { email: `nobody-${s.user.email}`, password: PASSWORD } });
      expect(unknown.status).toBe(401);
      expect(unknown.body.error).toBe('Wrong e-mail or password');
      const right = await call(app, 'POST', '/api/auth/sign-in', {
        body: { email: s.user.email.toUpperCase(), password: PASSWORD },
        headers: { cookie: s.cookie, origin: ORIGIN },
      });
      expect(right.status).toBe(200);
      const cookie = right.headers.get('set-cookie')!.split(';')[0]!;
      expect(cookie).not.toBe(s.cookie); // a new session at every sign-in
      expect(right.body.data.csrf_token).not.toBe(s.csrf);
      expect((await call(app, 'GET', '/api/me', { headers: { cookie } })).body.data.user.id).toBe(s.user.id);
    });

    test('sign-in from another site is refused by its Origin', async () => {
      const s = await signedIn();
      const forged = await call(app, 'POST', '/api/auth/sign-in', {
        body: { email: s.user.email, password: PASSWORD },
        headers: { origin: 'https://evil.example' },
      });
      expect(forged.status).toBe(403);
      expect(forged.body.code).toBe('csrf_failed');
    });

    test('sign-in attempts are limited per account: 429 with Retry-After and the rate-limit headers', async () => {
      const limited = buildApp(database, { config: configFor({ signInLimitPerMinute: 3 }) }).app;
      const s = await signedIn('admin', undefined, limited);
      await awayFromMinuteBoundary();
      for (let i = 0; i < 3; i++) {
        const attempt = await call(limited, 'POST', '/api/auth/sign-in', {
          body: { email: s.user.email, password: `wrong password ${i}` },
          headers: { 'x-forwarded-for': `10.0.0.${i}` },
        });
        expect(attempt.status).toBe(401);
      }
      const refused = await call(limited, 'POST', '/api/auth/sign-in', { body: { email: s.user.email, password: PASSWORD } });
      expect(refused.status).toBe(429);
      expect(refused.body.error).toContain('for this account');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('x-ratelimit-limit')).toBe('3');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    });

    test('sign-in attempts are limited per client address, whatever the account', async () => {
      const limited = buildApp(database, { config: configFor({ signInAddressLimitPerMinute: 2 }) }).app;
      await awayFromMinuteBoundary();
      for (let i = 0; i < 2; i++) {
        expect(
          (await call(limited, 'POST', '/api/auth/sign-in', { body: { email: `${uniqueName('x')}@example.com`, password: PASSWORD } }))
            .status,
        ).toBe(401);
      }
      const refused = await call(limited, 'POST', '/api/auth/sign-in', {
        body: { email: `${uniqueName('x')}@example.com`, password: PASSWORD },
      });
      expect(refused.status).toBe(429);
      expect(refused.body.error).toContain('from this address');
    });

    test("a session authenticates the API like a key, on its organisation's budget", async () => {
      const s = await signedIn();
      const viaKey = await call(app, 'GET', '/api/customers', { key: s.secret });
      const viaSession = await call(app, 'GET', '/api/customers', { headers: { cookie: s.cookie } });
      expect(viaSession.status).toBe(200);
      expect(viaSession.headers.get('x-ratelimit-limit')).toBe('300');
      expect(Number(viaSession.headers.get('x-ratelimit-remaining-day'))).toBe(Number(viaKey.headers.get('x-ratelimit-remaining-day')) - 1);
    });

    test('an Authorization header wins over the cookie', async () => {
      const s = await signedIn();
      const me = await call(app, 'GET', '/api/me', { key: s.secret, headers: { cookie: s.cookie } });
      expect(me.body.data).toMatchObject({ user: null, key: { prefix: s.secret.slice(0, 12) } });
    });

    test('a session ends after 12 hours without use', async () => {
      const s = await signedIn();
      await database.db
        .update(sessions)
        .set({ lastSeenAt: new Date(Date.now() - 13 * 3_600_000) })
        .where(eq(sessions.userId, s.user.id));
      const me = await call(app, 'GET', '/api/me', { headers: { cookie: s.cookie } });
      expect(me.status).toBe(401);
      expect(me.body.error).toContain('12 hours without use');
    });

    test('a session ends 7 days after sign-in, however used', async () => {
      const s = await signedIn();
      await database.db
        .update(sessions)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(sessions.userId, s.user.id));
      const me = await call(app, 'GET', '/api/me', { headers: { cookie: s.cookie } });
      expect(me.status).toBe(401);
      expect(me.body.error).toContain('7-day limit');
    });

    test('sign-out ends this session and clears the cookie', async () => {
      const s = await signedIn();
      const out = await call(app, 'POST', '/api/auth/sign-out', as(s));
      expect(out.status).toBe(200);
      expect(out.body.data).toEqual({ signed_out: true });
      expect(out.headers.get('set-cookie')).toContain('revintel_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0');
      // The ended session's cookie, sent again (another tab), is refused and cleared there too.
      const after = await call(app, 'GET', '/api/me', { headers: { cookie: s.cookie } });
      expect(after.status).toBe(401);
      expect(after.body.error).toContain('signed out');
      expect(after.headers.get('set-cookie')).toContain('revintel_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0');
      expect(after.headers.get('x-ratelimit-limit')).not.toBeNull();
    });

    test('sign-out-everywhere ends every session of the user, audited', async () => {
      const s = await signedIn();
      const other = await call(app, 'POST', '/api/auth/sign-in', { body: { email: s.user.email, password: PASSWORD } });
      const otherCookie = other.headers.get('set-cookie')!.split(';')[0]!;
      const out = await call(app, 'POST', '/api/auth/sign-out-everywhere', as(s));
      expect(out.body.data).toEqual({ sessions_ended: 2 });
      expect((await call(app, 'GET', '/api/me', { headers: { cookie: s.cookie } })).status).toBe(401);
      expect((await call(app, 'GET', '/api/me', { headers: { cookie: otherCookie } })).status).toBe(401);
      const trail = await database.db.select().from(auditLog).where(eq(auditLog.orgId, s.org.id));
      expect(trail.map((e) => e.action)).toEqual(expect.arrayContaining(['user.created', 'user.signed_in', 'user.signed_out_everywhere']));
    });

    test("CSRF: a session's write without the token is refused", async () => {
      const s = await signedIn();
      const result = await call(app, 'POST', '/api/keys', { body: { name: 'k' }, headers: { cookie: s.cookie, origin: ORIGIN } });
      expect(result.status).toBe(403);
      expect(result.body.code).toBe('csrf_failed');
      expect(result.body.error).toContain('X-CSRF-Token');
    });

    test('CSRF: a wrong token, another Origin, or no Origin nor Referer is refused', async () => {
      const s = await signedIn();
      const wrongToken = await call(app, 'POST', '/api/keys', { body: { name: 'k' }, ...as(s, { 'x-csrf-token': 'x'.repeat(43) }) });
      expect(wrongToken.body.code).toBe('csrf_failed');
      const foreign = await call(app, 'POST', '/api/keys', { body: { name: 'k' }, ...as(s, { origin: 'https://evil.example' }) });
      expect(foreign.status).toBe(403);
      expect(foreign.body.error).toContain('https://evil.example');
      const silent = await call(app, 'POST', '/api/keys', { body: { name: 'k' }, headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
      expect(silent.body.code).toBe('csrf_failed');
    });

    test('CSRF: the right token and Origin (or Referer) pass; a key needs neither', async () => {
      const s = await signedIn();
      expect((await call(app, 'POST', '/api/keys', { body: { name: 'by origin' }, ...as(s) })).status).toBe(201);
      const byReferer = await call(app, 'POST', '/api/keys', {
        body: { name: 'by referer' },
        headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, referer: `${ORIGIN}/settings/api` },
      });
      expect(byReferer.status).toBe(201);
      expect((await call(app, 'POST', ECHO_PATH, { key: s.secret, body: { name: 'x' } })).status).toBeLessThan(300);
    });

    test('keys: a key cannot create one, a member cannot; an admin can, and it works until revoked', async () => {
      const admin = await signedIn('admin');
      const member = await signedIn('member', admin);
      expect((await call(app, 'POST', '/api/keys', { key: admin.secret, body: { name: 'k' } })).status).toBe(403);
      const byMember = await call(app, 'POST', '/api/keys', { body: { name: 'k' }, ...as(member) });
      expect(byMember.status).toBe(403);
      expect(byMember.body.error).toContain('Only an admin');
      const created = await call(app, 'POST', '/api/keys', { body: { name: 'From the console' }, ...as(admin) });
      expect(created.status).toBe(201);
      const { id, secret } = created.body.data;
      expect(secret).toMatch(/^rvk_[0-9A-Za-z]{40}$/);
      expect(created.body.data).toMatchObject({ name: 'From the console', status: 'active', created_by: `user:${admin.user.id}` });
      expect((await call(app, 'GET', '/api/me', { key: secret })).status).toBe(200);
      const revoked = await call(app, 'DELETE', `/api/keys/${id}`, as(admin));
      expect(revoked.status).toBe(200);
      expect(revoked.body.data.status).toBe('revoked');
      expect((await call(app, 'GET', '/api/me', { key: secret })).status).toBe(401);
      const trail = await database.db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.orgId, admin.org.id), eq(auditLog.targetId, id)));
      expect(trail.map((e) => [e.action, e.actor]).sort()).toEqual([
        ['key.created', `user:${admin.user.id}`],
        ['key.revoked', `user:${admin.user.id}`],
      ]);
    });

    test('users: an admin invites (the link once), lists, changes a role and disables (their sessions end)', async () => {
      const admin = await signedIn('admin');
      const email = `${uniqueName('new')}@Example.com`;
      const invited = await call(app, 'POST', '/api/users', { body: { email, name: 'Ana', role: 'member' }, ...as(admin) });
      expect(invited.status).toBe(201);
      expect(invited.body.data.user).toMatchObject({ email: email.toLowerCase(), name: 'Ana', role: 'member', status: 'invited' });
      expect(invited.body.data.sign_in_link).toMatch(/^http:\/\/localhost\/sign-in\/accept#token=[0-9A-Za-z]{43}$/);
      const duplicate = await call(app, 'POST', '/api/users', { body: { email: email.toUpperCase(), role: 'member' }, ...as(admin) });
      expect(duplicate.status).toBe(409);
      const token = invited.body.data.sign_in_link.split('#token=')[1];
      const accepted = await call(app, 'POST', '/api/auth/accept', { body: { token, password: PASSWORD } });
      const anaCookie = accepted.headers.get('set-cookie')!.split(';')[0]!;
      const id = invited.body.data.user.id;
      const list = await call(app, 'GET', '/api/users', as(admin));
      expect(list.body.data.map((u: { id: string; status: string }) => [u.id, u.status])).toEqual([
        [admin.user.id, 'active'],
        [id, 'active'],
      ]);
      const promoted = await call(app, 'PATCH', `/api/users/${id}`, { body: { role: 'admin' }, ...as(admin) });
      expect(promoted.body.data.role).toBe('admin');
      const disabled = await call(app, 'PATCH', `/api/users/${id}`, { body: { disabled: true }, ...as(admin) });
      expect(disabled.body.data).toMatchObject({ status: 'disabled', disabled_at: expect.any(String) });
      expect((await call(app, 'GET', '/api/me', { headers: { cookie: anaCookie } })).status).toBe(401);
      const signIn = await call(app, 'POST', '/api/auth/sign-in', { body: { email, password: PASSWORD } });
      expect(signIn.status).toBe(401);
      const trail = await database.db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.orgId, admin.org.id), eq(auditLog.targetId, id)));
      expect(trail.map((e) => e.action).sort()).toEqual(['user.created', 'user.disabled', 'user.role_changed', 'user.signed_in']);
    });

    test('users: an admin sends a fresh link (a forgotten password); the new password replaces the old', async () => {
      const admin = await signedIn('admin');
      const member = await signedIn('member', admin);
      expect((await call(app, 'POST', `/api/users/${member.user.id}/link`, as(member))).status).toBe(403);
      const fresh = await call(app, 'POST', `/api/users/${member.user.id}/link`, as(admin));
      expect(fresh.status).toBe(201);
      const token = fresh.body.data.sign_in_link.split('#token=')[1];
      expect((await call(app, 'POST', '/api/auth/accept', { body: { token, password: 'a brand new password' } })).status).toBe(200);
      expect((await call(app, 'GET', '/api/me', { headers: { cookie: member.cookie } })).status).toBe(401); // the old password's sessions end
      expect((await call(app, 'POST', '/api/auth/sign-in', { body: { email: member.user.email, password: PASSWORD } })).status).toBe(401);
      expect(
        (await call(app, 'POST', '/api/auth/sign-in', { body: { email: member.user.email, password: 'a brand new password' } })).status,
      ).toBe(200);
    });

    test('users: the last active admin cannot be demoted or disabled (409)', async () => {
      const admin = await signedIn('admin');
      const demote = await call(app, 'PATCH', `/api/users/${admin.user.id}`, { body: { role: 'member' }, ...as(admin) });
      expect(demote.status).toBe(409);
      expect(demote.body.error).toContain('last active admin');
      expect((await call(app, 'PATCH', `/api/users/${admin.user.id}`, { body: { disabled: true }, ...as(admin) })).status).toBe(409);
    });

    test('users: a key and a member cannot list or invite', async () => {
      const admin = await signedIn('admin');
      const member = await signedIn('member', admin);
      expect((await call(app, 'GET', '/api/users', { key: admin.secret })).status).toBe(403);
      expect((await call(app, 'GET', '/api/users', as(member))).status).toBe(403);
      expect((await call(app, 'POST', '/api/users', { body: { email: 'x@example.com', role: 'admin' }, ...as(member) })).status).toBe(403);
    });

    test("another organisation's users and keys are not found", async () => {
      const mine = await signedIn('admin');
      const theirs = await signedIn('admin');
      const theirKey = (await call(app, 'GET', '/api/keys', { key: theirs.secret })).body.data[0].id;
      expect((await call(app, 'PATCH', `/api/users/${theirs.user.id}`, { body: { role: 'member' }, ...as(mine) })).status).toBe(404);
      expect((await call(app, 'DELETE', `/api/keys/${theirKey}`, as(mine))).status).toBe(404);
      expect((await call(app, 'GET', '/api/me', { key: theirs.secret })).status).toBe(200);
      const list = await call(app, 'GET', '/api/users', as(mine));
      expect(list.body.data.map((u: { id: string }) => u.id)).toEqual([mine.user.id]);
    });

    test("under an https PUBLIC_URL the cookie is Secure, the Origin must be PUBLIC_URL's, and links point there", async () => {
      const publicUrl = 'https://console.example.com';
      const secure = buildApp(database, { config: configFor({ publicUrl }) }).app;
      const { org } = await createOrgWithKey(database);
      const { link } = await invite(org.id);
      const accepted = await call(secure, 'POST', '/api/auth/accept', {
        body: { token: link.token, password: PASSWORD },
        headers: { origin: publicUrl },
      });
      expect(accepted.headers.get('set-cookie')).toEndWith('; Secure');
      const cookie = accepted.headers.get('set-cookie')!.split(';')[0]!;
      const csrf = accepted.body.data.csrf_token;
      const local = await call(secure, 'POST', '/api/users', {
        body: { email: 'a@example.com', role: 'member' },
        headers: { cookie, 'x-csrf-token': csrf, origin: ORIGIN },
      });
      expect(local.status).toBe(403);
      const invited = await call(secure, 'POST', '/api/users', {
        body: { email: 'a@example.com', role: 'member' },
        headers: { cookie, 'x-csrf-token': csrf, origin: publicUrl },
      });
      expect(invited.status).toBe(201);
      expect(invited.body.data.sign_in_link).toStartWith(`${publicUrl}/sign-in/accept#token=`);
    });
  });
}

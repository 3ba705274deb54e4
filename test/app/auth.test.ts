// Bearer authentication: who gets in, who gets a 401 (always with WWW-Authenticate), and that an
// organisation's key never reaches another organisation's records.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { apiKeys, auditLog } from '../../src/db/schema/index.ts';
import { KEY_CACHE_TTL_MS } from '../../src/modules/keys/service.ts';

function expect401(result: Awaited<ReturnType<typeof call>>, message: RegExp) {
  expect(result.status).toBe(401);
  expect(result.headers.get('www-authenticate')).toStartWith('Bearer');
  expect(result.body).toMatchObject({ success: false, data: null });
  expect(result.body.error).toMatch(message);
  expect(result.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
}

for (const backend of BACKENDS) {
  describe(`authentication (${backend})`, () => {
    let database: TestDatabase;
    let built: ReturnType<typeof buildApp>;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      built = buildApp(database);
    });
    afterAll(() => database.dispose());

    test('no key, malformed key, unknown key: 401', async () => {
      expect401(await call(built.app, 'GET', '/api/me'), /Missing API key/);
      expect401(await call(built.app, 'GET', '/api/me', { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), /Malformed API key/);
      expect401(await call(built.app, 'GET', '/api/me', { key: 'not-a-key' }), /Malformed API key/);
      expect401(await call(built.app, 'GET', '/api/me', { key: `rvk_${'A'.repeat(40)}` }), /Invalid API key/);
      // a 401 under /api even for a route that does not exist: nothing is revealed without a key
      expect401(await call(built.app, 'GET', '/api/customers'), /Missing API key/);
    });

    test('the key is never accepted in the URL', async () => {
      const { secret } = await createOrgWithKey(database);
      expect401(await call(built.app, 'GET', `/api/me?access_token=${secret}`), /not accepted in the URL/);
      expect401(await call(built.app, 'GET', `/api/me?access_token=${secret}`, { key: secret }), /not accepted in the URL/);
    });

    test('a valid key identifies its organisation and key; last use is recorded', async () => {
      const { org, key, secret } = await createOrgWithKey(database, { plan: 'growth_agents' });
      const result = await call(built.app, 'GET', '/api/me', { key: secret });
      expect(result.status).toBe(200);
      expect(result.body.data.org).toEqual({ id: org.id, name: org.name, plan: 'growth_agents' });
      expect(result.body.data.key).toEqual({ id: key.id, name: 'test key', prefix: secret.slice(0, 12), expires_at: null });
      expect(result.body.data.rate_limit.minute).toMatchObject({ limit: 60, remaining: 59 });
      expect(result.body.data.rate_limit.day).toMatchObject({ limit: 10_000, remaining: 9_999 });
      const deadline = Date.now() + 5_000;
      let lastUsed: Date | null = null;
      while (!lastUsed && Date.now() < deadline) {
        [{ lastUsedAt: lastUsed }] = (await database.db.select({ lastUsedAt: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.id, key.id))) as [{ lastUsedAt: Date | null }];
        if (!lastUsed) await Bun.sleep(20);
      }
      expect(lastUsed).toBeInstanceOf(Date);
    });

    test('keys are stored hashed, never in plain text', async () => {
      const { key, secret } = await createOrgWithKey(database);
      const [row] = await database.db.select().from(apiKeys).where(eq(apiKeys.id, key.id));
      expect(row!.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row!.hash).toBe(new Bun.CryptoHasher('sha256').update(secret).digest('hex'));
      expect(JSON.stringify(row)).not.toContain(secret);
      expect(secret).toMatch(/^rvk_[0-9A-Za-z]{40}$/);
    });

    test('an expired key: 401', async () => {
      const { key, secret } = await createOrgWithKey(database);
      await database.db.update(apiKeys).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(apiKeys.id, key.id));
      const fresh = buildApp(database).app; // no cached lookup
      expect401(await call(fresh, 'GET', '/api/me', { key: secret }), /expired/);
    });

    test('revoked through the API: 401 at once, and audited', async () => {
      const { org, key, secret } = await createOrgWithKey(database);
      const second = await call(built.app, 'POST', '/api/keys', { key: secret, body: { name: 'rotation' } });
      expect(second.status).toBe(201);
      const revoke = await call(built.app, 'DELETE', `/api/keys/${key.id}`, { key: second.body.data.secret });
      expect(revoke.status).toBe(200);
      expect(revoke.body.data).toMatchObject({ id: key.id, status: 'revoked' });
      expect401(await call(built.app, 'GET', '/api/me', { key: secret }), /revoked/);
      const trail = await database.db.select().from(auditLog).where(eq(auditLog.orgId, org.id));
      expect(trail.map((e) => e.action).sort()).toEqual(['key.created', 'key.created', 'key.revoked', 'org.created']);
      expect(trail.find((e) => e.action === 'key.revoked')).toMatchObject({ actor: `key:${second.body.data.id}`, targetId: key.id });
    });

    test('revoked elsewhere (another process, the CLI): 401 within the cache lifetime', async () => {
      const { key, secret } = await createOrgWithKey(database);
      expect((await call(built.app, 'GET', '/api/me', { key: secret })).status).toBe(200);
      await database.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, key.id));
      const revokedAt = Date.now();
      let status = 200;
      while (status === 200 && Date.now() - revokedAt < 5_000) {
        status = (await call(built.app, 'GET', '/api/me', { key: secret })).status;
        if (status === 200) await Bun.sleep(50);
      }
      expect(status).toBe(401);
      expect(Date.now() - revokedAt).toBeLessThan(KEY_CACHE_TTL_MS + 1_000);
    });

    test("another organisation's key sees and touches none of this organisation's keys", async () => {
      const mine = await createOrgWithKey(database);
      const theirs = await createOrgWithKey(database);
      const list = await call(built.app, 'GET', '/api/keys', { key: theirs.secret });
      expect(list.status).toBe(200);
      expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([theirs.key.id]);
      expect(JSON.stringify(list.body)).not.toContain('hash');
      const revoke = await call(built.app, 'DELETE', `/api/keys/${mine.key.id}`, { key: theirs.secret });
      expect(revoke.status).toBe(404);
      expect(revoke.body.error).toContain(mine.key.id);
      expect((await call(built.app, 'GET', '/api/me', { key: mine.secret })).status).toBe(200);
    });

    test('a new key is shown once and works at once; the audit log cannot be rewritten', async () => {
      const { secret } = await createOrgWithKey(database);
      const created = await call(built.app, 'POST', '/api/keys', { key: secret, body: { name: 'ci', expires_at: new Date(Date.now() + 86_400_000).toISOString() } });
      expect(created.status).toBe(201);
      expect(created.body.data.secret).toMatch(/^rvk_/);
      const list = await call(built.app, 'GET', '/api/keys', { key: secret });
      expect(JSON.stringify(list.body)).not.toContain(created.body.data.secret);
      expect((await call(built.app, 'GET', '/api/me', { key: created.body.data.secret })).status).toBe(200);
      const past = await call(built.app, 'POST', '/api/keys', { key: secret, body: { name: 'old', expires_at: '2001-01-01T00:00:00Z' } });
      expect(past.status).toBe(400);
      expect(past.body.error).toContain('expires_at');
      // drizzle wraps the database's error; the trigger's message is its cause
      const refusal = (error: { message: string; cause?: { message: string } }) => error.cause?.message ?? error.message;
      const update = await database.db.update(auditLog).set({ actor: 'someone else' }).then(() => null, refusal);
      expect(update).toContain('audit_log is append-only (UPDATE refused)');
      const deletion = await database.db.delete(auditLog).then(() => null, refusal);
      expect(deletion).toContain('audit_log is append-only (DELETE refused)');
    });
  });
}

// Bearer authentication: who gets in, who gets a 401 (always with WWW-Authenticate), and that an
// organisation's key never reaches another organisation's records.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { apiKeys, auditLog } from '../../src/db/schema/index.ts';
import { KEY_CACHE_TTL_MS } from '../../src/modules/keys/service.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { adminUnits } from '../../src/admin/cli-units.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

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
        [{ lastUsedAt: lastUsed }] = (await database.db
          .select({ lastUsedAt: apiKeys.lastUsedAt })
          .from(apiKeys)
          .where(eq(apiKeys.id, key.id))) as [{ lastUsedAt: Date | null }];
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
      await database.db
        .update(apiKeys)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(apiKeys.id, key.id));
      const fresh = buildApp(database).app; // no cached lookup
      expect401(await call(fresh, 'GET', '/api/me', { key: secret }), /expired/);
    });

    test('revoked by the operator in this process (the CLI through the admin socket): 401 at once, and audited', async () => {
      const { org, key, secret } = await createOrgWithKey(database);
      expect((await call(built.app, 'GET', '/api/me', { key: secret })).status).toBe(200);
      const admin = localRunner(database.db, adminUnits, DEFAULT_SETTINGS);
      const { alreadyRevoked } = await admin.run('keys.revoke', { keyId: key.id, actor: 'cli:ops' });
      expect(alreadyRevoked).toBe(false);
      built.authenticator.invalidate(); // what the admin socket does after a unit that changes access
      expect401(await call(built.app, 'GET', '/api/me', { key: secret }), /revoked/);
      expect((await admin.run('keys.revoke', { keyId: key.id, actor: 'cli:ops' })).alreadyRevoked).toBe(true);
      const trail = await database.db.select().from(auditLog).where(eq(auditLog.orgId, org.id));
      expect(trail.map((e) => e.action).sort()).toEqual(['key.created', 'key.revoked', 'org.created']);
      expect(trail.find((e) => e.action === 'key.revoked')).toMatchObject({ actor: 'cli:ops', targetId: key.id });
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

    test("another organisation's key sees none of this organisation's keys", async () => {
      const mine = await createOrgWithKey(database);
      const theirs = await createOrgWithKey(database);
      const list = await call(built.app, 'GET', '/api/keys', { key: theirs.secret });
      expect(list.status).toBe(200);
      expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([theirs.key.id]);
      expect(JSON.stringify(list.body)).not.toContain('hash');
      const me = await call(built.app, 'GET', '/api/me', { key: theirs.secret });
      expect(me.body.data.org.id).toBe(theirs.org.id);
      expect(JSON.stringify(me.body)).not.toContain(mine.org.id);
    });

    test('keys cannot be created or revoked with an API key: a leaked key cannot mint replacements', async () => {
      const { key, secret } = await createOrgWithKey(database);
      const create = await call(built.app, 'POST', '/api/keys', { key: secret, body: { name: 'mine now' } });
      expect(create.status).toBe(403);
      expect(create.body.error).toContain('keys are made by people: sign in to the console');
      const revoke = await call(built.app, 'DELETE', `/api/keys/${key.id}`, { key: secret });
      expect(revoke.status).toBe(403);
      expect((await call(built.app, 'GET', '/api/keys', { key: secret })).body.data).toHaveLength(1);
    });

    test('a new key works at once; the audit log cannot be rewritten', async () => {
      const { org, secret } = await createOrgWithKey(database);
      expect((await call(built.app, 'GET', '/api/me', { key: secret })).status).toBe(200);
      const { plaintext } = await localRunner(database.db, adminUnits, DEFAULT_SETTINGS).run('keys.create', {
        org: org.id,
        name: 'second',
        expiresAt: null,
        actor: 'cli:ops',
      });
      expect((await call(built.app, 'GET', '/api/me', { key: plaintext })).status).toBe(200);
      // drizzle wraps the database's error; the trigger's message is its cause
      const refusal = (error: { message: string; cause?: { message: string } }) => error.cause?.message ?? error.message;
      const update = await database.db
        .update(auditLog)
        .set({ actor: 'someone else' })
        .then(() => null, refusal);
      expect(update).toContain('audit_log is append-only (UPDATE refused)');
      const deletion = await database.db.delete(auditLog).then(() => null, refusal);
      expect(deletion).toContain('audit_log is append-only (DELETE refused)');
      const truncation = await database.db.execute(sql`truncate audit_log`).then(() => null, refusal);
      expect(truncation).toContain('audit_log is append-only (TRUNCATE refused)');
    });
  });
}

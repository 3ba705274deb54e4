// Every answer is the envelope with the status code of docs/api.md "Envelope", a request id and the
// rate-limit headers — whatever went wrong.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { ECHO_PATH } from '../helpers/fixture-routes.ts';
import { DatabaseTimeoutError, connectPostgres } from '../../src/db/client.ts';
import { createLogger } from '../../src/lib/log.ts';
import { hashKey } from '../../src/modules/keys/service.ts';
import type { Authenticator } from '../../src/modules/keys/service.ts';

function expectEnvelopeError(result: Awaited<ReturnType<typeof call>>, status: number, message: RegExp) {
  expect(result.status).toBe(status);
  expect(result.headers.get('content-type')).toStartWith('application/json');
  expect(result.body).toMatchObject({ success: false, data: null });
  expect(result.body.error).toMatch(message);
  expect(result.headers.get('x-request-id')).toBeTruthy();
  expect(result.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
  expect(result.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  expect(result.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
}

for (const backend of BACKENDS) {
  describe(`envelope and status codes (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      key = (await createOrgWithKey(database)).secret;
    });
    afterAll(() => database.dispose());

    test('success is the envelope with data', async () => {
      const result = await call(app, 'GET', '/api/me', { key });
      expect(result.status).toBe(200);
      expect(result.body).toMatchObject({ success: true, error: null });
      expect(result.body.data.org.plan).toBe('enterprise');
    });

    test('unknown route: 404, with or without a key', async () => {
      expectEnvelopeError(await call(app, 'GET', '/api/nothing-here', { key }), 404, /not found/);
      expectEnvelopeError(await call(app, 'GET', '/nothing-here'), 404, /not found/);
    });

    test('wrong method: 405 with Allow', async () => {
      const result = await call(app, 'PUT', '/api/me', { key, body: {} });
      expectEnvelopeError(result, 405, /PUT is not allowed/);
      expect(result.headers.get('allow')).toBe('GET');
      const keys = await call(app, 'DELETE', '/api/keys', { key });
      expect(keys.status).toBe(405);
      expect(keys.headers.get('allow')).toBe('GET, POST');
    });

    test('malformed JSON: 400', async () => {
      expectEnvelopeError(
        await call(app, 'POST', ECHO_PATH, { key, rawBody: '{"name": ', headers: { 'content-type': 'application/json' } }),
        400,
        /Malformed JSON/,
      );
    });

    test('validation: 400 naming the field, never the default dump', async () => {
      const missing = await call(app, 'POST', ECHO_PATH, { key, body: { nmae: 'typo' } });
      expectEnvelopeError(missing, 400, /"(name|nmae)"/);
      expect(missing.text).not.toContain('"type":"validation"');
      const unknown = await call(app, 'POST', ECHO_PATH, { key, body: { name: 'x', expire_at: '2030-01-01T00:00:00Z' } });
      expectEnvelopeError(unknown, 400, /"expire_at"/); // a misspelt field is refused, never silently dropped
      const wrongType = await call(app, 'POST', ECHO_PATH, { key, body: { name: 'x', expires_at: 'tomorrow' } });
      expectEnvelopeError(wrongType, 400, /"expires_at"/);
      const echoed = await call(app, 'POST', ECHO_PATH, { key, body: { name: 'x' } });
      expect(echoed.status).toBe(200);
      expect(echoed.body.data).toEqual({ name: 'x' });
    });

    test('body over 1 MiB: 413, declared or streamed', async () => {
      const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
      expectEnvelopeError(
        await call(app, 'POST', ECHO_PATH, {
          key,
          rawBody: big,
          headers: { 'content-type': 'application/json', 'content-length': String(big.length) },
        }),
        413,
        /larger than the limit of 1048576 bytes/,
      );
      const chunks = new ReadableStream({
        start(controller) {
          for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(64 * 1024)));
          controller.close();
        },
      });
      expectEnvelopeError(
        await call(app, 'POST', ECHO_PATH, { key, rawBody: chunks, headers: { 'content-type': 'application/json' } }),
        413,
        /larger than the limit/,
      );
    });

    test('wrong content type: 415', async () => {
      expectEnvelopeError(
        await call(app, 'POST', ECHO_PATH, { key, rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
        415,
        /Content-Type must be application\/json/,
      );
      expectEnvelopeError(
        await call(app, 'POST', ECHO_PATH, { key, rawBody: '{"name":"x"}', headers: { 'content-type': 'text/plain' } }),
        415,
        /text\/plain/,
      );
    });

    test('internal error: 500 without internals; database down: 503 with Retry-After; a deadlock: 503, send it again', async () => {
      const broken = (error: Error): Authenticator => ({
        authenticate: async () => {
          throw error;
        },
        invalidate: () => {},
      });
      const secretish = new Error('relation "api_keys" does not exist at /srv/app/src/secret.ts:12');
      const internal = await call(buildApp(database, { authenticator: broken(secretish) }).app, 'GET', '/api/me', { key });
      expectEnvelopeError(internal, 500, /^Internal server error \(request req_/);
      expect(internal.text).not.toContain('api_keys');
      expect(internal.text).not.toContain('secret.ts');

      const down = await call(buildApp(database, { authenticator: broken(new DatabaseTimeoutError(1000)) }).app, 'GET', '/api/me', { key });
      expectEnvelopeError(down, 503, /Database unavailable/);
      expect(down.headers.get('retry-after')).toBe('5');

      // PostgreSQL rolled the transaction back: nothing was written, and the client may resend.
      const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
      const busy = await call(
        buildApp(database, { authenticator: broken(new Error('Failed query', { cause: deadlock })) }).app,
        'GET',
        '/api/me',
        { key },
      );
      expectEnvelopeError(busy, 503, /lock conflict; nothing was written, send it again/);
      expect(busy.headers.get('retry-after')).toBe('1');
    });

    test('request id: generated, or echoed when the client sent a sane one', async () => {
      const generated = await call(app, 'GET', '/healthz');
      expect(generated.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
      const echoed = await call(app, 'GET', '/api/me', { key, headers: { 'x-request-id': 'client-trace-42' } });
      expect(echoed.headers.get('x-request-id')).toBe('client-trace-42');
      const hostile = await call(app, 'GET', '/api/me', { key, headers: { 'x-request-id': 'bad id\twith "quotes"' } });
      expect(hostile.headers.get('x-request-id')).toMatch(/^req_/);
    });

    test('healthz and readyz answer in the envelope', async () => {
      const health = await call(app, 'GET', '/healthz');
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ success: true, data: { status: 'alive' }, error: null });
      const ready = await call(app, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.data.status).toBe('ready');
      const notReady = await call(
        buildApp(database, { readiness: async () => [{ name: 'database', ok: false, detail: 'connection refused' }] }).app,
        'GET',
        '/readyz',
      );
      expect(notReady.status).toBe(503);
      expect(notReady.body).toMatchObject({ success: false, data: null });
      expect(notReady.body.error).toContain('database (connection refused)');
    });
  });
}

describe('database outage', () => {
  test('unreachable database: 503 with Retry-After; the log names the failure but not the query values', async () => {
    const lines: string[] = [];
    const unreachable = connectPostgres('postgres://postgres@127.0.0.1:1/nothing', 1);
    try {
      const { app } = buildApp(unreachable, { log: createLogger('error', {}, (line) => lines.push(line)) });
      const key = `rvk_${'B'.repeat(40)}`;
      const result = await call(app, 'GET', '/api/me', { key });
      expectEnvelopeError(result, 503, /Database unavailable/);
      expect(result.headers.get('retry-after')).toBe('5');
      expect(lines.length).toBe(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: 'database unavailable', code: 'ECONNREFUSED' });
      expect(lines[0]).not.toContain(hashKey(key));
      expect(lines[0]).not.toContain(key);
    } finally {
      await unreachable.close();
    }
  });
});

// One JSON line per request, with the request id, and no secret in it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { createLogger, redact } from '../../src/lib/log.ts';
import { ECHO_PATH } from '../helpers/fixture-routes.ts';

describe('request log', () => {
  let database: TestDatabase;
  const lines: string[] = [];
  let app: ReturnType<typeof buildApp>['app'];

  beforeAll(async () => {
    database = await openTestDatabase('embedded');
    app = buildApp(database, { log: createLogger('info', {}, (line) => lines.push(line)) }).app;
  });
  afterAll(() => database.dispose());

  test('one line per request: id, method, path, status, duration, caller', async () => {
    const { org, key, secret } = await createOrgWithKey(database);
    lines.length = 0;
    const result = await call(app, 'GET', '/api/me', { key: secret, headers: { 'x-request-id': 'trace-1' } });
    await Bun.sleep(10); // the line is written after the response
    expect(lines.length).toBe(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({
      level: 'info',
      msg: 'request',
      request_id: 'trace-1',
      method: 'GET',
      path: '/api/me',
      status: 200,
      org_id: org.id,
      key_id: key.id,
    });
    expect(typeof entry.duration_ms).toBe('number');
    expect(result.headers.get('x-request-id')).toBe('trace-1');
  });

  test('keys never reach the log, wherever the client put them', async () => {
    const { secret } = await createOrgWithKey(database);
    lines.length = 0;
    await call(app, 'GET', `/api/me?access_token=${secret}&limit=5`, { key: secret });
    await call(app, 'POST', ECHO_PATH, { key: secret, rawBody: `{"name": "${secret}"`, headers: { 'content-type': 'application/json' } });
    await Bun.sleep(10);
    expect(lines.length).toBe(2);
    for (const line of lines) expect(line).not.toContain(secret.slice(4));
    expect(JSON.parse(lines[0]!).path).toBe('/api/me?access_token=…&limit=…');
    expect(JSON.parse(lines[0]!).status).toBe(401);
  });

  test('redaction covers secret-named fields and key-shaped strings', () => {
    expect(redact({ authorization: 'Bearer x', nested: { webhook_secret: 's', note: 'key rvk_abcDEF123 leaked' } })).toEqual({
      authorization: '[REDACTED]',
      nested: { webhook_secret: '[REDACTED]', note: 'key rvk_[REDACTED] leaked' },
    });
  });
});

// GET /metrics (docs/operating.md "Metrics"): Prometheus's text format behind METRICS_TOKEN (a 404 without the
// setting, a 401 with a wrong token); requests counted by route template, method and status with
// their latency, rate-limit refusals by budget, webhook deliveries accepted and refused; the queues
// and outboxes read from the database at each scrape; nothing of an organisation's data in it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import {
  awayFromMinuteBoundary,
  BACKENDS,
  buildApp,
  call,
  createOrgWithKey,
  openTestDatabase,
  testConfig,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../helpers/harness.ts';
import { makeConnector } from '../helpers/tickets.ts';

const TOKEN = 'metrics-test-token-0123456789';

/** The value of a sample line `name{labels} value`, or null. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return null;
}

for (const backend of BACKENDS) {
  describe(`GET /metrics (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database.dispose());
    const configFor = (metricsToken: string | null) =>
      testConfig({ databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : null, metricsToken });

    test('404 without METRICS_TOKEN; 401 with a wrong or no token; the text format with it', async () => {
      expect(
        (
          await call(buildApp(database, { config: configFor(null) }).app, 'GET', '/metrics', {
            headers: { authorization: `Bearer ${TOKEN}` },
          })
        ).status,
      ).toBe(404);
      const { app } = buildApp(database, { config: configFor(TOKEN) });
      expect((await call(app, 'GET', '/metrics')).status).toBe(401);
      expect((await call(app, 'GET', '/metrics', { headers: { authorization: 'Bearer not-the-token-at-all' } })).status).toBe(401);
      const res = await app.handle(new Request('http://localhost/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      const text = await res.text();
      expect(text).toContain('# TYPE revintel_http_requests_total counter');
      expect(sample(text, 'revintel_database_up', { kind: backend })).toBe(1);
      expect(sample(text, 'revintel_database_size_bytes')).toBeGreaterThan(1_000_000);
      // On PostgreSQL the pool as the server sees it: the scrape's own query is an active one.
      if (backend === 'postgres') expect(sample(text, 'revintel_database_connections', { state: 'active' })).toBeGreaterThanOrEqual(1);
      else expect(text).not.toContain('revintel_database_connections');
    });

    test('the Grafana dashboard in docs/ plots only metrics a scrape has', async () => {
      const { app } = buildApp(database, { config: configFor(TOKEN) });
      const text = await (
        await app.handle(new Request('http://localhost/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
      ).text();
      const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
      const dashboard = readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8');
      const plotted = new Set([...dashboard.matchAll(/revintel_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, '')));
      // The connections gauge is PostgreSQL's alone.
      const missing = [...plotted].filter(
        (name) => !exported.has(name) && !(backend === 'embedded' && name === 'revintel_database_connections'),
      );
      expect(plotted.size).toBeGreaterThan(10);
      expect(missing).toEqual([]);
    });

    test('memory figures are what their names say: the heap within its size and the resident set, buffers as external', async () => {
      // 128 MB of WebAssembly memory and buffers, as PGlite holds: outside the JavaScript heap.
      const held = [new WebAssembly.Memory({ initial: 1024 }), new Uint8Array(64 * 1024 * 1024).fill(1)];
      Bun.gc(true);
      const { app } = buildApp(database, { config: configFor(TOKEN) });
      const text = await (
        await app.handle(new Request('http://localhost/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
      ).text();
      const memory = (type: string) => sample(text, 'revintel_process_memory_bytes', { type }) ?? NaN;
      expect(memory('heap_used')).toBeGreaterThan(0);
      expect(memory('heap_used')).toBeLessThanOrEqual(memory('heap_total'));
      expect(memory('heap_used')).toBeLessThan(memory('rss'));
      expect(memory('external')).toBeGreaterThanOrEqual(128 * 1024 * 1024);
      expect(held.length).toBe(2);
    });

    test('requests by route template and status, latency, refusals by budget, webhook deliveries, queues from the database', async () => {
      const { app } = buildApp(database, { config: configFor(TOKEN) });
      const { org, secret: key } = await createOrgWithKey(database, { perMinute: 3 });
      await awayFromMinuteBoundary();
      const customer = await call(app, 'POST', '/api/customers', { key, body: { name: 'Acme', currency: 'EUR' } });
      await call(app, 'GET', `/api/customers/${customer.body.data.id}`, { key });
      await call(app, 'GET', '/api/customers/cus_missing', { key }); // 3rd of 3 this minute: a 404
      const refused = await call(app, 'GET', '/api/me', { key });
      expect(refused.status).toBe(429);
      const connector = await makeConnector(database, org.id);
      const accepted = await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, {
        rawBody: JSON.stringify({ ticket: { id: 'M-1', subject: 'Hello' } }),
        headers: { 'content-type': 'application/json' },
      });
      expect(accepted.status).toBe(200);
      const unknown = await call(app, 'POST', '/api/webhooks/tickets?connectorId=con_nope', {
        rawBody: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(unknown.status).toBe(404);

      const text = await (
        await app.handle(new Request('http://localhost/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
      ).text();
      expect(sample(text, 'revintel_http_requests_total', { route: '/api/customers', method: 'POST', status: '201' })).toBe(1);
      expect(sample(text, 'revintel_http_requests_total', { route: '/api/customers/:id', method: 'GET', status: '200' })).toBe(1);
      expect(sample(text, 'revintel_http_requests_total', { route: '/api/customers/:id', method: 'GET', status: '404' })).toBe(1);
      expect(sample(text, 'revintel_http_request_duration_seconds_count', { route: '/api/customers/:id', method: 'GET' })).toBe(2);
      expect(sample(text, 'revintel_rate_limit_refusals_total', { budget: 'organisation' })).toBe(1);
      expect(
        sample(text, 'revintel_webhook_deliveries_total', { route: '/api/webhooks/tickets', outcome: 'accepted', status: '200' }),
      ).toBe(1);
      expect(sample(text, 'revintel_webhook_deliveries_total', { route: '/api/webhooks/tickets', outcome: 'refused', status: '404' })).toBe(
        1,
      );
      // The delivery waits in the ticket queue (no worker here), and the scrape says so.
      expect(sample(text, 'revintel_ticket_events', { status: 'pending' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'revintel_ticket_queue_oldest_pending_seconds')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'revintel_process_memory_bytes', { type: 'rss' })).toBeGreaterThan(0);
      expect(text).not.toContain(customer.body.data.id);
      expect(text).not.toContain(key);
      // Paths carrying ids are counted under their template: no id becomes a label.
      expect(text).not.toContain('cus_missing');
    });
  });
}

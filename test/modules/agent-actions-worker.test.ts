// One action's whole life through the real worker thread, on both backends: proposed over the API,
// approved over the API, executed by the worker (task, note), and each step an outbound event the
// worker delivers, signed, to a real receiver — the worker signing with the SECRET_KEY `serve`
// hands it in its init message.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { newId } from '../../src/lib/ids.ts';
import type { Supervisor } from '../../src/jobs/supervisor.ts';
import { endpointAdminUnits } from '../../src/modules/agent-actions/endpoints.ts';
import { newEndpointSecret } from '../../src/modules/agent-actions/outbox.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../src/settings.ts';
import { waitFor } from '../helpers/binary.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { startTestWorker } from '../helpers/jobs.ts';

const SECRET_KEY = 'worker-test-secret-key-0123456789abcdefgh';

for (const backend of BACKENDS) {
  describe(`an action's life through the worker (${backend})`, () => {
    let database: TestDatabase;
    let supervisor: Supervisor;
    let app: ReturnType<typeof buildApp>['app'];
    const received: { type: string; actionId: string; status: string; valid: boolean }[] = [];
    const secret = newEndpointSecret();
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const body = await request.text();
        const id = request.headers.get('webhook-id')!;
        const timestamp = request.headers.get('webhook-timestamp')!;
        const expected = `v1,${createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
          .update(`${id}.${timestamp}.${body}`)
          .digest('base64')}`;
        const event = JSON.parse(body);
        received.push({
          type: event.type,
          actionId: event.data.action.id,
          status: event.data.action.status,
          valid: request.headers.get('webhook-signature') === expected,
        });
        return new Response('ok');
      },
    });
    const settings: Settings = {
      ...DEFAULT_SETTINGS,
      actions: { ...DEFAULT_ACTION_SETTINGS, secretKey: SECRET_KEY, allowPrivateEndpoints: true },
    };

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      supervisor = startTestWorker(database, backend, { heartbeatMs: 200, settings });
      app = buildApp(database, { wakeJobs: () => supervisor.wakeJobs() }).app;
    });
    afterAll(async () => {
      await supervisor.stop();
      await database.dispose();
      server.stop(true);
    });

    test('proposed, approved, executed by the worker; every step delivered signed to the endpoint', async () => {
      const { org, secret: key } = await createOrgWithKey(database);
      const endpointId = newId('whe');
      await database.db.transaction((tx) =>
        endpointAdminUnits['endpoints.add'](
          tx as never,
          {
            id: endpointId,
            org: org.id,
            url: `http://127.0.0.1:${server.port}/in`,
            events: null,
            secretSealed: sealSecret(secret, SECRET_KEY, endpointId),
            actor: 'test',
          },
          settings,
        ),
      );
      const customer = (
        await call(app, 'POST', '/api/customers', {
          key,
          body: { name: 'Acme', currency: 'EUR', csm: { name: 'Ana', email: 'ana@vendor.example' } },
        })
      ).body.data;
      const proposed = await call(app, 'POST', '/api/agent-actions', {
        key,
        body: { customer_id: customer.id, type: 'check_in', params: { channel: 'meeting', due_in_days: 3 } },
      });
      expect(proposed.status).toBe(201);
      const id = proposed.body.data.id;
      expect((await call(app, 'POST', `/api/agent-actions/${id}/approve`, { key })).status).toBe(200);
      const executed = await waitFor(async () => {
        const action = (await call(app, 'GET', `/api/agent-actions/${id}`, { key })).body.data;
        return action.status === 'executed' && action;
      }, 20_000);
      expect(executed.events.map((e: any) => e.kind)).toEqual(['proposed', 'routed', 'approved', 'executed']);
      const tasks = (await call(app, 'GET', `/api/tasks?customer_id=${customer.id}`, { key })).body.data;
      expect(tasks).toHaveLength(1);
      expect(tasks[0].title).toBe('Check in with Acme (meeting)');
      const all = await waitFor(
        async () => received.filter((r) => r.actionId === id).length >= 3 && received.filter((r) => r.actionId === id),
        20_000,
      );
      expect(all.map((r) => r.type).sort()).toEqual(['agent_action.approved', 'agent_action.executed', 'agent_action.proposed']);
      expect(all.every((r) => r.valid)).toBe(true);
      expect(all.find((r) => r.type === 'agent_action.executed')!.status).toBe('executed');
      // Each delivery is recorded once its answer came back.
      const deliveries = await waitFor(async () => {
        const rows = (await call(app, 'GET', '/api/events/deliveries?status=delivered', { key })).body.data;
        return rows.length === 3 && rows;
      }, 20_000);
      expect(deliveries.every((d: any) => d.attempts === 1 && d.last_status === 200)).toBe(true);
    });
  });
}

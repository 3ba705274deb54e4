// Agent actions on both backends (docs/agent-actions.md): CSMs made from customers' csm e-mails,
// proposing (201, 200 deduplicated with trigger_count, Idempotency-Key, 409 cool-down unless force,
// 422 churned, 400 naming the field), routing and its notification rows, the guarded decisions (a
// racing approve and reject give exactly one outcome), execution (task, note, outbound event),
// expiry and snooze wake-up, the rules' GET/PUT, and another organisation seeing nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { ActionDetail, Csm, Note, ProposedAction, RuleView, Task } from '../../src/modules/agent-actions/model.ts';
import { queryText } from '../../src/db/client.ts';
import { executeActionJob } from '../../src/modules/agent-actions/execute-job.ts';
import { expireActions, wakeSnoozedActions } from '../../src/modules/agent-actions/service.ts';
import { newId } from '../../src/lib/ids.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, insertRow, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { drainJobs } from '../helpers/jobs.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';

for (const backend of BACKENDS) {
  describe(`agent actions (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;
    let otherKey: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await createOrgWithKey(database);
      key = made.secret;
      orgId = made.org.id;
      otherKey = (await createOrgWithKey(database)).secret;
    });
    afterAll(() => database?.dispose());

    const post = (path: string, body?: unknown, headers: Record<string, string> = {}) => call(app, 'POST', path, { key, body, headers });
    const get = (path: string, k = key) => call(app, 'GET', path, { key: k });

    async function customer(fields: Record<string, unknown> = {}): Promise<string> {
      const res = await post('/api/customers', { name: `Customer ${newId('cus').slice(4, 10)}`, currency: 'EUR', ...fields });
      expect(res.status).toBe(201);
      return res.body.data.id;
    }

    const checkIn = (customerId: string, extra: Record<string, unknown> = {}) => ({
      customer_id: customerId,
      type: 'check_in',
      params: { channel: 'call', due_in_days: 5 },
      ...extra,
    });

    test("a customer's csm e-mail makes its CSM once, whoever writes the customer", async () => {
      const email = `ana.${newId('csm').slice(4, 12).toLowerCase()}@vendor.example`;
      await customer({ csm: { name: 'Ana', email, phone: '+4915112345678', slack_user_id: 'U024BE7LH' } });
      await customer({ csm: { name: 'Ana B.', email: email.toUpperCase() } });
      await insertRow(database.db, 'customers', {
        id: newId('cus'),
        org_id: orgId,
        name: 'Plain SQL',
        currency: 'EUR',
        csm: JSON.stringify({ email, name: null, phone: null, slack_user_id: null }),
      });
      const list = await get('/api/csms?limit=200');
      expect(list.status).toBe(200);
      const mine = list.body.data.filter((c: any) => c.email === email);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        name: 'Ana',
        role: 'csm',
        channels: [],
        active: true,
        phone: '+4915112345678',
        slack_user_id: 'U024BE7LH',
      });
      expect(mine[0].id).toMatch(/^csm_/);
      expect(Value.Check(Csm, mine[0])).toBe(true);
      const other = await get('/api/csms?limit=200', otherKey);
      expect(other.body.data.some((c: any) => c.email === email)).toBe(false);
    });

    test('POST /api/csms and PATCH set role and channels; a taken e-mail is a 409 naming the field', async () => {
      const email = `bo.${newId('csm').slice(4, 12).toLowerCase()}@vendor.example`;
      const created = await post('/api/csms', { email, name: 'Bo', role: 'manager' });
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({ email, role: 'manager', channels: [] });
      const again = await post('/api/csms', { email: email.toUpperCase() });
      expect(again.status).toBe(409);
      expect(again.body.error).toContain('"email"');
      const patched = await call(app, 'PATCH', `/api/csms/${created.body.data.id}`, {
        key,
        body: { channels: ['slack', 'whatsapp'], phone: '+14155550100' },
      });
      expect(patched.status).toBe(200);
      expect(patched.body.data.channels).toEqual(['slack', 'whatsapp']);
      const bad = await call(app, 'PATCH', `/api/csms/${created.body.data.id}`, { key, body: { channels: ['fax'] } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toContain('channels');
      const foreign = await call(app, 'PATCH', `/api/csms/${created.body.data.id}`, { key: otherKey, body: { active: false } });
      expect(foreign.status).toBe(404);
      // Managers get the actions of customers without a CSM from now on: leave none with channels.
      await call(app, 'PATCH', `/api/csms/${created.body.data.id}`, { key, body: { active: false } });
    });

    test('proposing: 201, then 200 deduplicated with trigger_count 2; an Idempotency-Key replays without counting', async () => {
      const id = await customer({ name: 'Proposed For Ltd' });
      const first = await post('/api/agent-actions', checkIn(id), { 'idempotency-key': `k-${id}` });
      expect(first.status).toBe(201);
      expect(first.body.data).toMatchObject({
        customer_id: id,
        customer_name: 'Proposed For Ltd',
        type: 'check_in',
        status: 'pending_approval',
        reason: 'manual',
        trigger_count: 1,
        deduplicated: false,
      });
      expect(first.body.data.routing.to).toBe('inbox');
      expect(first.body.data.id).toMatch(/^act_/);
      expect(Value.Check(ProposedAction, first.body.data)).toBe(true);
      expect(Date.parse(first.body.data.expires_at) - Date.parse(first.body.data.created_at)).toBe(72 * 3600 * 1000);
      const replay = await post('/api/agent-actions', checkIn(id), { 'idempotency-key': `k-${id}` });
      expect(replay.status).toBe(201);
      expect(replay.body).toEqual(first.body);
      const second = await post('/api/agent-actions', checkIn(id, { params: { channel: 'email', due_in_days: 2 } }));
      expect(second.status).toBe(200);
      expect(second.body.data).toMatchObject({ id: first.body.data.id, deduplicated: true, trigger_count: 2 });
      const events = await queryText<{ type: string }>(
        database.db,
        `select type from outbound_events where org_id = $1 and data->'action'->>'id' = $2`,
        [orgId, first.body.data.id],
      );
      expect(events.map((e) => e.type)).toEqual(['agent_action.proposed']);
    });

    test('bad input is a 400 naming the field; a churned or unknown customer a 422', async () => {
      const id = await customer();
      const percent = await post('/api/agent-actions', { customer_id: id, type: 'discount_offer', params: { percent: 80, months: 3 } });
      expect(percent.status).toBe(400);
      expect(percent.body.error).toContain('"params.percent"');
      const missing = await post('/api/agent-actions', { customer_id: id, type: 'escalation', params: { to: 'manager' } });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toContain('"params.note"');
      const type = await post('/api/agent-actions', { customer_id: id, type: 'hug', params: {} });
      expect(type.status).toBe(400);
      expect(type.body.error).toContain('"type"');
      const extra = await post('/api/agent-actions', { ...checkIn(id), colour: 'red' });
      expect(extra.status).toBe(400);
      expect(extra.body.error).toContain('colour');
      const churned = await customer({ status: 'churned' });
      const refused = await post('/api/agent-actions', checkIn(churned));
      expect(refused.status).toBe(422);
      expect(refused.body.success).toBe(false);
      const unknown = await post('/api/agent-actions', checkIn('cus_nobody'));
      expect(unknown.status).toBe(422);
      expect(unknown.body.error).toContain('customer_id');
      const foreign = await call(app, 'POST', '/api/agent-actions', { key: otherKey, body: checkIn(id) });
      expect(foreign.status).toBe(422);
    });

    test('a racing approve and reject: exactly one outcome, the other learns who decided and when', async () => {
      const id = await customer();
      const action = (await post('/api/agent-actions', checkIn(id))).body.data;
      const [a, b] = await Promise.all([
        post(`/api/agent-actions/${action.id}/approve`, { comment: 'go' }),
        post(`/api/agent-actions/${action.id}/reject`),
      ]);
      const statuses = [a.status, b.status].sort();
      expect(statuses).toEqual([200, 409]);
      const winner = a.status === 200 ? a : b;
      const loser = a.status === 200 ? b : a;
      expect(loser.body.error).toMatch(new RegExp(`already ${winner.body.data.status} by API key "test key" at \\d\\d:\\d\\d UTC`));
      const detail = await get(`/api/agent-actions/${action.id}`);
      expect(detail.body.data.status).toBe(winner.body.data.status);
      expect(detail.body.data.decided_by).toMatchObject({ kind: 'api_key' });
      expect(detail.body.data.events.filter((e: any) => e.kind === 'approved' || e.kind === 'rejected')).toHaveLength(1);
      const audit = await queryText<{ n: number }>(
        database.db,
        `select count(*)::int as n from audit_log where org_id = $1 and target_id = $2 and action = 'agent_action.decided'`,
        [orgId, action.id],
      );
      expect(audit[0]!.n).toBe(1);
    });

    test('an approved action is executed by its job: a task, a note, an outbound event, then executed', async () => {
      const email = `cy.${newId('csm').slice(4, 12).toLowerCase()}@vendor.example`;
      const id = await customer({ csm: { name: 'Cy', email } });
      const action = (await post('/api/agent-actions', { customer_id: id, type: 'renewal_call', params: { due_in_days: 4 } })).body.data;
      expect(action.csm_id).toMatch(/^csm_/);
      expect((await post(`/api/agent-actions/${action.id}/approve`)).status).toBe(200);
      await drainJobs(database.db, [executeActionJob]);
      const detail = (await get(`/api/agent-actions/${action.id}`)).body.data;
      expect(Value.Check(ActionDetail, detail)).toBe(true);
      expect(detail.status).toBe('executed');
      expect(detail.executed_at).not.toBeNull();
      const tasks = await get(`/api/tasks?customer_id=${id}`);
      expect(tasks.body.data).toHaveLength(1);
      expect(Value.Check(Task, tasks.body.data[0])).toBe(true);
      expect(tasks.body.data[0]).toMatchObject({ action_id: action.id, csm_id: action.csm_id, status: 'open' });
      expect(tasks.body.data[0].title).toContain('Renewal call');
      const notes = await get(`/api/customers/${id}/notes`);
      expect(notes.body.data).toHaveLength(1);
      expect(Value.Check(Note, notes.body.data[0])).toBe(true);
      expect(notes.body.data[0]).toMatchObject({ action_id: action.id, author: 'agent' });
      const types = await queryText<{ type: string }>(
        database.db,
        `select type from outbound_events where org_id = $1 and data->'action'->>'id' = $2 order by created_at, id`,
        [orgId, action.id],
      );
      expect(types.map((e) => e.type).sort()).toEqual(['agent_action.approved', 'agent_action.executed', 'agent_action.proposed']);
      // A second run of the job (delivered at least once) changes nothing.
      await queryText(
        database.db,
        `update jobs set state = 'queued', run_at = now() where kind = 'actions.execute' and payload->>'actionId' = $1`,
        [action.id],
      );
      await drainJobs(database.db, [executeActionJob]);
      expect((await get(`/api/tasks?customer_id=${id}`)).body.data).toHaveLength(1);
      const late = await post(`/api/agent-actions/${action.id}/cancel`);
      expect(late.status).toBe(409);
      expect(late.body.error).toContain('executed');
    });

    test('an execution that fails for good leaves the action failed with its error', async () => {
      const id = await customer();
      const action = (await post('/api/agent-actions', checkIn(id))).body.data;
      await post(`/api/agent-actions/${action.id}/approve`);
      const { localRunner } = await import('../../src/db/units-of-work.ts');
      const runner = localRunner(database.db, executeActionJob.units!, DEFAULT_SETTINGS);
      const attempt = executeActionJob.handle(
        { actionId: action.id },
        {
          job: { id: newId('job'), kind: executeActionJob.kind, orgId, attempts: 5 },
          settings: DEFAULT_SETTINGS,
          run: (unit, args) =>
            (unit === 'execute' ? Promise.reject(new Error('the task service refused')) : runner.run(unit, args as never)) as never,
        },
      );
      await expect(attempt).rejects.toThrow('the task service refused');
      const detail = (await get(`/api/agent-actions/${action.id}`)).body.data;
      expect(detail).toMatchObject({ status: 'failed', last_error: 'the task service refused' });
    });

    test('a rejection starts a cool-down: 409 unless force', async () => {
      const id = await customer();
      const action = (await post('/api/agent-actions', checkIn(id))).body.data;
      expect((await post(`/api/agent-actions/${action.id}/reject`, { comment: 'not now' })).status).toBe(200);
      const again = await post('/api/agent-actions', checkIn(id));
      expect(again.status).toBe(409);
      expect(again.body.error).toContain('cool-down');
      const forced = await post('/api/agent-actions', checkIn(id, { force: true }));
      expect(forced.status).toBe(201);
      expect(forced.body.data.id).not.toBe(action.id);
    });

    test('snooze wakes back to pending_approval; an undecided action expires, and a late approval learns it', async () => {
      const id = await customer();
      const action = (await post('/api/agent-actions', checkIn(id))).body.data;
      const bad = await post(`/api/agent-actions/${action.id}/snooze`, { days: 99 });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toContain('"days"');
      const snoozed = await post(`/api/agent-actions/${action.id}/snooze`, { days: 2 });
      expect(snoozed.body.data.status).toBe('snoozed');
      const inTwoDays = new Date(Date.parse(snoozed.body.data.snoozed_until) + 1000);
      await database.db.transaction((tx) => wakeSnoozedActions(tx as never, inTwoDays, undefined, DEFAULT_ACTION_SETTINGS));
      const woken = (await get(`/api/agent-actions/${action.id}`)).body.data;
      expect(woken.status).toBe('pending_approval');
      expect(Date.parse(woken.expires_at)).toBe(inTwoDays.getTime() + 72 * 3600 * 1000);
      await database.db.transaction((tx) => expireActions(tx as never, new Date(Date.parse(woken.expires_at) + 1000)));
      const late = await post(`/api/agent-actions/${action.id}/approve`);
      expect(late.status).toBe(409);
      expect(late.body.error).toMatch(/already expired at \d\d:\d\d UTC/);
      expect((await get(`/api/agent-actions/${action.id}`)).body.data.events.map((e: any) => e.kind)).toEqual([
        'proposed',
        'routed',
        'snoozed',
        'woke',
        'expired',
      ]);
    });

    test("routing: the CSM's channels, one notification per copy with a 128-bit nonce; no sender yet keeps it in the inbox", async () => {
      const email = `di.${newId('csm').slice(4, 12).toLowerCase()}@vendor.example`;
      const id = await customer({ csm: { name: 'Di', email, slack_user_id: 'U0DI' } });
      const csm = (await get('/api/csms?limit=200')).body.data.find((c: any) => c.email === email);
      await call(app, 'PATCH', `/api/csms/${csm.id}`, { key, body: { channels: ['slack', 'google_chat'] } });
      const action = (await post('/api/agent-actions', checkIn(id))).body.data;
      expect(action.status).toBe('pending_approval');
      expect(action.routing).toMatchObject({ to: 'csm', csm_ids: [csm.id], channels: ['slack', 'google_chat'] });
      const detail = (await get(`/api/agent-actions/${action.id}`)).body.data;
      // One per copy, in any order (creation times of copies made in one transaction do not order them reliably).
      expect(detail.notifications.map((n: any) => [n.platform, n.target, n.status]).sort()).toEqual([
        ['google_chat', email, 'no_sender'],
        ['slack', 'U0DI', 'no_sender'],
      ]);
      const nonces = await queryText<{ nonce: string }>(database.db, `select nonce from action_notifications where action_id = $1`, [
        action.id,
      ]);
      for (const n of nonces) expect(n.nonce).toMatch(/^[0-9a-f]{32}$/);
      const inbox = await get(`/api/agent-actions?status=pending_approval&customer_id=${id}`);
      expect(inbox.body.data.map((a: any) => a.id)).toEqual([action.id]);
    });

    test('lists: filters, cursor paging, 400 for an unknown filter value, nothing of another organisation', async () => {
      const id = await customer();
      await post('/api/agent-actions', checkIn(id));
      await post('/api/agent-actions', { customer_id: id, type: 'success_plan', params: { goals: ['adoption'] } });
      await post('/api/agent-actions', { customer_id: id, type: 'escalation', params: { to: 'executive', note: 'exec sponsor left' } });
      const page1 = await get(`/api/agent-actions?customer_id=${id}&limit=2`);
      expect(page1.body.data).toHaveLength(2);
      expect(page1.body.meta.has_more).toBe(true);
      const page2 = await get(`/api/agent-actions?customer_id=${id}&limit=2&cursor=${page1.body.meta.next_cursor}`);
      expect(page2.body.data).toHaveLength(1);
      expect(new Set([...page1.body.data, ...page2.body.data].map((a: any) => a.type))).toEqual(
        new Set(['check_in', 'success_plan', 'escalation']),
      );
      expect((await get(`/api/agent-actions?customer_id=${id}&type=escalation`)).body.data).toHaveLength(1);
      const bad = await get('/api/agent-actions?status=maybe');
      expect(bad.status).toBe(400);
      expect(bad.body.error).toContain('status');
      const unknown = await get('/api/agent-actions?colour=red');
      expect(unknown.status).toBe(400);
      expect((await get(`/api/agent-actions?customer_id=${id}`, otherKey)).body.data).toHaveLength(0);
      const one = page1.body.data[0].id;
      expect((await get(`/api/agent-actions/${one}`, otherKey)).status).toBe(404);
      expect((await call(app, 'POST', `/api/agent-actions/${one}/approve`, { key: otherKey })).status).toBe(404);
      expect((await call(app, 'GET', '/api/agent-actions')).status).toBe(401);
    });

    test('rules: the defaults until PUT; a bad rule is a 400 naming the field', async () => {
      const { key: ruleKey } = { key: (await createOrgWithKey(database)).secret };
      const defaults = await get('/api/action-rules', ruleKey);
      expect(defaults.status).toBe(200);
      expect(defaults.body.meta.defaults).toBe(true);
      for (const rule of defaults.body.data) expect(Value.Check(RuleView, rule)).toBe(true);
      expect(defaults.body.data.map((r: any) => [r.trigger, r.band ?? r.signal, r.action])).toEqual([
        ['risk_rise', 'high', 'check_in'],
        ['risk_rise', 'critical', 'escalation'],
        ['churn_signal', 'cancellation', 'renewal_call'],
      ]);
      const put = (body: unknown) => call(app, 'PUT', '/api/action-rules', { key: ruleKey, body });
      const badParams = await put({
        rules: [{ trigger: 'risk_rise', band: 'high', action: 'discount_offer', params: { percent: 90, months: 1 } }],
      });
      expect(badParams.status).toBe(400);
      expect(badParams.body.error).toContain('"rules.0.params.percent"');
      const badTrigger = await put({ rules: [{ trigger: 'moon_phase', action: 'check_in', params: {} }] });
      expect(badTrigger.status).toBe(400);
      expect(badTrigger.body.error).toContain('"rules.0.trigger"');
      const badDays = await put({
        rules: [{ trigger: 'renewal_due', within_days: 0, action: 'renewal_call', params: { due_in_days: 3 } }],
      });
      expect(badDays.status).toBe(400);
      expect(badDays.body.error).toContain('"rules.0.within_days"');
      const good = await put({ rules: [{ trigger: 'renewal_due', within_days: 30, action: 'renewal_call', params: { due_in_days: 3 } }] });
      expect(good.status).toBe(200);
      const now = await get('/api/action-rules', ruleKey);
      expect(now.body.meta.defaults).toBe(false);
      expect(now.body.data).toEqual([
        { trigger: 'renewal_due', within_days: 30, action: 'renewal_call', params: { due_in_days: 3 }, priority: 'normal', enabled: true },
      ]);
    });
  });
}

// Who may decide an agent action, over the API and from the console (the same routes): one rule
// with the chat platforms' (whose own cases are in slack.test.ts, google-chat.test.ts and
// whatsapp.test.ts). A key decides as an admin; an admin signed in as an admin; a member as the
// active CSM with their e-mail — the customer's own actions, a discount above
// DISCOUNT_MAX_NO_MANAGER only as a manager — or not at all. And only keys and admins write CSMs
// (their role, and who may act as them), only admins users' roles.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { newId } from '../../src/lib/ids.ts';
import { ACTION_TYPES } from '../../src/db/schema/index.ts';
import { decisionRefusal } from '../../src/modules/agent-actions/who-decides.ts';
import { createUser } from '../../src/modules/users/service.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { CONSOLE_ORIGIN, CONSOLE_PASSWORD } from '../helpers/sessions.ts';
import { DEFAULT_ACTION_SETTINGS } from '../../src/modules/agent-actions/settings.ts';

// The rule itself, every cell: role × owning the customer or not × action type × decision. The
// channels above (and the chat platforms' tests) show each is the one applied.
const DECISIONS = ['approve', 'reject', 'snooze', 'cancel'] as const;
const PARAMS: Record<string, Record<string, unknown>> = { discount_offer: { percent: 50, months: 6 } };
for (const role of ['csm', 'manager', 'admin'] as const) {
  for (const owns of [true, false]) {
    test(`the rule: a ${role} ${owns ? 'owning' : 'not owning'} the customer`, () => {
      for (const type of ACTION_TYPES) {
        for (const decision of DECISIONS) {
          const refusal = decisionRefusal(
            { csmId: 'csm_me', role },
            { csm_id: owns ? 'csm_me' : 'csm_other', type, params: PARAMS[type] ?? {} },
            decision,
            DEFAULT_ACTION_SETTINGS,
          );
          const expected =
            role !== 'csm'
              ? null
              : !owns
                ? "Only the customer's CSM or a manager may decide this action"
                : type === 'discount_offer' && decision === 'approve'
                  ? "A discount above 15% needs a manager's approval"
                  : null;
          expect({ type, decision, refusal }).toEqual({ type, decision, refusal: expected });
        }
      }
    });
  }
}

test("the rule: a plain CSM approves their own customer's discount of exactly DISCOUNT_MAX_NO_MANAGER %", () => {
  expect(
    decisionRefusal(
      { csmId: 'csm_me', role: 'csm' },
      { csm_id: 'csm_me', type: 'discount_offer', params: { percent: 15, months: 3 } },
      'approve',
      DEFAULT_ACTION_SETTINGS,
    ),
  ).toBeNull();
});

test('the rule: an action without a CSM is decided by managers and admins only', () => {
  expect(
    decisionRefusal({ csmId: 'csm_me', role: 'csm' }, { csm_id: null, type: 'check_in', params: {} }, 'approve', DEFAULT_ACTION_SETTINGS),
  ).toContain('Only the customer');
  expect(
    decisionRefusal({ csmId: null, role: 'admin' }, { csm_id: null, type: 'check_in', params: {} }, 'approve', DEFAULT_ACTION_SETTINGS),
  ).toBeNull();
});

for (const backend of BACKENDS) {
  describe(`who may decide (${backend})`, () => {
    let database: TestDatabase;
    let app: ReturnType<typeof buildApp>['app'];
    let key: string;
    let orgId: string;

    beforeAll(async () => {
      database = await openTestDatabase(backend);
      app = buildApp(database).app;
      const made = await createOrgWithKey(database);
      key = made.secret;
      orgId = made.org.id;
    });
    afterAll(() => database?.dispose());

    const emailOf = (label: string) => `${label}.${newId('csm').slice(4, 12).toLowerCase()}@vendor.example`;
    const withKey = (method: string, path: string, body?: unknown) => call(app, method, path, { key, body });

    /** A person signed in to the console with this e-mail and role: the headers a browser sends. */
    async function signedIn(email: string, role: 'admin' | 'member') {
      const { link } = await database.db.transaction((tx) => createUser(tx as never, { org: orgId, email, role, actor: 'test' }));
      const accepted = await call(app, 'POST', '/api/auth/accept', {
        body: { token: link.token, password: CONSOLE_PASSWORD },
        headers: { origin: CONSOLE_ORIGIN },
      });
      expect(accepted.status).toBe(200);
      const cookie = accepted.headers.get('set-cookie')!.split(';')[0]!;
      return { cookie, origin: CONSOLE_ORIGIN, 'x-csrf-token': accepted.body.data.csrf_token as string };
    }
    const asPerson = (headers: Record<string, string>, method: string, path: string, body?: unknown) =>
      call(app, method, path, { headers, body: body ?? {} });

    async function csm(email: string, role: 'csm' | 'manager' | 'admin' = 'csm') {
      const created = await withKey('POST', '/api/csms', { email, role });
      expect(created.status).toBe(201);
      return created.body.data.id as string;
    }

    /** An action pending for a new customer whose CSM has `csmEmail`. */
    async function action(csmEmail: string, type = 'check_in', params: Record<string, unknown> = { channel: 'call', due_in_days: 5 }) {
      const customer = await withKey('POST', '/api/customers', {
        name: `Acme ${newId('cus').slice(4, 10)}`,
        currency: 'EUR',
        csm: { email: csmEmail },
      });
      expect(customer.status).toBe(201);
      const proposed = await withKey('POST', '/api/agent-actions', { customer_id: customer.body.data.id, type, params });
      expect(proposed.status).toBe(201);
      return proposed.body.data.id as string;
    }
    const bigDiscount = (csmEmail: string) => action(csmEmail, 'discount_offer', { percent: 50, months: 6 });

    test('a key approves a 50 % discount: keys decide as an admin', async () => {
      const id = await bigDiscount(emailOf('ana'));
      const approved = await withKey('POST', `/api/agent-actions/${id}/approve`);
      expect(approved.status).toBe(200);
      expect(approved.body.data.status).toBe('approved');
    });

    test('an admin signed in approves a 50 % discount of any customer', async () => {
      const admin = await signedIn(emailOf('root'), 'admin');
      const id = await bigDiscount(emailOf('ana'));
      const approved = await asPerson(admin, 'POST', `/api/agent-actions/${id}/approve`);
      expect(approved.status).toBe(200);
      expect(approved.body.data.decided_by).toMatchObject({ kind: 'user' });
    });

    test('a member with no CSM of their e-mail may not decide (403), and the action stays pending', async () => {
      const member = await signedIn(emailOf('guest'), 'member');
      const id = await action(emailOf('ana'));
      const refused = await asPerson(member, 'POST', `/api/agent-actions/${id}/approve`);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toContain('Only a CSM');
      expect((await withKey('GET', `/api/agent-actions/${id}`)).body.data.status).not.toBe('approved');
    });

    test("a member who is the customer's CSM approves its check-in", async () => {
      const email = emailOf('ana');
      await csm(email);
      const member = await signedIn(email, 'member');
      const id = await action(email);
      const approved = await asPerson(member, 'POST', `/api/agent-actions/${id}/approve`);
      expect(approved.status).toBe(200);
      expect(approved.body.data.status).toBe('approved');
    });

    test("a member who is the customer's plain CSM may not approve a 50 % discount: it needs a manager (403)", async () => {
      const email = emailOf('ana');
      await csm(email);
      const member = await signedIn(email, 'member');
      const id = await bigDiscount(email);
      const refused = await asPerson(member, 'POST', `/api/agent-actions/${id}/approve`);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toContain("above 15% needs a manager's approval");
      expect((await withKey('GET', `/api/agent-actions/${id}`)).body.data.status).not.toBe('approved');
    });

    test("a member who is the customer's plain CSM may reject a 50 % discount", async () => {
      const email = emailOf('ana');
      await csm(email);
      const member = await signedIn(email, 'member');
      const id = await bigDiscount(email);
      const rejected = await asPerson(member, 'POST', `/api/agent-actions/${id}/reject`);
      expect(rejected.status).toBe(200);
      expect(rejected.body.data.status).toBe('rejected');
    });

    test("a member who is a plain CSM may not decide another CSM's customer's action (403)", async () => {
      const email = emailOf('bo');
      await csm(email);
      const member = await signedIn(email, 'member');
      const id = await action(emailOf('ana'));
      for (const decision of ['approve', 'reject', 'snooze', 'cancel']) {
        const refused = await asPerson(member, 'POST', `/api/agent-actions/${id}/${decision}`);
        expect(refused.status).toBe(403);
        expect(refused.body.error).toContain("Only the customer's CSM or a manager");
      }
    });

    test("a member who is a manager approves a 50 % discount of another CSM's customer", async () => {
      const email = emailOf('mia');
      await csm(email, 'manager');
      const member = await signedIn(email, 'member');
      const id = await bigDiscount(emailOf('ana'));
      const approved = await asPerson(member, 'POST', `/api/agent-actions/${id}/approve`);
      expect(approved.status).toBe(200);
      expect(approved.body.data.status).toBe('approved');
    });

    test('a member decides as an active CSM only: a deactivated one decides nothing (403)', async () => {
      const email = emailOf('ana');
      const csmId = await csm(email, 'manager');
      expect((await withKey('PATCH', `/api/csms/${csmId}`, { active: false })).status).toBe(200);
      const member = await signedIn(email, 'member');
      const id = await action(emailOf('bo'));
      expect((await asPerson(member, 'POST', `/api/agent-actions/${id}/approve`)).status).toBe(403);
    });

    /** A new customer whose CSM has `csmEmail`. */
    async function customerOf(csmEmail: string) {
      const customer = await withKey('POST', '/api/customers', {
        name: `Acme ${newId('cus').slice(4, 10)}`,
        currency: 'EUR',
        csm: { email: csmEmail },
      });
      expect(customer.status).toBe(201);
      return customer.body.data.id as string;
    }
    const actionsOf = async (customerId: string) =>
      (await withKey('GET', `/api/agent-actions?customer_id=${customerId}`)).body.data as unknown[];

    test('proposing without approval is approving: refused (403) to a member who may not approve it, and nothing is proposed', async () => {
      const guest = await signedIn(emailOf('guest'), 'member');
      const customerId = await customerOf(emailOf('ana'));
      const refused = await asPerson(guest, 'POST', '/api/agent-actions', {
        customer_id: customerId,
        type: 'check_in',
        params: { channel: 'call', due_in_days: 5 },
        requires_approval: false,
      });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toContain('Only a CSM');
      // A plain CSM of the customer may not skip a manager's approval of a 50 % discount either.
      const email = emailOf('ana');
      await csm(email);
      const own = await customerOf(email);
      const member = await signedIn(email, 'member');
      const discount = await asPerson(member, 'POST', '/api/agent-actions', {
        customer_id: own,
        type: 'discount_offer',
        params: { percent: 50, months: 6 },
        requires_approval: false,
      });
      expect(discount.status).toBe(403);
      expect(discount.body.error).toContain("above 15% needs a manager's approval");
      expect(await actionsOf(customerId)).toEqual([]);
      expect(await actionsOf(own)).toEqual([]);
      // Proposed for approval, the same is accepted from both: someone who may decide will.
      const proposed = await asPerson(guest, 'POST', '/api/agent-actions', {
        customer_id: customerId,
        type: 'check_in',
        params: { channel: 'call', due_in_days: 5 },
      });
      expect(proposed.status).toBe(201);
      expect(proposed.body.data.status).toBe('pending_approval');
    });

    test("proposing without approval is allowed to whoever may approve it: the customer's CSM (a check-in), a key", async () => {
      const email = emailOf('ana');
      await csm(email);
      const member = await signedIn(email, 'member');
      const own = await customerOf(email);
      const byCsm = await asPerson(member, 'POST', '/api/agent-actions', {
        customer_id: own,
        type: 'check_in',
        params: { channel: 'call', due_in_days: 5 },
        requires_approval: false,
      });
      expect(byCsm.status).toBe(201);
      expect(byCsm.body.data.status).toBe('approved');
      const byKey = await withKey('POST', '/api/agent-actions', {
        customer_id: await customerOf(emailOf('bo')),
        type: 'discount_offer',
        params: { percent: 50, months: 6 },
        requires_approval: false,
      });
      expect(byKey.status).toBe(201);
      expect(byKey.body.data.status).toBe('approved');
    });

    test("a member may not make a CSM an admin (403), and the CSM's role is unchanged", async () => {
      const member = await signedIn(emailOf('guest'), 'member');
      const csmId = await csm(emailOf('ana'));
      const refused = await asPerson(member, 'PATCH', `/api/csms/${csmId}`, { role: 'admin' });
      expect(refused.status).toBe(403);
      expect((await withKey('GET', `/api/csms/${csmId}`)).body.data.role).toBe('csm');
    });

    test("a member may not take over a manager's CSM record by its e-mail or Slack id (403)", async () => {
      const memberEmail = emailOf('guest');
      const member = await signedIn(memberEmail, 'member');
      const managerId = await csm(emailOf('mia'), 'manager');
      expect((await asPerson(member, 'PATCH', `/api/csms/${managerId}`, { email: memberEmail })).status).toBe(403);
      expect((await asPerson(member, 'PATCH', `/api/csms/${managerId}`, { slack_user_id: 'UGUEST0001' })).status).toBe(403);
    });

    test('a member may not add a CSM (403)', async () => {
      const member = await signedIn(emailOf('guest'), 'member');
      const refused = await asPerson(member, 'POST', '/api/csms', { email: emailOf('new'), role: 'manager' });
      expect(refused.status).toBe(403);
    });

    test("an admin signed in changes a CSM's role; so does a key", async () => {
      const admin = await signedIn(emailOf('root'), 'admin');
      const csmId = await csm(emailOf('ana'));
      const byAdmin = await asPerson(admin, 'PATCH', `/api/csms/${csmId}`, { role: 'manager' });
      expect(byAdmin.status).toBe(200);
      expect(byAdmin.body.data.role).toBe('manager');
      const byKey = await withKey('PATCH', `/api/csms/${csmId}`, { role: 'csm' });
      expect(byKey.status).toBe(200);
      expect(byKey.body.data.role).toBe('csm');
    });

    test("a member may not change a user's role (403)", async () => {
      const member = await signedIn(emailOf('guest'), 'member');
      const { user } = await database.db.transaction((tx) =>
        createUser(tx as never, { org: orgId, email: emailOf('other'), role: 'member', actor: 'test' }),
      );
      const refused = await asPerson(member, 'PATCH', `/api/users/${user.id}`, { role: 'admin' });
      expect(refused.status).toBe(403);
    });
  });
}

// Agent actions over the API (docs/agent-actions.md): proposing (POST /api/agent-actions, with
// Idempotency-Key), reading with filters, deciding (approve, reject, snooze, cancel: by whom
// who-decides.ts allows, audited), the rules, the CSMs (written by keys and admins), their tasks and
// the customers' notes. Every query is scoped to the caller's organisation.
import { Elysia, t } from 'elysia';
import type { Config } from '../../config.ts';
import { sql } from 'drizzle-orm';
import { rowsOf, type Database, type Db } from '../../db/client.ts';
import { transaction } from '../../db/transaction.ts';
import type { ActionReason, ActionStatus, ActionType, CsmRole } from '../../db/schema/index.ts';
import { ok } from '../../lib/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import { listResponse } from '../../lib/list-response.ts';
import { bodyLimit, optional, type RouteDeclaration } from '../../lib/routes.ts';
import { requestBody } from '../../lib/validation.ts';
import { principalAccessor } from '../../plugins/auth.ts';
import { jsonBody, readJsonBody } from '../../plugins/body.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import { recordAudit } from '../audit/service.ts';
import { actorOf, type Principal } from '../keys/service.ts';
import { answerOnce, idempotencyKeyOf, requestFingerprint } from '../idempotency/service.ts';
import { createCsm, getCsm, listCsms, listNotes, listTasks, patchCsm } from './csms.ts';
import {
  Action,
  ActionCreate,
  ActionDetail,
  ActionParams,
  Csm,
  CsmCreate,
  Delivery,
  ListDeliveriesQuery,
  CsmParams,
  CsmPatch,
  DecisionBody,
  ListActionsQuery,
  ListNotesQuery,
  ListTasksQuery,
  Note,
  NotesParams,
  ProposedAction,
  RuleView,
  RulesBody,
  RulesDocumented,
  SnoozeBody,
  Task,
} from './model.ts';
import { presentAction, presentCsm, presentNote, presentTask } from './rows.ts';
import { parseRules, putRules, rulesOf } from './rules.ts';
import { listDeliveries, presentDelivery } from './outbox.ts';
import type { DeliveryStatus, OutboundEventType } from '../../db/schema/index.ts';
import { actionDetail, decideAction, listActions, proposeAction } from './service.ts';
import type { Decision } from '../chat/port.ts';
import { approvalOnProposalRefusal, decisionRefusal, deciderOfPrincipal, type DecidedAction } from './who-decides.ts';
import type { ActionSettings } from './settings.ts';
import { enumOf } from '../../lib/record-fields.ts';
import { CSM_ROLES } from '../../db/schema/index.ts';

// Beside its route: `t.BooleanString` is Elysia's (a query string's "true"/"false"), and model.ts is
// read by the worker thread, which loads no Elysia (test/jobs/worker-imports.test.ts).
const ListCsmsQuery = t.Object(
  {
    role: t.Optional(enumOf(CSM_ROLES)),
    active: t.Optional(t.BooleanString()),
    limit: t.Optional(t.String()),
    cursor: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false },
);

/** Who decided, as the action records it: the key, or the person signed in to the console. */
const deciderOf = (principal: Principal) =>
  principal.kind === 'key'
    ? { kind: 'api_key' as const, key_id: principal.key.id, name: `API key "${principal.key.name}"` }
    : { kind: 'user' as const, user_id: principal.user.id, name: principal.user.name ?? principal.user.email };

/** Refuses (403) a caller whom the rule of who-decides.ts, the chat platforms' too, does not let
 * take `decision` on the action; an action the organisation does not have is decideAction's 404. */
async function checkMayDecide(db: Db, principal: Principal, actionId: string, decision: Decision, settings: ActionSettings): Promise<void> {
  const decider = await deciderOfPrincipal(db, principal);
  if (!decider) throw new AppError('forbidden', 'Only a CSM of this organisation may decide: no active CSM has your e-mail');
  const [action] = rowsOf<DecidedAction>(
    await db.execute(sql`select csm_id, type, params from agent_actions where org_id = ${principal.org.id} and id = ${actionId}`),
  );
  const refusal = action ? decisionRefusal(decider, action, decision, settings) : null;
  if (refusal) throw new AppError('forbidden', refusal);
}

const keyRoute = { auth: 'key', counted: 'organisation' } as const;
const read = { ...keyRoute, body: 'none' } as const;
const write = { ...keyRoute, body: 'api' } as const;
/** A CSM's role, and its e-mail, Slack user id and phone (who may act as it), decide who may decide
 * what: written by a key or an admin, not by a member of the console. */
const adminWrite = { ...write, who: 'admin' } as const;

export const ACTION_ROUTES = {
  propose: {
    ...write,
    method: 'POST',
    path: '/api/agent-actions',
    response: ProposedAction,
    summary: 'Propose an action for a customer (201; 200 with the open one, deduplicated)',
  },
  list: {
    ...read,
    method: 'GET',
    path: '/api/agent-actions',
    response: t.Array(Action),
    summary: 'Agent actions, newest first (filters status, type, customer_id, csm_id)',
  },
  get: {
    ...read,
    method: 'GET',
    path: '/api/agent-actions/:id',
    response: ActionDetail,
    summary: 'An action with its notifications and history',
  },
  approve: {
    ...write,
    checkedBody: optional(DecisionBody),
    method: 'POST',
    path: '/api/agent-actions/:id/approve',
    response: Action,
    summary: 'Approve an action (it is then executed by a job)',
  },
  reject: {
    ...write,
    checkedBody: optional(DecisionBody),
    method: 'POST',
    path: '/api/agent-actions/:id/reject',
    response: Action,
    summary: 'Reject an action (starts the cool-down)',
  },
  snooze: {
    ...write,
    checkedBody: optional(SnoozeBody),
    method: 'POST',
    path: '/api/agent-actions/:id/snooze',
    response: Action,
    summary: 'Snooze an action (7 days, or `days`)',
  },
  cancel: {
    ...write,
    checkedBody: optional(DecisionBody),
    method: 'POST',
    path: '/api/agent-actions/:id/cancel',
    response: Action,
    summary: 'Cancel an action',
  },
  rules: {
    ...read,
    method: 'GET',
    path: '/api/action-rules',
    response: t.Array(RuleView),
    summary: "The organisation's action rules (the defaults until it sets its own)",
  },
  putRules: {
    ...write,
    checkedBody: { schema: RulesDocumented, required: true },
    method: 'PUT',
    path: '/api/action-rules',
    response: t.Array(RuleView),
    summary: "Replace the organisation's action rules",
  },
  csms: { ...read, method: 'GET', path: '/api/csms', response: t.Array(Csm), summary: "The organisation's customer-success managers" },
  csm: { ...read, method: 'GET', path: '/api/csms/:id', response: Csm, summary: 'A CSM' },
  createCsm: { ...adminWrite, method: 'POST', path: '/api/csms', response: Csm, summary: 'Add a CSM (keys and admins)' },
  patchCsm: {
    ...adminWrite,
    method: 'PATCH',
    path: '/api/csms/:id',
    response: Csm,
    summary: "Change a CSM's role, channels and contact details (keys and admins)",
  },
  tasks: { ...read, method: 'GET', path: '/api/tasks', response: t.Array(Task), summary: 'Tasks that executed actions made' },
  notes: { ...read, method: 'GET', path: '/api/customers/:id/notes', response: t.Array(Note), summary: "A customer's notes" },
  deliveries: {
    ...read,
    method: 'GET',
    path: '/api/events/deliveries',
    response: t.Array(Delivery),
    summary: 'Outbound event deliveries with their attempts (filters status, endpoint_id, event_type)',
  },
} as const satisfies Record<string, RouteDeclaration>;

export function agentActionsModule(deps: {
  database: Database;
  states: RequestStates;
  config: Config;
  settings: ActionSettings;
  wakeJobs?: () => void;
}) {
  const principalOf = principalAccessor(deps.states);
  const { db } = deps.database;
  const decisionBody = requestBody(DecisionBody);
  const snoozeBody = requestBody(SnoozeBody);
  const rulesBody = requestBody(RulesBody);
  const decisionLimit = bodyLimit('api', deps.config);
  const inTransaction = <T>(work: (tx: Db) => Promise<T>) => transaction(db, work);

  const decide =
    (decision: Decision) =>
    async ({ request, params }: { request: Request; params: { id: string } }) => {
      const principal = principalOf(request);
      const body = (await readJsonBody(request, decisionLimit)) ?? {};
      const { comment, days } = decision === 'snooze' ? snoozeBody(body) : { ...decisionBody(body), days: undefined };
      const action = await inTransaction(async (tx) => {
        await checkMayDecide(tx, principal, params.id, decision, deps.settings);
        const decided = await decideAction(tx, {
          orgId: principal.org.id,
          actionId: params.id,
          decision,
          by: deciderOf(principal),
          comment,
          snoozeDays: days,
        });
        await recordAudit(tx, {
          orgId: principal.org.id,
          actor: actorOf(principal),
          action: 'agent_action.decided',
          targetType: 'agent_action',
          targetId: decided.id,
          details: { decision, status: decided.status, comment: comment ?? null },
        });
        return decided;
      });
      deps.wakeJobs?.();
      return ok(action);
    };

  return new Elysia({ name: 'revintel/agent-actions' })
    .post(
      ACTION_ROUTES.propose.path,
      async ({ request, body, set }) => {
        const principal = principalOf(request);
        const orgId = principal.org.id;
        // What both the approval check and the proposal read of the request.
        const proposal = { customerId: body.customer_id, type: body.type as ActionType, params: body.params };
        const answer = await answerOnce(
          db,
          { orgId, key: idempotencyKeyOf(request), fingerprint: requestFingerprint('POST', ACTION_ROUTES.propose.path, body) },
          async (tx) => {
            if (body.requires_approval === false) {
              const refusal = await approvalOnProposalRefusal(tx, principal, proposal, deps.settings);
              if (refusal)
                throw new AppError('forbidden', `${refusal}: propose it for approval instead (requires_approval true, the default)`);
            }
            const outcome = await proposeAction(
              tx,
              {
                orgId,
                ...proposal,
                reason: (body.reason ?? 'manual') as ActionReason,
                rationale: body.rationale,
                priority: body.priority,
                requiresApproval: body.requires_approval,
                source: 'api',
                force: body.force,
                actor:
                  principal.kind === 'key' ? { kind: 'api_key', key_id: principal.key.id } : { kind: 'user', user_id: principal.user.id },
              },
              deps.settings,
            );
            return {
              status: outcome.outcome === 'created' ? 201 : 200,
              body: ok({ ...outcome.action, deduplicated: outcome.outcome !== 'created' }),
            };
          },
        );
        deps.wakeJobs?.();
        set.status = answer.status;
        if (answer.replayed) set.headers['idempotent-replayed'] = 'true';
        return answer.body;
      },
      { body: ActionCreate, parse: jsonBody(ACTION_ROUTES.propose, deps.config) },
    )
    .get(
      ACTION_ROUTES.list.path,
      ({ query, request, set }) =>
        listResponse({
          request,
          set,
          known: Object.keys(ListActionsQuery.properties),
          limit: query.limit,
          sort: 'created_at',
          fetch: (limit) =>
            listActions(db, {
              orgId: principalOf(request).org.id,
              limit,
              cursor: query.cursor,
              filters: {
                status: query.status as ActionStatus | undefined,
                type: query.type as ActionType | undefined,
                customerId: query.customer_id,
                csmId: query.csm_id,
              },
            }),
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: presentAction,
        }),
      { query: ListActionsQuery },
    )
    .get(ACTION_ROUTES.get.path, async ({ request, params }) => ok(await actionDetail(db, principalOf(request).org.id, params.id)), {
      params: ActionParams,
    })
    .post(ACTION_ROUTES.approve.path, decide('approve'), { params: ActionParams })
    .post(ACTION_ROUTES.reject.path, decide('reject'), { params: ActionParams })
    .post(ACTION_ROUTES.snooze.path, decide('snooze'), { params: ActionParams })
    .post(ACTION_ROUTES.cancel.path, decide('cancel'), { params: ActionParams })
    .get(ACTION_ROUTES.rules.path, async ({ request }) => {
      const { rules, defaults } = await rulesOf(db, principalOf(request).org.id);
      return ok(rules, { defaults });
    })
    .put(
      ACTION_ROUTES.putRules.path,
      async ({ request, body }) => {
        const principal = principalOf(request);
        const rules = parseRules(rulesBody(body).rules);
        const saved = await inTransaction(async (tx) => {
          const stored = await putRules(tx, principal.org.id, rules);
          await recordAudit(tx, {
            orgId: principal.org.id,
            actor: actorOf(principal),
            action: 'action_rules.updated',
            targetType: 'action_rules',
            targetId: principal.org.id,
            details: { rules: stored.length },
          });
          return stored;
        });
        return ok(saved, { defaults: false });
      },
      { parse: jsonBody(ACTION_ROUTES.putRules, deps.config) },
    )
    .get(
      ACTION_ROUTES.csms.path,
      ({ query, request, set }) =>
        listResponse({
          request,
          set,
          known: Object.keys(ListCsmsQuery.properties),
          limit: query.limit,
          sort: 'created_at',
          fetch: (limit) =>
            listCsms(db, {
              orgId: principalOf(request).org.id,
              role: query.role as CsmRole | undefined,
              active: query.active,
              limit,
              cursor: query.cursor,
            }),
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: presentCsm,
        }),
      { query: ListCsmsQuery },
    )
    .get(ACTION_ROUTES.csm.path, async ({ request, params }) => ok(presentCsm(await getCsm(db, principalOf(request).org.id, params.id))), {
      params: CsmParams,
    })
    .post(
      ACTION_ROUTES.createCsm.path,
      async ({ request, body, set }) => {
        const principal = principalOf(request);
        const csm = await inTransaction(async (tx) => {
          const created = await createCsm(tx, principal.org.id, body);
          await recordAudit(tx, {
            orgId: principal.org.id,
            actor: actorOf(principal),
            action: 'csm.created',
            targetType: 'csm',
            targetId: created.id,
            details: { email: created.email, role: created.role },
          });
          return created;
        });
        set.status = 201;
        return ok(presentCsm(csm));
      },
      { body: CsmCreate, parse: jsonBody(ACTION_ROUTES.createCsm, deps.config) },
    )
    .patch(
      ACTION_ROUTES.patchCsm.path,
      async ({ request, params, body }) => {
        const principal = principalOf(request);
        const csm = await inTransaction(async (tx) => {
          const changed = await patchCsm(tx, principal.org.id, params.id, body);
          await recordAudit(tx, {
            orgId: principal.org.id,
            actor: actorOf(principal),
            action: 'csm.updated',
            targetType: 'csm',
            targetId: changed.id,
            details: { fields: Object.keys(body) },
          });
          return changed;
        });
        return ok(presentCsm(csm));
      },
      { body: CsmPatch, params: CsmParams, parse: jsonBody(ACTION_ROUTES.patchCsm, deps.config) },
    )
    .get(
      ACTION_ROUTES.tasks.path,
      ({ query, request, set }) =>
        listResponse({
          request,
          set,
          known: Object.keys(ListTasksQuery.properties),
          limit: query.limit,
          sort: 'created_at',
          fetch: (limit) =>
            listTasks(db, {
              orgId: principalOf(request).org.id,
              csmId: query.csm_id,
              customerId: query.customer_id,
              status: query.status as 'open' | 'done' | undefined,
              limit,
              cursor: query.cursor,
            }),
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: presentTask,
        }),
      { query: ListTasksQuery },
    )
    .get(
      ACTION_ROUTES.notes.path,
      ({ query, request, set, params }) =>
        listResponse({
          request,
          set,
          known: Object.keys(ListNotesQuery.properties),
          limit: query.limit,
          sort: 'created_at',
          fetch: (limit) => listNotes(db, { orgId: principalOf(request).org.id, customerId: params.id, limit, cursor: query.cursor }),
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: presentNote,
        }),
      { query: ListNotesQuery, params: NotesParams },
    )
    .get(
      ACTION_ROUTES.deliveries.path,
      ({ query, request, set }) =>
        listResponse({
          request,
          set,
          known: Object.keys(ListDeliveriesQuery.properties),
          limit: query.limit,
          sort: 'created_at',
          fetch: (limit) =>
            listDeliveries(db, {
              orgId: principalOf(request).org.id,
              status: query.status as DeliveryStatus | undefined,
              endpointId: query.endpoint_id,
              eventType: query.event_type as OutboundEventType | undefined,
              limit,
              cursor: query.cursor,
            }),
          positionOf: (row) => ({ value: row.sort_value, id: row.id }),
          present: presentDelivery,
        }),
      { query: ListDeliveriesQuery },
    );
}

// The signed-webhook path's contract, on a stub webhook (what adding one looks like): a proven
// delivery spends the budget its route declares, a refused signature spends the address's failures
// and is 429 past them, the payload is checked against its schema before any handler runs, a fault
// of ours reaches the error mapping as it is (500 `internal`, logged with the request id) and a
// database out of reach is a 503 with the sender's own retry hint. No database: the stub stores
// nothing.
import { describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { t } from 'elysia';
import { AppError } from '../../src/lib/errors.ts';
import { createLogger } from '../../src/lib/log.ts';
import { memoryRateLimiter } from '../../src/lib/rate-limiter.ts';
import type { RouteDeclaration } from '../../src/lib/routes.ts';
import { webhookBudgets } from '../../src/modules/signed-webhooks/budgets.ts';
import { type SignedWebhookSpec, signedWebhook } from '../../src/modules/signed-webhooks/index.ts';
import { payloadCheck } from '../../src/modules/signed-webhooks/payload.ts';
import { hmacSha256Matches } from '../../src/modules/signed-webhooks/verification.ts';
import { errorResponse } from '../../src/plugins/errors.ts';
import type { RequestState } from '../../src/plugins/request-state.ts';
import { testConfig } from '../helpers/harness.ts';

const SECRET = 'stub-webhook-secret';
const STUB_ROUTE = {
  method: 'POST',
  path: '/api/webhooks/stub',
  auth: 'platform-signature',
  verifiedBy: 'connector',
  counted: 'installation',
  body: 'webhook',
  response: t.Object({ ok: t.Boolean() }),
  envelope: false,
} as const satisfies RouteDeclaration;

const StubEvent = t.Object({ installation: t.String(), fault: t.Optional(t.Union([t.Literal('ours'), t.Literal('database')])) });
const checkStubEvent = payloadCheck(StubEvent, 'a stub event');

/** The database's own words when it cannot be reached (what isDatabaseDown recognises). */
const connectionRefused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

function stubWebhook(perMinute = 100) {
  const config = testConfig({ anonLimitPerMinute: 3, webhookLimitPerMinute: perMinute });
  const handled: string[] = [];
  const spec: SignedWebhookSpec<{ id: string }, typeof StubEvent.static> = {
    route: STUB_ROUTE,
    verify: (delivery) =>
      hmacSha256Matches([SECRET], [delivery.rawBody], Buffer.from(delivery.headers.get('x-stub-signature') ?? '', 'hex'))
        ? { ok: true }
        : { ok: false, reason: 'the signature does not match' },
    refusal: (reason) => new AppError('unauthorized', `Invalid stub signature: ${reason}`),
    parse: (delivery) => checkStubEvent(JSON.parse(new TextDecoder().decode(delivery.rawBody))),
    senders: async (event) => [{ id: event.installation }],
    async handle(event) {
      if (event.fault === 'ours') throw new TypeError('x.y is not a function');
      if (event.fault === 'database') throw new Error('Failed query', { cause: connectionRefused() });
      handled.push(event.installation);
      return { body: JSON.stringify({ ok: true }) };
    },
    unavailable: { message: 'The stub event could not be recorded: try again', headers: { 'retry-after': '7' } },
  };
  const receiver = signedWebhook(spec, { budgets: webhookBudgets(memoryRateLimiter(), config), config });
  return { receiver, handled };
}

let requests = 0;
function delivery(body: unknown, secret = SECRET): { request: Request; state: RequestState } {
  const text = JSON.stringify(body);
  const request = new Request(`http://localhost${STUB_ROUTE.path}`, {
    method: 'POST',
    body: text,
    headers: { 'content-type': 'application/json', 'x-stub-signature': createHmac('sha256', secret).update(text).digest('hex') },
  });
  const state: RequestState = {
    id: `req_stub_${++requests}`,
    path: STUB_ROUTE.path,
    startedAt: performance.now(),
    clientAddress: '192.0.2.10',
    principal: null,
    rateLimit: null,
    headers: {},
    logged: false,
    rules: STUB_ROUTE,
  };
  return { request, state };
}

/** What the request ends with, as the server answers it (the error plugin's mapping). */
async function answer(body: unknown, options: { secret?: string; lines?: string[]; receiver: ReturnType<typeof stubWebhook>['receiver'] }) {
  const { request, state } = delivery(body, options.secret);
  try {
    return await options.receiver.receive(request, state);
  } catch (error) {
    const log = createLogger('error', {}, (line) => void options.lines?.push(line));
    return errorResponse(error, { log, requestId: state.id, method: 'POST', path: STUB_ROUTE.path });
  }
}

describe('the signed-webhook path', () => {
  test('a proven delivery spends the budget its route declares (the installation named), 429 past it', async () => {
    const { receiver, handled } = stubWebhook(2);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await answer({ installation: 'inst-a' }, { receiver })).status);
    const other = await answer({ installation: 'inst-b' }, { receiver });
    expect(statuses).toEqual([200, 200, 429]);
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(handled).toEqual(['inst-a', 'inst-a', 'inst-b']);
  });

  test("a refused signature is a 401 counted on the address's failures, 429 past them, and nothing is handled", async () => {
    const { receiver, handled } = stubWebhook();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await answer({ installation: 'inst-a' }, { receiver, secret: 'forged' })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(handled).toEqual([]);
  });

  test('a payload of the wrong shape is a 400 naming the field, before the handler runs', async () => {
    const { receiver, handled } = stubWebhook();
    const res = await answer({ installation: 42 }, { receiver });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain('installation');
    expect(handled).toEqual([]);
  });

  test('a fault of ours is a 500 internal with a log line carrying the request id, not a 503', async () => {
    const { receiver } = stubWebhook();
    const lines: string[] = [];
    const res = await answer({ installation: 'inst-a', fault: 'ours' }, { receiver, lines });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { code: string; error: string };
    expect(body.code).toBe('internal');
    const logged = lines.map((line) => JSON.parse(line));
    expect(logged.some((line) => line.msg === 'unhandled error' && String(body.error).includes(line.request_id))).toBe(true);
  });

  test("the database out of reach is a 503 with the sender's own retry hint", async () => {
    const { receiver } = stubWebhook();
    const res = await answer({ installation: 'inst-a', fault: 'database' }, { receiver });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(((await res.json()) as { code: string }).code).toBe('database_unavailable');
  });
});

// fast-check generators of whole HTTP requests against revintel's real routes. In every `oneof` the
// ordinary choice comes first, so shrinking walks a failure back towards a plain request and the
// minimal counterexample shows only what matters.
import fc from 'fast-check';
import { createHmac } from 'node:crypto';

/** The records and credentials the requests aim at (made by run.ts before the run). */
export interface Target {
  port: number;
  keyA: string;
  /** Org A's connector and its webhook secret: deliveries to it can be signed correctly. */
  connectorA: string;
  secretA: string;
  /** Org B's connector: never signed with its own secret. */
  connectorB: string;
  /** WhatsApp: the app secret, the verify token and org A's installed phone number id. */
  whatsapp: { secret: string; verifyToken: string; phoneNumberId: string };
  /** Record ids and external ids, org A's first, then org B's (which key A must never reach). */
  ids: { customers: string[]; contracts: string[]; invoices: string[]; tickets: string[]; externalIds: string[] };
  deep: boolean;
}

export interface FuzzRequest {
  /** The route template it was made from (findings are grouped by it). */
  route: string;
  method: string;
  target: string;
  headers: [string, string][];
  body: Uint8Array | null;
  framing: 'length' | 'chunked';
  chunks: number[];
  /** The request line or a header is not valid HTTP: the server may refuse it without the app. */
  malformed: boolean;
  /** Sent this many times at once (races: upserts, idempotency keys, deliveries). */
  copies: number;
  /** Sent as HTTP/1.0 (a request without Host is valid there). */
  http10?: boolean;
}

// --- JSON text, built by hand: duplicate and `__proto__` keys, 1e400, raw bytes (invalid UTF-8).
type J = null | boolean | number | string | J[] | { $obj: [string, J][] } | { $raw: string | Uint8Array };
const obj = (entries: [string, J][]): J => ({ $obj: entries });
const raw = (text: string | Uint8Array): J => ({ $raw: text });

export function jsonBytes(value: J): Uint8Array {
  const parts: (string | Uint8Array)[] = [];
  const walk = (v: J) => {
    if (v !== null && typeof v === 'object' && '$raw' in v) parts.push(v.$raw);
    else if (v !== null && typeof v === 'object' && '$obj' in v) {
      parts.push('{');
      v.$obj.forEach(([k, x], i) => (parts.push(`${i ? ',' : ''}${JSON.stringify(k)}:`), walk(x)));
      parts.push('}');
    } else if (Array.isArray(v)) {
      parts.push('[');
      v.forEach((x, i) => (i && parts.push(','), walk(x)));
      parts.push(']');
    } else parts.push(JSON.stringify(v));
  };
  walk(value);
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
}

const b64url = (text: string) => Buffer.from(text).toString('base64url');
const nest = (depth: number, open: string, inner: string, close: string) => open.repeat(depth) + inner + close.repeat(depth);

// --- Values
/** Hostile values for any field: the first few are merely wrong, then worse. */
const hostileValue = (t: Target): fc.Arbitrary<J> =>
  fc.oneof(
    fc.constantFrom<J>(null, '', ' ', 0, -1, 1.5, true, [], obj([])),
    fc.constantFrom<J>('a\u0000b', '\u0000', '\ud800', 'x\udc00y', '\ud83d', '\uffff', '\u202e', 'Ω'.repeat(400)),
    fc.constantFrom<J>(
      raw('1e400'),
      raw('-1e400'),
      raw('-0'),
      raw('9223372036854775808'),
      raw('9007199254740993'),
      raw('1e-400'),
      raw('0.1e1'),
      raw('123456789012345678901234567890'),
    ),
    fc.constantFrom<J>(
      '2026-01-01T00:00:00+23:59',
      '2026-01-01T00:00:00-23:59',
      '2026-01-01T00:00:00+24:00',
      '2026-02-30',
      '0000-01-01',
      '9999-12-31T23:59:59Z',
      '+275760-09-13',
      '2026-01-01T00:00:00.123456789Z',
      '2026-01-01T24:00:00Z',
      '1970-01-01T00:00:00Z',
    ),
    fc.constantFrom<J>(...t.ids.customers, ...t.ids.contracts, ...t.ids.invoices, ...t.ids.externalIds.map((x) => `ext:${x}`)),
    fc.constantFrom<J>(
      raw(Buffer.from([0x22, 0xff, 0xfe, 0x22])),
      raw(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])),
      raw(Buffer.from([0x22, 0xc3, 0x28, 0x22])),
      raw('"\\u0000"'),
      raw('"\\ud800"'),
    ),
    fc.constantFrom<J>(
      [obj([['a', 1]])],
      obj([['__proto__', obj([['admin', true]])]]),
      obj([['constructor', obj([['prototype', obj([['x', 1]])]])]]),
    ),
    fc.integer({ min: 1, max: t.deep ? 8000 : 200 }).map((d) => raw(nest(d, '[', '1', ']'))),
    fc.string({ maxLength: 40, unit: 'binary' }),
  );

const metadata = (t: Target): fc.Arbitrary<J> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(obj([['tier', 'gold']])) },
    fc.constant(
      obj([
        ['__proto__', obj([['polluted', true]])],
        ['constructor', obj([['prototype', obj([['polluted', true]])]])],
      ]),
    ),
    fc.integer({ min: 1, max: t.deep ? 8000 : 200 }).map((d) => raw(nest(d, '{"a":', '1', '}'))),
    hostileValue(t).map((v) => obj([['k', v]])),
  );

// --- Bodies
const externalId = fc.oneof(
  fc.constantFrom('fz-1', 'fz-2', 'fz-3'),
  fc.string({ minLength: 1, maxLength: 12 }).map((s) => `fz-${s}`),
);

function recordBody(t: Target, kind: 'customers' | 'contracts' | 'invoices'): fc.Arbitrary<[string, J][]> {
  const customer = fc.constantFrom(...t.ids.customers);
  if (kind === 'customers') {
    return fc.record({ x: externalId, m: metadata(t) }).map(({ x, m }) => [
      ['external_id', x],
      ['name', `Fuzz ${x}`],
      ['currency', 'EUR'],
      ['domain', 'fuzz.example.com'],
      ['email', 'a@fuzz.example.com'],
      ['status', 'active'],
      ['churned_at', null],
      ['country', 'DE'],
      [
        'csm',
        obj([
          ['name', 'C'],
          ['email', 'c@x.io'],
        ]),
      ],
      ['metadata', m],
    ]);
  }
  if (kind === 'contracts') {
    return fc.record({ x: externalId, c: customer, m: metadata(t) }).map(({ x, c, m }) => [
      ['external_id', x],
      ['customer_id', c],
      ['name', 'Plan'],
      ['start_date', '2026-01-01'],
      ['end_date', '2026-12-31'],
      ['billing_interval', 'month'],
      ['amount', 10000],
      ['seats', 5],
      ['auto_renew', true],
      ['status', 'cancelled'],
      ['cancelled_at', '2026-02-01'],
      ['metadata', m],
    ]);
  }
  return fc.record({ x: externalId, c: customer, m: metadata(t) }).map(({ x, c, m }) => [
    ['external_id', x],
    ['customer_id', c],
    ['number', 'INV-1'],
    ['status', 'open'],
    ['amount_due', 5000],
    ['amount_paid', 0],
    ['issued_at', '2026-01-01T00:00:00Z'],
    ['due_date', '2026-02-01'],
    ['metadata', m],
  ]);
}

/** A record's fields with some of them dropped, replaced by hostile values, or joined by odd keys. */
function mutated(t: Target, base: fc.Arbitrary<[string, J][]>): fc.Arbitrary<J> {
  const edit = fc.record({
    at: fc.nat(20),
    op: fc.constantFrom('set', 'drop', 'add'),
    value: hostileValue(t),
    key: fc.constantFrom('__proto__', 'constructor', 'prototype', 'zzz', 'name', ''),
  });
  return fc
    .tuple(base, fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, fc.array(edit, { minLength: 1, maxLength: 3 })))
    .map(([fields, edits]) => {
      const out = [...fields];
      for (const e of edits) {
        const i = e.at % out.length;
        if (e.op === 'set') out[i] = [out[i]![0], e.value];
        else if (e.op === 'drop') out.splice(i, 1);
        else out.push([e.key, e.value]);
        if (!out.length) break;
      }
      return obj(out);
    });
}

const ticket = (t: Target) =>
  fc
    .record({
      id: fc.oneof(fc.constantFrom('T-1', 'T-2'), fc.string({ maxLength: 8 })),
      subject: fc.oneof(fc.constant('We want to cancel'), hostileValue(t)),
      email: fc.constantFrom<J>('a@fuzz.example.com', 'b@other.example.com', null),
    })
    .map(({ id, subject, email }) =>
      obj([
        ['id', id],
        ['subject', subject],
        ['requester_email', email],
        ['status', 'open'],
        ['created_at', '2026-01-01T00:00:00Z'],
      ]),
    );

/** A WhatsApp Cloud API delivery to org A's number (or another): a message or a status, parts of
 * it hostile. */
const whatsappDelivery = (t: Target): fc.Arbitrary<J> => {
  const text = fc.oneof(fc.constantFrom<J>('approve', 'snooze 3d', 'a 1', 'help', `approve:act_x:${'0'.repeat(32)}`), hostileValue(t));
  const message = fc
    .record({
      from: fc.oneof(fc.constantFrom<J>('15551234567', '4915112345678'), hostileValue(t)),
      id: fc.oneof(
        fc.string({ minLength: 1, maxLength: 12 }).map((x) => `wamid.${x}`),
        hostileValue(t),
      ),
      type: fc.constantFrom<J>('text', 'interactive', 'button', 'image', null),
      body: text,
      context: fc.constantFrom<J>(null, obj([['id', 'wamid.x']])),
    })
    .map(({ from, id, type, body, context }) =>
      obj([
        ['from', from],
        ['id', id],
        ['timestamp', '1767605520'],
        ['type', type],
        ['text', obj([['body', body]])],
        [
          'interactive',
          obj([
            ['type', 'button_reply'],
            ['button_reply', obj([['id', body]])],
          ]),
        ],
        ['button', obj([['payload', body]])],
        ['context', context],
      ]),
    );
  const status = fc
    .record({
      id: fc.oneof(fc.constant<J>('wamid.x'), hostileValue(t)),
      status: fc.constantFrom<J>('sent', 'delivered', 'read', 'failed', 'deleted', null),
    })
    .map(({ id, status }) =>
      obj([
        ['id', id],
        ['status', status],
        ['timestamp', '1767605520'],
        ['errors', [obj([['code', 131047]])]],
      ]),
    );
  const value = fc.record({
    number: fc.constantFrom<J>(t.whatsapp.phoneNumberId, '106540352242922', null),
    messages: fc.array(message, { maxLength: 2 }),
    statuses: fc.array(status, { maxLength: 2 }),
  });
  return mutated(
    t,
    value.map(
      ({ number, messages, statuses }) =>
        [
          ['object', 'whatsapp_business_account'],
          [
            'entry',
            [
              obj([
                ['id', '1'],
                [
                  'changes',
                  [
                    obj([
                      ['field', 'messages'],
                      [
                        'value',
                        obj([
                          ['metadata', obj([['phone_number_id', number]])],
                          ['messages', messages],
                          ['statuses', statuses],
                        ]),
                      ],
                    ]),
                  ],
                ],
              ]),
            ],
          ],
        ] as [string, J][],
    ),
  );
};

/** Bodies that are not a JSON object at all. */
const oddBody = (t: Target): fc.Arbitrary<Uint8Array> =>
  fc.oneof(
    fc
      .constantFrom('', 'null', '[]', '"x"', '123', '{', '{"a":1}}', 'name=x&currency=EUR', '{"a":1,"a":2}', '\ufeff{}', ' \t\n{}\n')
      .map((s) => Buffer.from(s)),
    fc.constantFrom(
      Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
      Buffer.from([0x7b, 0x00, 0x7d]),
      Buffer.from([0x80, 0x81, 0x82]),
      Buffer.from('{"name":"\u0000"}', 'utf16le'),
    ),
    fc
      .integer({ min: 1, max: t.deep ? 8000 : 200 })
      .chain((d) => fc.constantFrom(nest(d, '[', '', ']'), nest(d, '{"a":', 'null', '}'), '['.repeat(d), '{"a":'.repeat(d)))
      .map((s) => Buffer.from(s)),
    fc.uint8Array({ maxLength: 64 }),
    fc.constantFrom(Buffer.alloc(1_100_000, 'a'), Buffer.from(`{"name":"${'x'.repeat(1_100_000)}","currency":"EUR"}`)),
  );

function bodyFor(t: Target, route: string): fc.Arbitrary<Uint8Array | null> {
  const kind = (['customers', 'contracts', 'invoices'] as const).find((k) => route.startsWith(`/api/${k}`));
  const json = (a: fc.Arbitrary<J>) => a.map(jsonBytes);
  let natural: fc.Arbitrary<Uint8Array | null> = fc.constant(null);
  if (kind) natural = json(mutated(t, recordBody(t, kind)));
  else if (route === '/api/ticket-intelligence/import') {
    natural = json(
      fc
        .record({
          c: fc.constantFrom<J>(t.connectorA, t.connectorB, 'con_nope'),
          tickets: fc.array(fc.oneof(ticket(t), hostileValue(t)), { minLength: 1, maxLength: 4 }),
        })
        .map(({ c, tickets }) =>
          obj([
            ['connector_id', c],
            ['tickets', tickets],
          ]),
        ),
    );
  } else if (route === '/api/cfo/backtests') {
    const day = fc.oneof(
      fc
        .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
        .map<J>((d) => d.toISOString().slice(0, 10)),
      hostileValue(t),
    );
    natural = json(
      fc
        .record(
          {
            method: fc.constantFrom<J>('out_of_time', 'cross_validation', 'magic', null),
            horizon_days: fc.oneof(fc.integer({ min: -10, max: 400 }), hostileValue(t)),
            as_of: day,
            cutoff: day,
          },
          { requiredKeys: [] },
        )
        .map((r) => obj(Object.entries(r) as [string, J][])),
    );
  } else if (route === '/api/webhooks/tickets')
    natural = json(
      mutated(
        t,
        ticket(t).map((v) => [['ticket', v]] as [string, J][]),
      ),
    );
  else if (route === '/api/webhooks/workspace-chat') {
    // Google Chat's event shapes; no request carries a token Google signed, so each must be refused.
    const event = fc.record({
      type: fc.constantFrom<J>('CARD_CLICKED', 'MESSAGE', 'ADDED_TO_SPACE', 'REMOVED_FROM_SPACE', 7, null),
      at: fc.constantFrom<J>(new Date().toISOString(), 'yesterday', null),
      text: fc.string({ maxLength: 40 }),
    });
    natural = json(
      mutated(
        t,
        event.map(
          ({ type, at, text }) =>
            [
              ['type', type],
              ['eventTime', at],
              ['space', obj([['name', 'spaces/FUZZ']])],
              [
                'message',
                obj([
                  ['text', text],
                  ['argumentText', text],
                ]),
              ],
              [
                'common',
                obj([
                  [
                    'parameters',
                    obj([
                      ['action_id', 'act_nope'],
                      ['nonce', '00'],
                    ]),
                  ],
                ]),
              ],
              ['authorizationEventObject', obj([['systemIdToken', 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImV4YW1wbGUifQ.e30.x']])],
            ] as [string, J][],
        ),
      ),
    );
  } else if (route === '/api/webhooks/messaging') natural = json(whatsappDelivery(t));
  else if (route === '/api/agent-actions') {
    const params = fc.constantFrom<J>(
      obj([
        ['channel', 'call'],
        ['due_in_days', 3],
      ]),
      obj([
        ['percent', 10],
        ['months', 3],
      ]),
      obj([['percent', 99]]),
      obj([['goals', ['adoption']]]),
    );
    natural = json(
      mutated(
        t,
        fc
          .record({
            c: fc.constantFrom<J>(...t.ids.customers, 'cus_nope'),
            type: fc.constantFrom<J>('check_in', 'discount_offer', 'success_plan', 'hug'),
            params,
            force: fc.boolean(),
          })
          .map(
            ({ c, type, params, force }) =>
              [
                ['customer_id', c],
                ['type', type],
                ['params', params],
                ['force', force],
              ] as [string, J][],
          ),
      ),
    );
  } else if (route === '/api/action-rules') {
    const rule = obj([
      ['trigger', 'risk_rise'],
      ['band', 'high'],
      ['action', 'check_in'],
      [
        'params',
        obj([
          ['channel', 'call'],
          ['due_in_days', 3],
        ]),
      ],
    ]);
    natural = json(
      mutated(
        t,
        fc.constantFrom<J>([rule], [], [obj([['trigger', 'moon']])], [rule, 'x']).map((rules) => [['rules', rules]] as [string, J][]),
      ),
    );
  } else if (route.startsWith('/api/csms')) {
    natural = json(
      mutated(
        t,
        fc.constantFrom<J>('ana@fuzz.example.com', 'ANA@fuzz.example.com', 'not-an-email').map(
          (e) =>
            [
              ['email', e],
              ['role', 'manager'],
              ['channels', ['slack']],
            ] as [string, J][],
        ),
      ),
    );
  } else if (/^\/api\/agent-actions\/:id\/(approve|reject|snooze|cancel)$/.test(route)) {
    natural = json(fc.constantFrom<J>(obj([['comment', 'ok']]), obj([['days', 3]]), obj([['days', 99]]), obj([])));
  }
  return fc.oneof({ weight: 6, arbitrary: natural }, { weight: 1, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: oddBody(t) });
}

// --- Request line
export interface Route {
  template: string;
  methods: string[];
  params: string[];
}
const LIST_PARAMS = ['limit', 'cursor', 'sort', 'status', 'updated_since', 'include_deleted'];
export const ROUTES: Route[] = [
  { template: '/healthz', methods: ['GET'], params: [] },
  { template: '/readyz', methods: ['GET'], params: [] },
  { template: '/api/me', methods: ['GET'], params: [] },
  { template: '/api/keys', methods: ['GET', 'POST'], params: [] },
  { template: '/api/keys/:id', methods: ['DELETE'], params: [] },
  { template: '/api/connectors', methods: ['GET', 'POST'], params: [] },
  { template: '/api/connectors/:id/secret', methods: ['POST'], params: [] },
  // Session routes (the console's): a key is refused, a stranger's body is read by sign-in itself.
  { template: '/api/auth/sign-in', methods: ['POST'], params: [] },
  { template: '/api/auth/accept', methods: ['POST'], params: [] },
  { template: '/api/auth/sign-out', methods: ['POST'], params: [] },
  { template: '/api/auth/sign-out-everywhere', methods: ['POST'], params: [] },
  { template: '/api/users', methods: ['GET', 'POST'], params: ['limit', 'cursor'] },
  { template: '/api/users/:id', methods: ['PATCH'], params: [] },
  { template: '/api/users/:id/link', methods: ['POST'], params: [] },
  { template: '/api/ticket-events', methods: ['GET'], params: ['limit', 'cursor', 'status', 'connector_id'] },
  { template: '/api/ticket-events/:id/replay', methods: ['POST'], params: [] },
  { template: '/api/billing/connectors', methods: ['GET', 'POST'], params: [] },
  { template: '/api/billing/connectors/:id', methods: ['GET', 'PATCH', 'DELETE'], params: [] },
  { template: '/api/billing/connectors/:id/sync', methods: ['POST'], params: [] },
  { template: '/api/billing/connectors/:id/status', methods: ['GET'], params: [] },
  { template: '/api/billing/connectors/:id/events/:event_id/replay', methods: ['POST'], params: [] },
  {
    template: '/api/customers',
    methods: ['GET', 'POST'],
    params: [...LIST_PARAMS, 'segment', 'currency', 'csm_email', 'q', 'renewing_before'],
  },
  {
    template: '/api/contracts',
    methods: ['GET', 'POST'],
    params: [...LIST_PARAMS, 'customer_id', 'currency', 'ending_before', 'ending_after'],
  },
  {
    template: '/api/invoices',
    methods: ['GET', 'POST'],
    params: [...LIST_PARAMS, 'customer_id', 'contract_id', 'currency', 'overdue', 'issued_after', 'issued_before'],
  },
  {
    template: '/api/tickets',
    methods: ['GET'],
    params: ['limit', 'cursor', 'status', 'updated_since', 'customer_id', 'connector_id', 'sentiment_below', 'churn_signal'],
  },
  { template: '/api/customers/:id', methods: ['GET', 'PATCH', 'DELETE'], params: [] },
  { template: '/api/contracts/:id', methods: ['GET', 'PATCH', 'DELETE'], params: [] },
  { template: '/api/invoices/:id', methods: ['GET', 'PATCH', 'DELETE'], params: [] },
  { template: '/api/tickets/:id', methods: ['GET'], params: [] },
  { template: '/api/ticket-intelligence/import', methods: ['POST'], params: [] },
  { template: '/api/ticket-intelligence/import/:batch_id', methods: ['GET'], params: [] },
  {
    template: '/api/cfo/predictions',
    methods: ['GET'],
    params: ['limit', 'cursor', 'sort', 'risk', 'min_probability', 'customer_id', 'currency', 'csm_email'],
  },
  { template: '/api/cfo/predictions/:customer_id', methods: ['GET'], params: [] },
  { template: '/api/cfo/predictions/recompute', methods: ['POST'], params: [] },
  { template: '/api/cfo/models', methods: ['GET'], params: ['limit', 'cursor'] },
  { template: '/api/cfo/models/:id', methods: ['GET'], params: [] },
  { template: '/api/cfo/backtests', methods: ['POST'], params: [] },
  { template: '/api/cfo/backtests/latest', methods: ['GET'], params: [] },
  { template: '/api/cfo/backtests/:id', methods: ['GET'], params: [] },
  { template: '/api/cfo/arr', methods: ['GET'], params: ['from', 'to', 'currency'] },
  { template: '/api/cfo/cohorts', methods: ['GET'], params: ['from', 'to', 'currency'] },
  { template: '/api/cfo/fx-rates', methods: ['GET', 'PUT'], params: ['from', 'to', 'currency'] },
  { template: '/api/cfo/reporting-currency', methods: ['PUT'], params: [] },
  { template: '/api/cfo/forecast', methods: ['GET'], params: ['months', 'currency'] },
  { template: '/api/cfo/forecast-backtests', methods: ['POST'], params: [] },
  { template: '/api/cfo/forecast-backtests/latest', methods: ['GET'], params: [] },
  { template: '/api/cfo/forecast-backtests/:id', methods: ['GET'], params: [] },
  { template: '/api/webhooks/tickets', methods: ['POST'], params: ['connectorId'] },
  { template: '/api/webhooks/team-chat', methods: ['POST'], params: [] },
  { template: '/api/webhooks/billing', methods: ['POST'], params: ['connectorId'] },
  { template: '/api/webhooks/workspace-chat', methods: ['POST'], params: [] },
  { template: '/api/webhooks/messaging', methods: ['GET', 'POST'], params: ['hub.mode', 'hub.verify_token', 'hub.challenge'] },
  { template: '/api/agent-actions', methods: ['GET', 'POST'], params: ['limit', 'cursor', 'status', 'type', 'customer_id', 'csm_id'] },
  { template: '/api/agent-actions/:id', methods: ['GET'], params: [] },
  { template: '/api/agent-actions/:id/approve', methods: ['POST'], params: [] },
  { template: '/api/agent-actions/:id/reject', methods: ['POST'], params: [] },
  { template: '/api/agent-actions/:id/snooze', methods: ['POST'], params: [] },
  { template: '/api/agent-actions/:id/cancel', methods: ['POST'], params: [] },
  { template: '/api/action-rules', methods: ['GET', 'PUT'], params: [] },
  { template: '/api/csms', methods: ['GET', 'POST'], params: ['limit', 'cursor', 'role', 'active'] },
  { template: '/api/csms/:id', methods: ['GET', 'PATCH'], params: [] },
  { template: '/api/tasks', methods: ['GET'], params: ['limit', 'cursor', 'status', 'csm_id', 'customer_id'] },
  { template: '/api/customers/:id/notes', methods: ['GET'], params: ['limit', 'cursor'] },
  { template: '/api/events/deliveries', methods: ['GET'], params: ['limit', 'cursor', 'status', 'endpoint_id', 'event_type'] },
  { template: '/api/nope', methods: ['GET'], params: [] },
];

const idFor = (t: Target, template: string): fc.Arbitrary<string> => {
  const pool =
    template.includes('customers') || template.includes('predictions')
      ? t.ids.customers
      : template.includes('contracts')
        ? t.ids.contracts
        : template.includes('invoices')
          ? t.ids.invoices
          : template.includes('tickets')
            ? t.ids.tickets
            : ['bat_nope'];
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...pool) },
    fc.constantFrom(...t.ids.externalIds).map((x) => `ext:${x}`),
    fc.constantFrom(
      'x',
      'ext:',
      'ext:%00',
      '%00',
      '%ED%B0%80',
      '%FF',
      '..',
      '%2e%2e',
      'cus_%2F..',
      'x'.repeat(301),
      '-1',
      '9223372036854775808',
      "'",
      '%27%20or%201=1--',
    ),
    fc.string({ maxLength: 12 }).map(encodeURIComponent),
  );
};

/** What happens to the path on its way out. */
const pathMutation = fc.constantFrom(
  'none',
  'trailing-slash',
  'double-slash',
  'prefix',
  'encode-letter',
  'dot-segments',
  'nul',
  'upper',
  'long',
  'semicolon',
  'backslash',
  'absolute-form',
  'fragment',
  'encoded-slash',
);
function mutatePath(path: string, how: string, port: number): string {
  switch (how) {
    case 'trailing-slash':
      return `${path}/`;
    case 'double-slash':
      return `/${path}`;
    case 'prefix':
      return `/ab${path}`;
    case 'encode-letter':
      return path.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
    case 'dot-segments':
      return path.replace('/api/', '/api/%2e%2e/api/');
    case 'nul':
      return `${path}%00`;
    case 'upper':
      return path.toUpperCase();
    case 'long':
      return `${path}/${'a'.repeat(20_000)}`;
    case 'semicolon':
      return `${path};x=1`;
    case 'backslash':
      return path.replace('/api/', '/api\\');
    case 'absolute-form':
      return `http://127.0.0.1:${port}${path}`;
    case 'fragment':
      return `${path}#f`;
    case 'encoded-slash':
      return path.replace('/api/', '/api%2F');
    default:
      return path;
  }
}

const PARAM_SPELLINGS = [
  'access_token',
  'access%5Ftoken',
  'access%5ftoken',
  'ACCESS_TOKEN',
  'access_token[]',
  'access_token%00',
  'connectorId',
  'connectorid',
  'connectorId[]',
  'connector%49d',
  'limit[]',
  '__proto__',
  'constructor',
  '',
  '%ED%B0%80',
  'x%00',
];
const forgedCursor = fc.oneof(
  fc
    .constantFrom(
      ['created_at', '2026-01-01T00:00:00Z', 'cus_x'],
      ['arr', 1e308, 'x'],
      ['name', null, 1],
      ['name', '\u0000', 'x'],
      ['arr', '\ud800', 'x'],
      ['created_at', 'not a time', 'x'],
      ['created_at', '+275760-09-13T00:00:00Z', 'x'],
      [],
      {},
      'x',
      [[[]]],
    )
    .map((v) => b64url(JSON.stringify(v))),
  fc
    .tuple(
      fc.constantFrom('created_at', 'name', 'arr', 'updated_at', 'x'),
      fc.oneof(fc.string(), fc.double(), fc.integer(), fc.constant(null)),
      fc.string(),
    )
    .map((v) => b64url(JSON.stringify(v))),
  fc.constantFrom('!!!', '%00', 'e30', '_-_-', 'W10', 'x'.repeat(1001)),
);
const queryValue = (t: Target, name: string) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        '1',
        '10',
        'arr',
        'name',
        'active',
        'true',
        'EUR',
        '2026-01-01',
        '2026-01-01T00:00:00Z',
        'cancellation',
        '-0.5',
        t.ids.customers[0]!,
        t.connectorA,
      ),
    },
    name === 'cursor' ? forgedCursor : fc.constant(''),
    fc.constantFrom(
      '',
      '%00',
      '%ED%B0%80',
      '%FF',
      '%',
      '%zz',
      '-1',
      '0',
      '1e400',
      '99999999999999999999',
      '9223372036854775808',
      'NaN',
      '+',
      '%20',
      '2026-01-01T00:00:00+23:59',
      '2026-02-30',
      'x'.repeat(2000),
      t.keyA,
      t.connectorB,
      t.ids.customers.at(-1)!,
    ),
    forgedCursor,
  );

function queryFor(t: Target, route: Route): fc.Arbitrary<string> {
  const name = fc.oneof(
    { weight: 3, arbitrary: route.params.length ? fc.constantFrom(...route.params) : fc.constantFrom(...PARAM_SPELLINGS) },
    fc.constantFrom(...PARAM_SPELLINGS),
  );
  const pair = name.chain((n) => queryValue(t, n).map((v) => `${n}=${v}`));
  const handshake = [['hub.mode=subscribe', `hub.verify_token=${t.whatsapp.verifyToken}`, 'hub.challenge=1158201444']];
  const base =
    route.template === '/api/webhooks/tickets'
      ? fc.oneof(
          { weight: 6, arbitrary: fc.constant([`connectorId=${t.connectorA}`]) },
          fc.constant([`connectorId=${t.connectorB}`]),
          fc.constant([]),
        )
      : route.template === '/api/webhooks/messaging'
        ? fc.oneof(
            { weight: 3, arbitrary: fc.constantFrom(...handshake) },
            fc.constant(['hub.mode=subscribe', 'hub.verify_token=wrong', 'hub.challenge=1']),
            fc.constant([] as string[]),
          )
        : fc.constant([] as string[]);
  return fc
    .tuple(base, fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, fc.array(pair, { minLength: 1, maxLength: 3 })))
    .map(([b, rest]) => [...b, ...rest].join('&'));
}

// --- Headers
type Headers = [string, string][];
const noHeaders = fc.constant<Headers>([]);
const authHeader = (t: Target): fc.Arbitrary<[string, string][]> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant([['authorization', `Bearer ${t.keyA}`]] as [string, string][]) },
    { weight: 2, arbitrary: noHeaders },
    fc
      .constantFrom(
        `Bearer  ${t.keyA}`,
        `bearer ${t.keyA}`,
        `BEARER ${t.keyA}`,
        `Bearer ${t.keyA} `,
        `Bearer\t${t.keyA}`,
        `Bearer ${t.keyA}x`,
        `Bearer ${t.keyA.slice(0, -1)}`,
        'Bearer',
        'Bearer ',
        'Bearer rk_live_garbage',
        `Basic ${btoa(`${t.keyA}:`)}`,
        `Token ${t.keyA}`,
        `Bearer ${t.keyA},Bearer x`,
      )
      .map((v) => [['authorization', v]] as [string, string][]),
    fc.constant([
      ['authorization', 'Bearer garbage'],
      ['authorization', `Bearer ${t.keyA}`],
    ] as [string, string][]),
  );
const hostHeader = (t: Target): fc.Arbitrary<[string, string][]> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant([['host', `127.0.0.1:${t.port}`]] as [string, string][]) },
    noHeaders,
    fc.string({ minLength: 1, maxLength: 3, unit: fc.constantFrom(...'ab1.:-[]_') }).map((h) => [['host', h]] as [string, string][]),
    fc
      .constantFrom(
        'localhost',
        '[::1]',
        'evil.example',
        '127.0.0.1:1',
        'a'.repeat(300),
        '/api',
        'a@b',
        'x/y',
        '',
        'a b',
        '^',
        '{',
        '%',
        '[::1',
        'a:b:c',
      )
      .map((h) => [['host', h]] as [string, string][]),
    fc.constant([
      ['host', 'a'],
      ['host', `127.0.0.1:${t.port}`],
    ] as [string, string][]),
    // Hosts Bun puts in the URL as sent that URL parsers refuse: ports past 65535, literals that
    // are no IPv6 address; and IPv6 literals, empty, very long and portless ones.
    fc
      .constantFrom(
        '127.0.0.1:99999',
        `127.0.0.1:${t.port}0`,
        'localhost:123456',
        '[::1]:70000',
        '[1:2:3]',
        '[::ffff:127.0.0.1]',
        `[::1]:${t.port}`,
        '[fe80::1%25eth0]',
        'a.example:port',
        'a.example:',
        ':80',
        'a'.repeat(8_000),
        `${'a'.repeat(70)}.example`,
      )
      .map((h) => [['host', h]] as [string, string][]),
  );
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  fc.constantFrom(
    null,
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data',
    'multipart/form-data; boundary=x',
    'application/json; charset=utf-16',
    'APPLICATION/JSON',
    'application/json;charset=latin1',
    'application/vnd.api+json',
    'application/json, text/plain',
    '',
    'application/octet-stream',
    'application/jsonx',
  ),
);
const extraHeaders = (t: Target, body: Uint8Array | null, route: string): fc.Arbitrary<[string, string][]> => {
  const secret = route === '/api/webhooks/tickets' ? t.secretA : route === '/api/webhooks/messaging' ? t.whatsapp.secret : null;
  const signature = body && secret ? `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` : 'sha256=00';
  const one = fc.constantFrom<[string, string]>(
    ['x-request-id', 'fuzz-1'],
    ['x-request-id', 'x'.repeat(200)],
    ['x-request-id', '\u00ff\u00fe'],
    ['idempotency-key', 'fz-idem-1'],
    ['idempotency-key', 'x'.repeat(300)],
    ['x-forwarded-for', 'garbage, 1.2.3.4'],
    ['content-encoding', 'gzip'],
    ['accept-encoding', 'gzip'],
    ['connection', 'keep-alive'],
    ['expect', '100-continue'],
    ['x-hub-signature-256', signature],
    ['x-hub-signature-256', 'sha256=00'],
    ['x-hub-signature-256', ''],
    ['x-github-delivery', 'fz-delivery'],
    ['x-front-challenge', 'c'],
    ['x-http-method-override', 'DELETE'],
    ['cookie', 'a=b'],
    ['accept', 'text/html'],
    ['content-length', '0'],
    ['transfer-encoding', 'chunked'],
    ['transfer-encoding', 'gzip, chunked'],
  );
  const sign: fc.Arbitrary<[string, string][]> = secret
    ? fc.oneof({ weight: 3, arbitrary: fc.constant([['x-hub-signature-256', signature]] as [string, string][]) }, noHeaders)
    : noHeaders;
  return fc.tuple(sign, fc.array(one, { maxLength: 3 })).map(([s, rest]) => [...s, ...rest]);
};

const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS', 'HEAD'];
const JUNK_METHODS = ['get', 'FOO', 'PROPFIND', 'TRACE', 'CONNECT', 'M-SEARCH', 'G\u00c9T'];

export function requestArb(t: Target): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...ROUTES).chain((route) => {
    const method = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...route.methods) },
      { weight: 2, arbitrary: fc.constantFrom(...METHODS) },
      fc.constantFrom(...JUNK_METHODS),
    );
    const id = /\/:[a-z_]+/.test(route.template) ? idFor(t, route.template) : fc.constant('');
    return fc
      .record({
        method,
        id,
        how: fc.oneof({ weight: 6, arbitrary: fc.constant('none') }, pathMutation),
        query: queryFor(t, route),
        body: bodyFor(t, route.template),
        host: hostHeader(t),
        auth: authHeader(t),
        ct: contentType,
        chunked: fc.oneof(
          { weight: 5, arbitrary: fc.constant(null) },
          fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 4 }),
        ),
        copies: fc.oneof({ weight: 8, arbitrary: fc.constant(1) }, fc.integer({ min: 2, max: 4 })),
        v10: fc.boolean(),
      })
      .chain((r) => extraHeaders(t, r.body, route.template).map((extra) => ({ ...r, extra })))
      .map((r): FuzzRequest => {
        const path = mutatePath(route.template.replace(/:[a-z_]+/, r.id).replace(/:[a-z_]+/g, 'x_nobody'), r.how, t.port);
        const headers: [string, string][] = [
          ...r.host,
          ...(route.template.startsWith('/api/webhooks') ? [] : r.auth),
          ...(r.body && r.ct !== null ? [['content-type', r.ct] as [string, string]] : []),
          ...r.extra,
        ];
        const malformed =
          !METHODS.includes(r.method) ||
          headers.some(([k, v]) => /[^\x20-\x7e\t]/.test(v) || k === 'content-length' || k === 'transfer-encoding'); // Bun drops unknown methods unanswered
        // No Host: half of them as HTTP/1.0, where that is valid (chunked framing is not).
        const http10 = r.host.length === 0 && !r.chunked && r.v10;
        return {
          route: route.template,
          method: r.method,
          target: r.query ? `${path}?${r.query}` : path,
          headers,
          body: r.body,
          framing: r.chunked ? 'chunked' : 'length',
          chunks: r.chunked ?? [],
          malformed,
          copies: r.copies,
          http10,
        };
      });
  });
}

/** The bytes on the wire. */
export function serialize(r: FuzzRequest): Uint8Array {
  const lines = [
    `${r.method} ${r.target} HTTP/${r.http10 ? '1.0' : '1.1'}`,
    ...r.headers.map(([k, v]) => `${k}: ${v}`),
    'connection: close',
  ];
  let body: Buffer = Buffer.alloc(0);
  if (r.framing === 'chunked' && r.body) {
    lines.push('transfer-encoding: chunked');
    const parts: Buffer[] = [];
    let at = 0;
    for (let i = 0; at < r.body.length; i++) {
      const size = Math.min(r.chunks[i % r.chunks.length]! * (i >= r.chunks.length ? 64 : 1), r.body.length - at);
      parts.push(Buffer.from(`${size.toString(16)}\r\n`), Buffer.from(r.body.subarray(at, at + size)), Buffer.from('\r\n'));
      at += size;
    }
    body = Buffer.concat([...parts, Buffer.from('0\r\n\r\n')]);
  } else if (r.body) {
    lines.push(`content-length: ${r.body.length}`);
    body = Buffer.from(r.body);
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

/** The request as printable text (bytes outside ASCII as \xNN), long runs and bodies cut short. */
export function describe(r: FuzzRequest, max = 1200): string {
  let text = '';
  for (const byte of serialize(r))
    text +=
      byte === 0x0a
        ? '\\n\n'
        : byte === 0x0d
          ? '\\r'
          : byte >= 0x20 && byte < 0x7f
            ? String.fromCharCode(byte)
            : `\\x${byte.toString(16).padStart(2, '0')}`;
  text = text.replace(/(.{1,8}?)\1{20,}/g, (run, unit: string) => `⟨${JSON.stringify(unit)}×${run.length / unit.length}⟩`);
  if (text.length > max) text = `${text.slice(0, max)}… (${text.length - max} more characters)`;
  return r.copies > 1 ? `(${r.copies} copies at once)\n${text}` : text;
}

// The naive baseline of bench/tickets.ts: what a straightforward ticket webhook receiver would be.
// A plain Bun.serve and postgres.js (a pool of DATABASE_POOL_SIZE connections, 10 by default, as
// revintel's), no framework, no rate limiter, no request log, and ONE insert per request: every
// request is its own statement and its own commit (revintel's writer shares one multi-row insert
// and one commit between the requests that arrive together).
//
// POST /api/webhooks/tickets?connectorId=…, for each request:
//   1. reads the body (the raw bytes, decoded as UTF-8) and checks that it parses as JSON (400);
//   2. looks the connector up — BASELINE_CONNECTOR=cache (the default: the baseline is one
//      insert per request and nothing else): the connector and its opened secret are kept for the
//      life of the process (no query, no AES), an unknown or deleted one remembered as such (404);
//      BASELINE_CONNECTOR=query: one query per request and its sealed secret opened per request;
//   3. when the connector has a secret, verifies `x-hub-signature-256: sha256=<hex HMAC-SHA256 of
//      the body>` as revintel does (401), with the secret opened with SECRET_KEY (the same sealed
//      column and format revintel writes: src/lib/secret-box.ts);
//   4. `insert into ticket_events (id, org_id, connector_id, source, body, headers) values (…)
//      returning id` — the same table and columns revintel's writer fills (status, run_after,
//      received_at… take their defaults, as in revintel), so a row is a pending event exactly like
//      revintel's;
//   5. answers 200 {ok, status:"received", connector, event_id}, revintel's shape.
// It runs on the bench database revintel has migrated (the table and the connectors exist).
// bench/tickets.ts runs it only while revintel is stopped and deletes its events afterwards, so
// revintel's worker never processes them.
//
// Usage: DATABASE_URL=postgres://… SECRET_KEY=… PORT=… [HOST=127.0.0.1] [DATABASE_POOL_SIZE=10]
//        [BASELINE_CONNECTOR=query|cache] bun bench/tickets-baseline.ts
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import postgres from 'postgres';
import { openSecret } from '../src/lib/secret-box.ts';

const databaseUrl = process.env.DATABASE_URL;
const secretKey = process.env.SECRET_KEY ?? null;
if (!databaseUrl) {
  console.error('usage: DATABASE_URL=postgres://… SECRET_KEY=… PORT=… bun bench/tickets-baseline.ts');
  process.exit(2);
}
const mode = process.env.BASELINE_CONNECTOR ?? 'cache';
if (mode !== 'query' && mode !== 'cache') {
  console.error(`BASELINE_CONNECTOR must be query or cache, got "${mode}"`);
  process.exit(2);
}

const sql = postgres(databaseUrl, {
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
  onnotice: () => {},
  connection: { application_name: 'tickets-baseline' },
});

interface Connector {
  id: string;
  orgId: string;
  name: string;
  /** Null: the connector is unsigned. */
  secret: string | null;
}

async function loadConnector(id: string): Promise<Connector | null> {
  const [row] = await sql<{ id: string; org_id: string; name: string; secret_sealed: string | null }[]>`
    select id, org_id, name, secret_sealed from connectors where id = ${id} and builtin is null`;
  if (!row) return null;
  let secret: string | null = null;
  if (row.secret_sealed) {
    if (!secretKey) throw new Error('the connector has a secret and SECRET_KEY is not set');
    secret = openSecret(row.secret_sealed, secretKey, row.id);
  }
  return { id: row.id, orgId: row.org_id, name: row.name, secret };
}

const cached = new Map<string, Connector | null>();
async function findConnector(id: string): Promise<Connector | null> {
  if (mode === 'query') return loadConnector(id);
  if (cached.has(id)) return cached.get(id)!;
  const connector = await loadConnector(id);
  cached.set(id, connector);
  return connector;
}

function signatureValid(header: string | null, bytes: Uint8Array, secret: string): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', secret).update(bytes).digest();
  const received = Buffer.from(header.slice('sha256='.length), 'hex');
  return received.length === expected.length && timingSafeEqual(received, expected);
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** An event id of revintel's form (evt_ and 20 base62 characters). */
function eventId(): string {
  let out = 'evt_';
  for (const byte of randomBytes(20)) out += BASE62[byte % 62];
  return out;
}

const fail = (status: number, error: string) => Response.json({ ok: false, error }, { status });
const utf8 = new TextDecoder('utf-8', { fatal: true });

async function receive(request: Request): Promise<Response> {
  const connectorId = new URL(request.url).searchParams.get('connectorId');
  if (!connectorId) return fail(400, 'Query parameter "connectorId" is required');
  const bytes = new Uint8Array(await request.arrayBuffer());
  let text: string;
  try {
    text = utf8.decode(bytes);
    JSON.parse(text);
  } catch {
    return fail(400, 'Request body is not valid JSON');
  }
  const connector = await findConnector(connectorId);
  if (!connector) return fail(404, `Connector ${connectorId} not found`);
  if (connector.secret !== null && !signatureValid(request.headers.get('x-hub-signature-256'), bytes, connector.secret)) {
    return fail(401, 'Invalid webhook signature');
  }
  const headers: Record<string, string> = {};
  for (const name of ['content-type', 'user-agent']) {
    const value = request.headers.get(name);
    if (value !== null) headers[name] = value.slice(0, 500);
  }
  const [row] = await sql<{ id: string }[]>`
    insert into ticket_events (id, org_id, connector_id, source, body, headers)
    values (${eventId()}, ${connector.orgId}, ${connector.id}, 'webhook', ${text}, ${JSON.stringify(headers)}::jsonb)
    returning id`;
  return Response.json({ ok: true, status: 'received', connector: connector.name, event_id: row!.id });
}

const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: process.env.HOST ?? '127.0.0.1',
  routes: {
    '/readyz': () => new Response('ok'),
    '/api/webhooks/tickets': {
      POST: (request) =>
        receive(request).catch((error) => {
          console.error(error);
          return fail(500, 'Internal error');
        }),
    },
  },
  fetch: () => fail(404, 'Not found'),
});

const stop = () => {
  server.stop(true);
  sql.end({ timeout: 2 }).finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

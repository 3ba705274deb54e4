// The outbox of outbound events (docs/agent-actions.md → Outbound events): each event is fanned out, in the
// transaction that records it, to one delivery per subscribed endpoint, and each delivery is sent by
// an `outbox.deliver` job, signed the Standard Webhooks way. A failure worth retrying (a timeout, no
// answer, 408, 429, 5xx) is tried again after an exponential back-off with full jitter — never sooner
// than the receiver's Retry-After — until the 8th attempt; any other answer (3xx: redirects are not
// followed; 4xx) is final at once. A destination that is not the public internet (lib/outbound-
// address.ts) is refused unless ALLOW_PRIVATE_ENDPOINTS=true, checked on every attempt against freshly
// resolved addresses — and the attempt connects to the very address checked (over HTTPS too: the
// certificate is verified against the URL's name, sent as SNI), so a name that resolves elsewhere a
// moment later (DNS rebinding) cannot steer it inside.
import { createHmac, randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { checkServerIdentity } from 'node:tls';
import { sql, type SQL } from 'drizzle-orm';
import { Type as t } from '@sinclair/typebox';
import { queryRows, rowsOf, type Db } from '../../db/client.ts';
import { andAll, isoTime, limitTo, newestFirst } from '../../db/keyset.ts';
import type { DeliveryStatus, OutboundEventType } from '../../db/schema/index.ts';
import { messageOf } from '../../lib/errors.ts';
import { hostOf, hostRefusal, nonPublicRange } from '../../lib/outbound-address.ts';
import { newId } from '../../lib/ids.ts';
import { decodeCursor } from '../../lib/pagination.ts';
import { openSecret } from '../../lib/secret-box.ts';
import { defineJobKind, PermanentJobError } from '../../queue/job-kind.ts';
import { enqueueJob } from '../../queue/job-queue.ts';
import { type AttemptResult, OUTBOX_TIMEOUT_MS, retryAfterOf, settleAttempt } from '../../queue/outbox-attempts.ts';
import type { ActionSettings } from './settings.ts';

// --- Standard Webhooks ----------------------------------------------------------------------------

/** A new signing secret: `whsec_` and 24 random bytes in base64 (the key the HMAC uses). */
export const newEndpointSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by the secret's base64 part. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

// --- destinations -------------------------------------------------------------------------------

/** A destination that is not the public internet (the message, with the address and its range, is
 * for the operator: the CLI and the server's log). */
export class RefusedDestination extends Error {
  override readonly name = 'RefusedDestination';
}

/** The URL's name did not resolve (now: it may later). */
export class UnresolvedDestination extends Error {
  override readonly name = 'UnresolvedDestination';
}

/** How deliveries reach receivers: the system's resolver and certificate authorities. Tests bring
 * a resolver for a name of their own and their receiver's certificate. */
export interface Network {
  resolve: (host: string) => Promise<{ address: string; family: number }[]>;
  ca?: string;
}

export const SYSTEM_NETWORK: Network = { resolve: (host) => lookup(host, { all: true, verbatim: true }) };

/** The URL's host as written, when that alone says it is not public (an address, `localhost`). */
export function refusedAsWritten(url: URL, allowPrivate: boolean): RefusedDestination | null {
  const why = allowPrivate ? null : hostRefusal(url);
  return why ? new RefusedDestination(`${url.hostname} is not a public address (${why})`) : null;
}

/** The address a delivery connects to: the URL's host resolved now; refused when the host or any
 * of its addresses is not public (unless allowed). */
export async function resolveDestination(
  url: URL,
  allowPrivate: boolean,
  network: Network = SYSTEM_NETWORK,
): Promise<{ address: string; family: number }> {
  const asWritten = refusedAsWritten(url, allowPrivate);
  if (asWritten) throw asWritten;
  const host = hostOf(url);
  let addresses: { address: string; family: number }[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await network.resolve(host);
  } catch (error) {
    throw new UnresolvedDestination(`${host} does not resolve: ${messageOf(error)}`);
  }
  if (addresses.length === 0) throw new UnresolvedDestination(`${host} does not resolve`);
  for (const { address } of allowPrivate ? [] : addresses) {
    const why = nonPublicRange(address);
    if (why) throw new RefusedDestination(`${host} resolves to ${address}, not a public address (${why})`);
  }
  return addresses[0]!;
}

// What the organisation sees of a failed attempt (`last_error`, the history): a category, never the
// receiver's answer nor the network's own words — a refused address reads the same whether or not
// anything listens there, and connection errors do not name addresses or ports.
export const DELIVERY_REFUSED = 'refused: address not allowed';

/** A failed connection's category: timeout, TLS, or the connection itself. */
function connectionFailure(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `timeout (no answer within ${OUTBOX_TIMEOUT_MS / 1000} s)`;
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  return /CERT|TLS|SSL|SIGNATURE|ISSUER/i.test(code) ? 'TLS failed' : 'connect failed';
}

/** A receiver's URL as `endpoints add` takes it: http(s), no credentials, no fragment. */
export function endpointUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `--url must be an absolute http(s) URL, got "${raw}"`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `--url must start with https:// or http://, got "${url.protocol}"`;
  if (url.username || url.password) return '--url must not carry a user name or password';
  if (url.hash) return '--url must not have a #fragment';
  return null;
}

// --- fan-out ------------------------------------------------------------------------------------

/** One delivery per endpoint of the organisation subscribed to the event's type, each with its
 * job, in the caller's transaction. Returns how many. */
export async function fanOutEvent(db: Db, event: { id: string; orgId: string; type: OutboundEventType }): Promise<number> {
  const endpoints = rowsOf<{ id: string }>(
    await db.execute(sql`
      select id from webhook_endpoints
      where org_id = ${event.orgId} and removed_at is null and (events is null or events @> ${JSON.stringify([event.type])}::jsonb)
      order by id`),
  );
  for (const endpoint of endpoints) {
    const id = newId('dlv');
    await db.execute(sql`
      insert into event_deliveries (id, org_id, endpoint_id, event_id, event_type, next_attempt_at)
      values (${id}, ${event.orgId}, ${endpoint.id}, ${event.id}, ${event.type}, now())`);
    await enqueueJob(db, deliverEventJob, { deliveryId: id }, { orgId: event.orgId, dedupeKey: id });
  }
  return endpoints.length;
}

// --- one attempt --------------------------------------------------------------------------------

export interface Pending {
  id: string;
  org_id: string;
  attempts: number;
  endpoint_id: string;
  url: string;
  secret_sealed: string;
  event_id: string;
  event_type: string;
  data: Record<string, unknown>;
  event_at: string;
}

async function loadPending(db: Db, args: { deliveryId: string }): Promise<Pending | null> {
  // A delivery whose endpoint was removed meanwhile stops here, dead with the reason.
  await db.execute(sql`
    update event_deliveries d set status = 'dead', last_error = 'the endpoint was removed', next_attempt_at = null, updated_at = now()
    from webhook_endpoints e where d.id = ${args.deliveryId} and d.status = 'pending' and e.id = d.endpoint_id and e.removed_at is not null`);
  const [row] = rowsOf<Pending>(
    await db.execute(sql`
      select d.id, d.org_id, d.attempts, e.id as endpoint_id, e.url, e.secret_sealed, v.id as event_id, v.type as event_type, v.data, ${isoTime(sql`v.created_at`)} as event_at
      from event_deliveries d join webhook_endpoints e on e.id = d.endpoint_id join outbound_events v on v.id = d.event_id
      where d.id = ${args.deliveryId} and d.status = 'pending' and e.removed_at is null`),
  );
  return row ?? null;
}

async function recordAttempt(
  db: Db,
  args: { deliveryId: string; result: AttemptResult; now: string },
): Promise<{ status: DeliveryStatus; attempts: number; nextAt: string | null }> {
  const settled = await settleAttempt(db, {
    table: 'event_deliveries',
    id: args.deliveryId,
    job: deliverEventJob,
    payload: { deliveryId: args.deliveryId },
    result: args.result,
    now: args.now,
  });
  return settled ?? { status: 'delivered', attempts: 0, nextAt: null };
}

/** Sends one delivery: the answer's status, or why there was none. Never throws. */
export async function attemptDelivery(
  pending: Pending,
  settings: ActionSettings,
  now = Date.now(),
  network: Network = SYSTEM_NETWORK,
): Promise<AttemptResult> {
  const started = performance.now();
  const done = (partial: Omit<AttemptResult, 'ms'>): AttemptResult => ({ ...partial, ms: Math.round(performance.now() - started) });
  if (!settings.secretKey)
    return done({
      status: null,
      error: 'SECRET_KEY is not available to the worker: the delivery cannot be signed',
      retryAfterSeconds: null,
      final: false,
    });
  let secret: string;
  try {
    secret = openSecret(pending.secret_sealed, settings.secretKey, pending.endpoint_id);
  } catch (error) {
    return done({ status: null, error: `the endpoint's secret does not open: ${messageOf(error)}`, retryAfterSeconds: null, final: true });
  }
  const url = new URL(pending.url);
  const target = new URL(url.href);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'revintel-webhooks/1' };
  let tls: BunFetchRequestInitTLS | undefined = network.ca ? { ca: network.ca } : undefined;
  try {
    const destination = await resolveDestination(url, settings.allowPrivateEndpoints, network);
    // The request goes to the very address just checked (so a second lookup cannot swap it: DNS
    // rebinding); the Host header names the site and, over HTTPS, the name is the SNI and what the
    // certificate must match. Bun's fetch takes both (`tls.serverName`, `checkServerIdentity`).
    if (!isIP(hostOf(url))) {
      target.hostname = destination.family === 6 ? `[${destination.address}]` : destination.address;
      headers.host = url.host;
      if (url.protocol === 'https:')
        tls = { ...tls, serverName: url.hostname, checkServerIdentity: (_address, cert) => checkServerIdentity(url.hostname, cert) };
    }
  } catch (error) {
    const refused = error instanceof RefusedDestination;
    return done({
      status: null,
      error: refused ? DELIVERY_REFUSED : 'name lookup failed',
      retryAfterSeconds: null,
      final: refused,
      detail: messageOf(error),
    });
  }
  const timestamp = Math.floor(now / 1000);
  const body = JSON.stringify({ type: pending.event_type, timestamp: new Date(now).toISOString(), data: pending.data });
  headers['webhook-id'] = pending.event_id;
  headers['webhook-timestamp'] = String(timestamp);
  headers['webhook-signature'] = signWebhook(secret, pending.event_id, timestamp, body);
  try {
    // A redirect is an answer like any other 3xx, final: following it would need every hop checked.
    const response = await fetch(target, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(OUTBOX_TIMEOUT_MS),
      tls,
    });
    await response.arrayBuffer().catch(() => undefined);
    const status = response.status;
    if (status >= 200 && status < 300) return done({ status, error: null, retryAfterSeconds: null, final: false });
    const retryable = status === 408 || status === 429 || status >= 500;
    const why = status >= 300 && status < 400 ? `http ${status} (redirects are not followed)` : `http ${status}`;
    return done({
      status,
      error: retryable ? why : `${why}: not retried`,
      retryAfterSeconds: retryAfterOf(response.headers.get('retry-after'), now),
      final: !retryable,
    });
  } catch (error) {
    // The log gets the error's code and the address, not its message: Bun's names the whole URL,
    // whose path or query may hold the receiver's own token.
    const code = (error as { code?: unknown } | null)?.code;
    return done({
      status: null,
      error: connectionFailure(error),
      retryAfterSeconds: null,
      final: false,
      detail: `${typeof code === 'string' && code ? code : error instanceof Error ? error.name : 'error'} connecting to ${target.host}`,
    });
  }
}

const units = {
  load: (db: Db, args: { deliveryId: string }) => loadPending(db, args),
  record: (db: Db, args: { deliveryId: string; result: AttemptResult; now: string }) => recordAttempt(db, args),
};

/** `outbox.deliver`: one attempt of one delivery. The delivery keeps its own attempts and back-off
 * (a retry is the next job); the job fails only when the database does. */
export const deliverEventJob = defineJobKind({
  kind: 'outbox.deliver',
  payload: t.Object({ deliveryId: t.String({ minLength: 1, maxLength: 100 }) }),
  retry: { maxAttempts: 5 },
  units,
  handle: async (payload, ctx) => {
    if (!ctx.job.orgId) throw new PermanentJobError('outbox.deliver needs an organisation');
    const pending = await ctx.run('load', payload);
    if (!pending) return { skipped: true };
    const result = await attemptDelivery(pending, ctx.settings.actions);
    const recorded = await ctx.run('record', { deliveryId: payload.deliveryId, result, now: new Date().toISOString() });
    return { status: recorded.status, attempts: recorded.attempts, http_status: result.status, error: result.error, detail: result.detail };
  },
});

// --- reads and the operator's retry ---------------------------------------------------------------

const keyset = newestFirst('d');

export interface DeliveryRow {
  id: string;
  org_id: string;
  endpoint_id: string;
  url: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  history: { at: string; status: number | null; error: string | null; ms: number }[];
  delivered_at: string | null;
  created_at: string;
  sort_value: string;
}

export async function listDeliveries(
  db: Db,
  input: { orgId?: string; status?: DeliveryStatus; endpointId?: string; eventType?: string; limit: number; cursor?: string },
): Promise<DeliveryRow[]> {
  const where: SQL[] = [];
  if (input.orgId) where.push(sql`d.org_id = ${input.orgId}`);
  if (input.status) where.push(sql`d.status = ${input.status}`);
  if (input.endpointId) where.push(sql`d.endpoint_id = ${input.endpointId}`);
  if (input.eventType) where.push(sql`d.event_type = ${input.eventType}`);
  if (input.cursor) {
    const position = decodeCursor(input.cursor, 'created_at', 'timestamp');
    where.push(keyset.after(position.value, position.id));
  }
  return queryRows<DeliveryRow>(
    db,
    sql`select d.id, d.org_id, d.endpoint_id, e.url, d.event_id, d.event_type, d.status, d.attempts, ${isoTime(sql`d.next_attempt_at`)} as next_attempt_at,
          d.last_status, d.last_error, d.history, ${isoTime(sql`d.delivered_at`)} as delivered_at, ${isoTime(sql`d.created_at`)} as created_at, ${keyset.value} as sort_value
        from event_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
        where true ${andAll(where)} order by ${keyset.order} ${limitTo(input.limit + 1)}`,
  );
}

/** An error as the organisation may see it. Rows written before errors were categories hold the
 * network's own words (addresses, ports, the receiver's answer): they are shown by category too. */
function shownError(error: string | null): string | null {
  if (error === null) return null;
  if (
    /^(http \d{3}|timeout|TLS failed$|connect failed$|name lookup failed$|refused: |the endpoint was removed$|SECRET_KEY is not available|the endpoint's secret does not open)/.test(
      error,
    )
  )
    return error;
  return /not a public address|loopback or private address/.test(error) ? DELIVERY_REFUSED : 'connect failed';
}

export const presentDelivery = ({ sort_value: _, org_id: __, ...row }: DeliveryRow) => ({
  ...row,
  last_error: shownError(row.last_error),
  history: row.history.map((attempt) => ({ ...attempt, error: shownError(attempt.error) })),
});

/** Dead deliveries back to pending with fresh attempts, due now (by id, or every dead one). */
export async function retryDeliveries(db: Db, input: { ids?: string[]; orgId?: string }): Promise<string[]> {
  const where = input.ids
    ? sql`id in (${sql.join(
        input.ids.map((id) => sql`${id}`),
        sql`, `,
      )})`
    : input.orgId
      ? sql`org_id = ${input.orgId}`
      : sql`true`;
  const rows = rowsOf<{ id: string; org_id: string }>(
    await db.execute(sql`
      update event_deliveries set status = 'pending', attempts = 0, next_attempt_at = now(), updated_at = now()
      where status = 'dead' and ${where} returning id, org_id`),
  );
  for (const row of rows) await enqueueJob(db, deliverEventJob, { deliveryId: row.id }, { orgId: row.org_id, dedupeKey: row.id });
  return rows.map((r) => r.id);
}

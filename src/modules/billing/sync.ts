// The backfill (docs/billing.md "Backfill"): a connector's customers, subscriptions (all statuses) and
// invoices read from the platform's list endpoints, 100 a page, at most BILLING_MAX_RPS requests a
// second, a 429 waited out (Retry-After when given, else doubling from half a second). Each page is
// stored with the cursor after it in one unit of work, so a run killed at any point resumes from the
// last page stored and stores nothing twice; the objects become `sync` events and `billing.apply`
// maps them like webhook events.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { billingSyncs, type BillingConnector, type BillingObjectType, type BillingSync } from '../../db/schema/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { randomBase62 } from '../../lib/ids.ts';
import { openBillingConnector } from './connectors.ts';
import { storeBillingEvents, syncEventOf } from './events.ts';
import { chargebeeList, chargebeeObjects, stripeList, stripeObjects } from './payloads.ts';
import type { JsonObject } from '../signed-webhooks/payload.ts';

/** An object as a list page gave it, checked against its kind's schema. */
type ListedObject = { id: string } & JsonObject;

export const SYNC_PHASES: BillingObjectType[] = ['customer', 'subscription', 'invoice'];
export const PAGE_SIZE = 100;

export interface SyncSettings {
  stripeApiBase: string;
  chargebeeApiBase: string;
  maxRps: number;
  /** Objects a page (the platforms' most, 100, unless a test asks for fewer). */
  pageSize?: number;
}

export type SyncCounts = Record<string, Record<string, number>>;

/** Starts a sync of the connector, or answers the one still running (a resumed run continues it). */
export async function startSync(db: Db, args: { connectorId: string; orgId?: string }): Promise<{ sync: BillingSync; resumed: boolean }> {
  const [connector] = rowsOf<{ id: string; org_id: string }>(
    await db.execute(
      sql`select id, org_id from billing_connectors where id = ${args.connectorId} ${args.orgId ? sql`and org_id = ${args.orgId}` : sql``}`,
    ),
  );
  if (!connector) throw notFound(`Billing connector ${args.connectorId}`);
  // One at a time per connector: the row lock serialises two starts.
  await db.execute(sql`select 1 from billing_connectors where id = ${connector.id} for update`);
  const [running] = await db
    .select()
    .from(billingSyncs)
    .where(sql`${billingSyncs.connectorId} = ${connector.id} and ${billingSyncs.state} = 'running'`);
  if (running) return { sync: running, resumed: true };
  const [sync] = await db
    .insert(billingSyncs)
    .values({ id: `bsy_${randomBase62(20)}`, orgId: connector.org_id, connectorId: connector.id, phase: 'customer' })
    .returning();
  return { sync: sync!, resumed: false };
}

export async function loadSync(db: Db, args: { syncId: string }): Promise<{ sync: BillingSync; connector: BillingConnector } | null> {
  const [sync] = await db.select().from(billingSyncs).where(sql`${billingSyncs.id} = ${args.syncId}`);
  if (!sync) return null;
  const [connector] = rowsOf<BillingConnector>(
    await db.execute(sql`
      select id, org_id as "orgId", name, platform, mode, site, webhook_secret_sealed as "webhookSecretSealed",
             previous_webhook_secret_sealed as "previousWebhookSecretSealed", previous_secret_expires_at as "previousSecretExpiresAt",
             api_key_sealed as "apiKeySealed", basic_auth_sealed as "basicAuthSealed", created_at as "createdAt", updated_at as "updatedAt"
      from billing_connectors where id = ${sync.connectorId}`),
  );
  return connector ? { sync, connector } : null;
}

export interface PageArgs {
  syncId: string;
  /** Where the run read this page from: a sync another run moved on from refuses the page. */
  fromPhase: string;
  fromCursor: string | null;
  objectType: BillingObjectType;
  objects: ListedObject[];
  /** Where the sync stands once this page is stored. */
  nextPhase: string;
  nextCursor: string | null;
  /** Unix seconds: the snapshots' time. */
  readAt: number;
  requests: number;
  rateLimited: number;
  /** Where Stripe's API is, for the apply job's re-reads of ties. */
  stripeApiBase?: string;
}

/** Stores one page's objects as sync events and moves the sync past it, in one transaction. */
export async function storeSyncPage(db: Db, args: PageArgs): Promise<{ stored: number; unchanged: number; sync: BillingSync }> {
  const loaded = await loadSync(db, { syncId: args.syncId });
  if (!loaded) throw notFound(`Billing sync ${args.syncId}`);
  const { connector } = loaded;
  const [current] = rowsOf<{ phase: string; cursor: string | null; state: string }>(
    await db.execute(sql`select phase, cursor, state from billing_syncs where id = ${args.syncId} for update`),
  );
  if (current?.state !== 'running' || current.phase !== args.fromPhase || current.cursor !== args.fromCursor)
    throw new AppError('conflict', `billing sync ${args.syncId} moved on without this run (another run is doing it)`);
  // The page in one statement, with one apply queued for it.
  const results = await storeBillingEvents(
    db,
    args.objects.map((object) => {
      const livemode = typeof object.livemode === 'boolean' ? object.livemode : connector.mode === 'live';
      return { connector, body: syncEventOf(connector.platform, args.objectType, object, args.readAt, livemode), source: 'sync' as const };
    }),
    { stripeApiBase: args.stripeApiBase },
  );
  const stored = results.filter((r) => r.created).length;
  const unchanged = results.length - stored;
  const key = `${args.objectType}s`;
  const [sync] = await db
    .update(billingSyncs)
    .set({
      phase: args.nextPhase,
      cursor: args.nextCursor,
      pages: sql`${billingSyncs.pages} + 1`,
      requests: sql`${billingSyncs.requests} + ${args.requests}`,
      rateLimited: sql`${billingSyncs.rateLimited} + ${args.rateLimited}`,
      report: sql`jsonb_set(${billingSyncs.report}, ${`{${key}}`}::text[], jsonb_build_object(
        'read', coalesce((${billingSyncs.report}->${key}->>'read')::int, 0) + ${args.objects.length},
        'new', coalesce((${billingSyncs.report}->${key}->>'new')::int, 0) + ${stored},
        'unchanged', coalesce((${billingSyncs.report}->${key}->>'unchanged')::int, 0) + ${unchanged}))`,
      updatedAt: sql`now()`,
    })
    .where(sql`${billingSyncs.id} = ${args.syncId}`)
    .returning();
  return { stored, unchanged, sync: sync! };
}

export async function settleSync(db: Db, args: { syncId: string; error: string | null; report?: SyncCounts }): Promise<BillingSync> {
  const [sync] = await db
    .update(billingSyncs)
    .set({
      state: args.error ? 'failed' : 'done',
      error: args.error,
      ...(args.report ? { report: sql`${billingSyncs.report} || ${JSON.stringify(args.report)}::jsonb` } : {}),
      finishedAt: sql`now()`,
      updatedAt: sql`now()`,
    })
    .where(sql`${billingSyncs.id} = ${args.syncId}`)
    .returning();
  if (!sync) throw notFound(`Billing sync ${args.syncId}`);
  return sync;
}

/** The units a backfill runs, wherever it runs (the worker's job, or the CLI). */
export const syncUnits = {
  'billing.sync-load': (db: Db, args: { syncId: string }) => loadSync(db, args),
  'billing.sync-page': (db: Db, args: PageArgs) => storeSyncPage(db, args),
  'billing.sync-settle': (db: Db, args: { syncId: string; error: string | null }) => settleSync(db, args),
};
type SyncUnits = typeof syncUnits;
export type SyncRun = <K extends keyof SyncUnits>(unit: K, args: Parameters<SyncUnits[K]>[1]) => ReturnType<SyncUnits[K]>;

/** Paces requests to `maxRps` a second. */
function pacer(maxRps: number) {
  let next = 0;
  return async () => {
    const now = Date.now();
    const wait = next - now;
    next = Math.max(now, next) + 1000 / maxRps;
    if (wait > 0) await Bun.sleep(wait);
  };
}

const MAX_RATE_LIMITED_IN_A_ROW = 8;

interface PageResult {
  objects: ListedObject[];
  nextCursor: string | null;
}

/** One list request against the platform, with 429s waited out. */
async function fetchPage(
  connector: BillingConnector,
  apiKey: string,
  objectType: BillingObjectType,
  cursor: string | null,
  settings: SyncSettings,
  pace: () => Promise<void>,
  counters: { requests: number; rateLimited: number },
): Promise<PageResult> {
  const stripe = connector.platform === 'stripe';
  const base = (stripe ? settings.stripeApiBase : settings.chargebeeApiBase.replaceAll('{site}', connector.site ?? '')).replace(/\/+$/, '');
  const path = stripe ? `/v1/${objectType}s` : `/api/v2/${objectType}s`;
  const query = new URLSearchParams({ limit: String(settings.pageSize ?? PAGE_SIZE) });
  if (stripe && objectType === 'subscription') query.set('status', 'all');
  if (cursor) query.set(stripe ? 'starting_after' : 'offset', cursor);
  const headers = {
    authorization: stripe ? `Bearer ${apiKey}` : `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`,
    accept: 'application/json',
  };
  for (let attempt = 1; ; attempt++) {
    await pace();
    counters.requests++;
    const response = await fetch(`${base}${path}?${query}`, { headers, signal: AbortSignal.timeout(30_000) });
    if (response.status === 429) {
      counters.rateLimited++;
      await response.arrayBuffer();
      if (attempt > MAX_RATE_LIMITED_IN_A_ROW) throw new AppError('upstream_unavailable', `${connector.platform} kept answering 429`);
      const retryAfter = Number(response.headers.get('retry-after'));
      const seconds = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 120) : Math.min(30, 0.5 * 2 ** (attempt - 1));
      await Bun.sleep(seconds * 1000);
      continue;
    }
    if (!response.ok) {
      const text = (await response.text()).slice(0, 300);
      throw new AppError('upstream_unavailable', `${connector.platform} answered ${response.status} to ${path}: ${text}`);
    }
    const body: unknown = await response.json();
    // Each object is checked against its kind's schema: a page that is not what the platform
    // documents fails the run with the field named, rather than writing guesses.
    if (stripe) {
      const page = stripeList(body);
      const objects = page.data.map((object) => stripeObjects[objectType](object));
      const last = objects[objects.length - 1];
      return { objects, nextCursor: page.has_more && last ? last.id : null };
    }
    const page = chargebeeList(body);
    const objects = page.list.map((entry) => chargebeeObjects[objectType](entry[objectType]));
    return { objects, nextCursor: page.next_offset ?? null };
  }
}

export interface BackfillOptions {
  syncId: string;
  settings: SyncSettings;
  secretKey: string | null;
  run: SyncRun;
  onPage?: (sync: BillingSync) => void;
}

/** Runs (or resumes) the sync to its end; the sync row says how it ended. */
export async function runBackfill(options: BackfillOptions): Promise<BillingSync> {
  const loaded = await options.run('billing.sync-load', { syncId: options.syncId });
  if (!loaded) throw notFound(`Billing sync ${options.syncId}`);
  let { sync } = loaded;
  if (sync.state !== 'running') return sync;
  try {
    const apiKey = openBillingConnector(loaded.connector, options.secretKey).apiKey;
    if (!apiKey) throw new AppError('validation_failed', `billing connector ${loaded.connector.name} has no API key to read with`);
    const pace = pacer(options.settings.maxRps);
    while (SYNC_PHASES.includes(sync.phase as BillingObjectType)) {
      const objectType = sync.phase as BillingObjectType;
      const counters = { requests: 0, rateLimited: 0 };
      const page = await fetchPage(loaded.connector, apiKey, objectType, sync.cursor, options.settings, pace, counters);
      const nextPhase = page.nextCursor ? objectType : (SYNC_PHASES[SYNC_PHASES.indexOf(objectType) + 1] ?? 'done');
      ({ sync } = await options.run('billing.sync-page', {
        syncId: sync.id,
        fromPhase: sync.phase,
        fromCursor: sync.cursor,
        objectType,
        objects: page.objects,
        nextPhase,
        nextCursor: page.nextCursor,
        readAt: Math.floor(Date.now() / 1000),
        stripeApiBase: options.settings.stripeApiBase,
        ...counters,
      }));
      options.onPage?.(sync);
    }
    return await options.run('billing.sync-settle', { syncId: sync.id, error: null });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Another run holds the sync: it is that run's to finish.
    if ((error as { code?: string }).code === 'conflict') return sync;
    // A failed run keeps its cursor: `billing sync` again starts a new run from the beginning, but
    // every page already stored is unchanged and costs no apply.
    return options.run('billing.sync-settle', { syncId: sync.id, error: message.slice(0, 500) });
  }
}

export function presentSync(sync: BillingSync, jobId: string | null = null) {
  return {
    id: sync.id,
    connector_id: sync.connectorId,
    state: sync.state,
    phase: sync.phase,
    pages: sync.pages,
    requests: sync.requests,
    rate_limited: sync.rateLimited,
    report: sync.report,
    error: sync.error,
    job_id: jobId,
    created_at: sync.createdAt.toISOString(),
    finished_at: sync.finishedAt?.toISOString() ?? null,
  };
}

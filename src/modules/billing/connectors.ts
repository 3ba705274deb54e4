// Billing connectors (docs/billing.md "Connecting"): a Stripe account or a Chargebee site an
// organisation's ARR data comes from. Secrets (Stripe's endpoint secret, the API key, Chargebee's
// webhook Basic credentials) arrive here sealed by whoever holds SECRET_KEY (lib/secret-box.ts),
// bound to the connector's id, and never leave: a listing says which ones a connector has.
import { and, asc, eq, sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { constraintViolation } from '../../db/upsert.ts';
import {
  BILLING_MODES,
  BILLING_PLATFORMS,
  billingConnectors,
  type BillingConnector,
  type BillingMode,
  type BillingPlatform,
} from '../../db/schema/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { randomBase62 } from '../../lib/ids.ts';
import { openSecret } from '../../lib/secret-box.ts';
import { recordAudit } from '../audit/service.ts';
import { findOrg } from '../orgs/service.ts';
import type { OpenedBillingConnector } from './signatures.ts';

/** In the webhook URL, so as unguessable as a ticket connector's id (154 random bits). */
export const newBillingConnectorId = () => `bcn_${randomBase62(26)}`;

export interface CreateBillingConnectorInput {
  id: string;
  org: string;
  name: string;
  platform: string;
  mode?: string;
  site?: string | null;
  webhookSecretSealed?: string | null;
  apiKeySealed?: string | null;
  basicAuthSealed?: string | null;
  actor: string;
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name || name.length > 200) throw new AppError('validation_failed', 'name must be 1 to 200 characters');
  return name;
}

async function explainNameTaken<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (constraintViolation(error)?.constraint === 'billing_connectors_org_name_unique')
      throw new AppError('conflict', `a billing connector named "${name}" already exists in this organisation`);
    throw error;
  }
}

export async function createBillingConnector(db: Db, input: CreateBillingConnectorInput): Promise<BillingConnector> {
  const org = await findOrg(db, input.org);
  const name = checkName(input.name);
  if (!(BILLING_PLATFORMS as readonly string[]).includes(input.platform))
    throw new AppError('validation_failed', `platform must be one of ${BILLING_PLATFORMS.join(', ')}; got "${input.platform}"`);
  const platform = input.platform as BillingPlatform;
  const mode = (input.mode ?? 'live') as BillingMode;
  if (!BILLING_MODES.includes(mode)) throw new AppError('validation_failed', `mode must be live or test; got "${input.mode}"`);
  const site = input.site?.trim() || null;
  if (platform === 'chargebee' && !site)
    throw new AppError('validation_failed', 'a Chargebee connector needs its site (acme of acme.chargebee.com)');
  if (platform === 'stripe' && site) throw new AppError('validation_failed', 'a Stripe connector has no site');
  if (site && !/^[a-z0-9][a-z0-9-]{0,62}$/.test(site))
    throw new AppError('validation_failed', `site must be a Chargebee site name; got "${site}"`);
  if (!/^bcn_[0-9A-Za-z]{26}$/.test(input.id)) throw new AppError('validation_failed', 'billing connector id is malformed');
  const [row] = await explainNameTaken(name, () =>
    db
      .insert(billingConnectors)
      .values({
        id: input.id,
        orgId: org.id,
        name,
        platform,
        mode,
        site,
        webhookSecretSealed: input.webhookSecretSealed ?? null,
        apiKeySealed: input.apiKeySealed ?? null,
        basicAuthSealed: input.basicAuthSealed ?? null,
      })
      .returning(),
  );
  await recordAudit(db, {
    orgId: org.id,
    actor: input.actor,
    action: 'billing_connector.created',
    targetType: 'billing_connector',
    targetId: row!.id,
    details: { name, platform, mode, site },
  });
  return row!;
}

export async function listBillingConnectors(db: Db, filter: { org?: string; orgId?: string }): Promise<BillingConnector[]> {
  const orgId = filter.orgId ?? (filter.org ? (await findOrg(db, filter.org)).id : null);
  return db
    .select()
    .from(billingConnectors)
    .where(orgId ? eq(billingConnectors.orgId, orgId) : undefined)
    .orderBy(asc(billingConnectors.orgId), asc(billingConnectors.createdAt), asc(billingConnectors.id));
}

/** By id (within `orgId` when given: another organisation's is not found), or by exact name within `org`. */
export async function findBillingConnector(db: Db, ref: string, scope: { orgId?: string; org?: string } = {}): Promise<BillingConnector> {
  const orgId = scope.orgId ?? (scope.org ? (await findOrg(db, scope.org)).id : undefined);
  const [byId] = await db
    .select()
    .from(billingConnectors)
    .where(and(eq(billingConnectors.id, ref), orgId ? eq(billingConnectors.orgId, orgId) : undefined));
  if (byId) return byId;
  if (orgId) {
    const [byName] = await db
      .select()
      .from(billingConnectors)
      .where(and(eq(billingConnectors.orgId, orgId), eq(billingConnectors.name, ref)));
    if (byName) return byName;
  }
  throw notFound(`Billing connector ${ref}`);
}

export interface UpdateBillingConnectorInput {
  connector: string;
  orgId?: string;
  name?: string;
  mode?: string;
  /** A new Stripe endpoint secret, sealed; the current one stays valid for `graceSeconds`. */
  webhookSecretSealed?: string;
  graceSeconds?: number;
  apiKeySealed?: string;
  basicAuthSealed?: string;
  actor: string;
}

export async function updateBillingConnector(db: Db, input: UpdateBillingConnectorInput): Promise<BillingConnector> {
  const current = await findBillingConnector(db, input.connector, { orgId: input.orgId });
  const changes: Partial<typeof billingConnectors.$inferInsert> = {};
  if (input.name !== undefined) changes.name = checkName(input.name);
  if (input.mode !== undefined) {
    if (!(BILLING_MODES as readonly string[]).includes(input.mode)) throw new AppError('validation_failed', 'mode must be live or test');
    changes.mode = input.mode as BillingMode;
  }
  if (input.apiKeySealed !== undefined) changes.apiKeySealed = input.apiKeySealed;
  if (input.basicAuthSealed !== undefined) changes.basicAuthSealed = input.basicAuthSealed;
  const rotating = input.webhookSecretSealed !== undefined;
  const grace = input.graceSeconds ?? 24 * 3600;
  const keepsPrevious = rotating && current.webhookSecretSealed !== null && grace > 0;
  if (rotating) {
    Object.assign(changes, {
      webhookSecretSealed: input.webhookSecretSealed,
      previousWebhookSecretSealed: keepsPrevious ? current.webhookSecretSealed : null,
      previousSecretExpiresAt: keepsPrevious ? sql`now() + ${`${grace} seconds`}::interval` : null,
    });
  }
  if (Object.keys(changes).length === 0) throw new AppError('validation_failed', 'nothing to change');
  const [row] = await explainNameTaken(changes.name ?? current.name, () =>
    db
      .update(billingConnectors)
      .set({ ...changes, updatedAt: sql`now()` })
      .where(eq(billingConnectors.id, current.id))
      .returning(),
  );
  await recordAudit(db, {
    orgId: current.orgId,
    actor: input.actor,
    action: 'billing_connector.updated',
    targetType: 'billing_connector',
    targetId: current.id,
    details: {
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.mode !== undefined ? { mode: changes.mode } : {}),
      ...(rotating ? { webhook_secret_rotated: true, previous_valid_until: row!.previousSecretExpiresAt?.toISOString() ?? null } : {}),
      ...(input.apiKeySealed !== undefined ? { api_key_changed: true } : {}),
      ...(input.basicAuthSealed !== undefined ? { basic_auth_changed: true } : {}),
    },
  });
  return row!;
}

/** Removes the connector with its stored events and syncs; the records it wrote stay (they are the
 * organisation's data now, as an import's are). */
export async function deleteBillingConnector(
  db: Db,
  input: { connector: string; orgId?: string; actor: string },
): Promise<BillingConnector> {
  const current = await findBillingConnector(db, input.connector, { orgId: input.orgId });
  await db.delete(billingConnectors).where(eq(billingConnectors.id, current.id));
  await recordAudit(db, {
    orgId: current.orgId,
    actor: input.actor,
    action: 'billing_connector.deleted',
    targetType: 'billing_connector',
    targetId: current.id,
    details: { name: current.name, platform: current.platform },
  });
  return current;
}

export const billingWebhookUrl = (connectorId: string, publicUrl: string | null) =>
  `${publicUrl ? publicUrl.replace(/\/+$/, '') : ''}/api/webhooks/billing?connectorId=${connectorId}`;

export function presentBillingConnector(row: BillingConnector, publicUrl: string | null, now = Date.now()) {
  const rotating = row.previousWebhookSecretSealed !== null && (row.previousSecretExpiresAt?.getTime() ?? 0) > now;
  return {
    id: row.id,
    org_id: row.orgId,
    name: row.name,
    platform: row.platform,
    mode: row.mode,
    site: row.site,
    webhook_url: billingWebhookUrl(row.id, publicUrl),
    webhook_secret: row.webhookSecretSealed !== null,
    api_key: row.apiKeySealed !== null,
    basic_auth: row.basicAuthSealed !== null,
    previous_secret_valid_until: rotating ? row.previousSecretExpiresAt!.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The connector's sealed secrets opened (throws when this server's SECRET_KEY cannot open one):
 * what the webhook's connector cache keeps, so a delivery decrypts nothing. */
export interface OpenedBillingSecrets {
  webhookSecret: string | null;
  previousWebhookSecret: string | null;
  /** The previous secret did not open: refused only while it is in its grace (as before a cache). */
  previousUnreadable: boolean;
  basicAuth: string | null;
  apiKey: string | null;
}

export function openBillingSecrets(row: BillingConnector, secretKey: string | null): OpenedBillingSecrets {
  const open = (sealed: string | null) => {
    if (sealed === null) return null;
    if (!secretKey) throw new AppError('not_configured', 'SECRET_KEY is not set on this server: billing secrets cannot be opened');
    return openSecret(sealed, secretKey, row.id);
  };
  let previousWebhookSecret: string | null = null;
  let previousUnreadable = false;
  try {
    previousWebhookSecret = open(row.previousWebhookSecretSealed);
  } catch {
    previousUnreadable = true;
  }
  return {
    webhookSecret: open(row.webhookSecretSealed),
    previousWebhookSecret,
    previousUnreadable,
    basicAuth: open(row.basicAuthSealed),
    apiKey: open(row.apiKeySealed),
  };
}

/** The credentials valid at `now`: the previous webhook secret only within its grace. */
export function billingCredentialsAt(
  row: BillingConnector,
  secrets: OpenedBillingSecrets,
  now: number,
): OpenedBillingConnector & { apiKey: string | null } {
  const inGrace = row.previousWebhookSecretSealed !== null && (row.previousSecretExpiresAt?.getTime() ?? 0) > now;
  if (inGrace && secrets.previousUnreadable)
    throw new AppError('not_configured', 'the previous webhook secret does not open with this SECRET_KEY');
  const previousValid = inGrace && secrets.previousWebhookSecret !== null;
  return {
    platform: row.platform,
    webhookSecrets: [secrets.webhookSecret, previousValid ? secrets.previousWebhookSecret : null].filter((s): s is string => s !== null),
    basicAuth: secrets.basicAuth,
    apiKey: secrets.apiKey,
  };
}

/** The connector's credentials in the clear, for verifying a webhook or calling the platform. */
export function openBillingConnector(
  row: BillingConnector,
  secretKey: string | null,
  now = Date.now(),
): OpenedBillingConnector & { apiKey: string | null } {
  return billingCredentialsAt(row, openBillingSecrets(row, secretKey), now);
}

/** The connector's events by state, and its last backfill's id. */
export async function connectorStatus(db: Db, connectorId: string) {
  const counts = rowsOf<{ state: string; n: number }>(
    await db.execute(sql`select state, count(*)::int as n from billing_events where connector_id = ${connectorId} group by state`),
  );
  const events = { pending: 0, applied: 0, ignored: 0, dead: 0 } as Record<string, number>;
  for (const row of counts) events[row.state] = row.n;
  const [last] = rowsOf<{ id: string }>(
    await db.execute(sql`select id from billing_syncs where connector_id = ${connectorId} order by created_at desc, id desc limit 1`),
  );
  return { events, lastSyncId: last?.id ?? null };
}

// Connectors (docs/tickets.md "Connecting a platform"): where an organisation's tickets come from. Secrets
// arrive here already sealed (lib/secret-box.ts) by whoever holds SECRET_KEY — the CLI seals before
// it asks, so a secret's plaintext never crosses the admin socket — and they never leave: listings
// say whether a connector is signed, not with what.
import { and, asc, eq, isNotNull, sql } from 'drizzle-orm';
import { connectors, type Connector } from '../../../db/schema/index.ts';
import type { Db } from '../../../db/client.ts';
import { AppError, notFound } from '../../../lib/errors.ts';
import { newConnectorId } from '../../../lib/ids.ts';
import { recordAudit } from '../../audit/service.ts';
import { constraintViolation } from '../../../db/upsert.ts';
import { findOrg } from '../../orgs/service.ts';
import { isPlatform, PLATFORMS, type Platform } from '../platforms.ts';

export { DEFAULT_ROTATION_GRACE_SECONDS } from './rotation.ts';

const IMPORT_CONNECTOR = { builtin: 'api_import', name: 'API import', platform: 'generic' as Platform };

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name) throw new AppError('validation_failed', 'name must not be empty');
  if (name.length > 200) throw new AppError('validation_failed', 'name must be at most 200 characters');
  // The built-in import connector is made on first use under this name: it must stay free.
  if (name.toLowerCase() === IMPORT_CONNECTOR.name.toLowerCase())
    throw new AppError('validation_failed', `"${IMPORT_CONNECTOR.name}" is the name of the built-in import connector`);
  return name;
}

function checkPlatform(raw: string): Platform {
  if (!isPlatform(raw)) throw new AppError('validation_failed', `platform must be one of ${PLATFORMS.join(', ')}; got "${raw}"`);
  return raw;
}

/** A unique-name violation as the operator should read it. */
async function explainNameTaken<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (constraintViolation(error)?.constraint === 'connectors_org_name_unique') {
      throw new AppError('conflict', `a connector named "${name}" already exists in this organisation`);
    }
    throw error;
  }
}

export interface CreateConnectorInput {
  /** Made by the caller (newConnectorId) because the sealed secret is bound to it. */
  id: string;
  org: string;
  name: string;
  platform: string;
  secretSealed: string | null;
  tokenHash: string | null;
  actor: string;
}

export async function createConnector(db: Db, input: CreateConnectorInput): Promise<Connector> {
  const org = await findOrg(db, input.org);
  const name = checkName(input.name);
  const platform = checkPlatform(input.platform);
  if (!/^con_[0-9A-Za-z]{26}$/.test(input.id)) throw new AppError('validation_failed', 'connector id is malformed');
  const [row] = await explainNameTaken(name, () =>
    db
      .insert(connectors)
      .values({ id: input.id, orgId: org.id, name, platform, secretSealed: input.secretSealed, tokenHash: input.tokenHash })
      .returning(),
  );
  await recordAudit(db, {
    orgId: org.id,
    actor: input.actor,
    action: 'connector.created',
    targetType: 'connector',
    targetId: row!.id,
    details: { name, platform, signed: input.secretSealed !== null, token: input.tokenHash !== null },
  });
  return row!;
}

/** By id, or by exact name within `org` when given. */
export async function findConnector(db: Db, ref: string, org?: string): Promise<Connector> {
  if (ref.startsWith('con_')) {
    const [row] = await db.select().from(connectors).where(eq(connectors.id, ref));
    if (row) return row;
  }
  if (org) {
    const { id: orgId } = await findOrg(db, org);
    const [row] = await db
      .select()
      .from(connectors)
      .where(and(eq(connectors.orgId, orgId), eq(connectors.name, ref)));
    if (row) return row;
  }
  throw notFound(`Connector ${ref}`);
}

export async function listConnectors(db: Db, filter: { org?: string; orgId?: string }): Promise<Connector[]> {
  const orgId = filter.orgId ?? (filter.org ? (await findOrg(db, filter.org)).id : null);
  return db
    .select()
    .from(connectors)
    .where(orgId ? eq(connectors.orgId, orgId) : undefined)
    .orderBy(asc(connectors.orgId), asc(connectors.createdAt), asc(connectors.id));
}

export interface UpdateConnectorInput {
  connector: string;
  org?: string;
  name?: string;
  platform?: string;
  /** A new sealed token hash, or null to remove the token; absent leaves it. */
  tokenHash?: string | null;
  /** Removes the secret (and any previous one): the webhook stops requiring a signature. */
  removeSecret?: boolean;
  actor: string;
}

export async function updateConnector(db: Db, input: UpdateConnectorInput): Promise<Connector> {
  const current = await findConnector(db, input.connector, input.org);
  if (current.builtin) throw new AppError('validation_failed', `"${current.name}" is built in and cannot be changed`);
  const changes: Partial<typeof connectors.$inferInsert> = {};
  if (input.name !== undefined) changes.name = checkName(input.name);
  if (input.platform !== undefined) changes.platform = checkPlatform(input.platform);
  if (input.tokenHash !== undefined) changes.tokenHash = input.tokenHash;
  if (input.removeSecret) Object.assign(changes, { secretSealed: null, previousSecretSealed: null, previousSecretExpiresAt: null });
  if (Object.keys(changes).length === 0)
    throw new AppError('validation_failed', 'nothing to change: give --name, --platform, --token, --no-token or --no-secret');
  const [row] = await explainNameTaken(changes.name ?? current.name, () =>
    db
      .update(connectors)
      .set({ ...changes, updatedAt: sql`now()` })
      .where(eq(connectors.id, current.id))
      .returning(),
  );
  await recordAudit(db, {
    orgId: current.orgId,
    actor: input.actor,
    action: 'connector.updated',
    targetType: 'connector',
    targetId: current.id,
    details: {
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.platform !== undefined ? { platform: changes.platform } : {}),
      ...(input.tokenHash !== undefined ? { token: input.tokenHash !== null } : {}),
      ...(input.removeSecret ? { signed: false } : {}),
    },
  });
  return row!;
}

export interface RotateSecretInput {
  connector: string;
  org?: string;
  /** The new secret, sealed and bound to the connector's id. */
  secretSealed: string;
  /** How long the current secret keeps working beside the new one. */
  graceSeconds: number;
  actor: string;
}

/** The new secret becomes current; the old one stays valid for the grace period, so deliveries
 * signed by the platform's old setting are not refused while the operator changes it there. */
export async function rotateConnectorSecret(db: Db, input: RotateSecretInput): Promise<Connector> {
  const current = await findConnector(db, input.connector, input.org);
  if (current.builtin) throw new AppError('validation_failed', `"${current.name}" is built in and has no webhook secret`);
  if (!Number.isInteger(input.graceSeconds) || input.graceSeconds < 0 || input.graceSeconds > 30 * 24 * 3600) {
    throw new AppError('validation_failed', 'grace must be 0 to 30 days, in seconds');
  }
  const keepsPrevious = current.secretSealed !== null && input.graceSeconds > 0;
  const [row] = await db
    .update(connectors)
    .set({
      secretSealed: input.secretSealed,
      previousSecretSealed: keepsPrevious ? current.secretSealed : null,
      previousSecretExpiresAt: keepsPrevious ? sql`now() + ${`${input.graceSeconds} seconds`}::interval` : null,
      updatedAt: sql`now()`,
    })
    .where(eq(connectors.id, current.id))
    .returning();
  await recordAudit(db, {
    orgId: current.orgId,
    actor: input.actor,
    action: 'connector.secret_rotated',
    targetType: 'connector',
    targetId: current.id,
    details: { previous_valid_until: row!.previousSecretExpiresAt?.toISOString() ?? null },
  });
  return row!;
}

/** The organisation's built-in "API import" connector, made on first use (concurrent first uses
 * make one). */
export async function ensureImportConnector(db: Db, orgId: string): Promise<Connector> {
  const existing = await db
    .select()
    .from(connectors)
    .where(and(eq(connectors.orgId, orgId), eq(connectors.builtin, IMPORT_CONNECTOR.builtin), isNotNull(connectors.builtin)));
  if (existing[0]) return existing[0];
  await db
    .insert(connectors)
    .values({
      id: newConnectorId(),
      orgId,
      name: IMPORT_CONNECTOR.name,
      platform: IMPORT_CONNECTOR.platform,
      builtin: IMPORT_CONNECTOR.builtin,
    })
    .onConflictDoNothing();
  const [row] = await db
    .select()
    .from(connectors)
    .where(and(eq(connectors.orgId, orgId), eq(connectors.builtin, IMPORT_CONNECTOR.builtin)));
  if (!row) throw new Error('the API import connector could not be made');
  return row;
}

/** The connector's webhook address: PUBLIC_URL when set, else a path the operator completes. */
export const webhookUrl = (connectorId: string, publicUrl: string | null) =>
  `${publicUrl ? publicUrl.replace(/\/+$/, '') : ''}/api/webhooks/tickets?connectorId=${connectorId}`;

/** A connector as it may be shown: never a secret, a sealed secret or a token hash. */
export function presentConnector(row: Connector, publicUrl: string | null) {
  const rotating =
    row.previousSecretSealed !== null && row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt.getTime() > Date.now();
  return {
    id: row.id,
    org_id: row.orgId,
    name: row.name,
    platform: row.platform,
    builtin: row.builtin !== null,
    webhook_url: row.builtin ? null : webhookUrl(row.id, publicUrl),
    signed: row.secretSealed !== null,
    token: row.tokenHash !== null,
    previous_secret_valid_until: rotating ? row.previousSecretExpiresAt!.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { sha256Hex } from '../../lib/digest.ts';
import { apiKeys, organisations, type ApiKey, type Organisation, type User } from '../../db/schema/index.ts';
import type { Db } from '../../db/client.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { newId, randomBase62 } from '../../lib/ids.ts';
import { recordAudit } from '../audit/service.ts';
import { findOrg, limitsOf } from '../orgs/service.ts';
import type { Limits } from '../../lib/rate-limiter.ts';

/** `rvk_` + 40 base62 characters: about 238 random bits. */
const KEY_BODY_LENGTH = 40;
const KEY_PATTERN = /^rvk_[0-9A-Za-z]{32,128}$/;
/** What listings show: enough to tell keys apart, far too little to guess one. */
const PREFIX_LENGTH = 12;

export const hashKey = sha256Hex;

function generateKey() {
  const plaintext = `rvk_${randomBase62(KEY_BODY_LENGTH)}`;
  return { plaintext, prefix: plaintext.slice(0, PREFIX_LENGTH), hash: hashKey(plaintext) };
}

/** A key as it may be shown: never its hash. */
export type PublicKey = Omit<ApiKey, 'hash'>;
export function publicKey({ hash: _hash, ...rest }: ApiKey): PublicKey {
  return rest;
}

export function keyStatus(key: Pick<ApiKey, 'revokedAt' | 'expiresAt'>, now = Date.now()): 'active' | 'revoked' | 'expired' {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && key.expiresAt.getTime() <= now) return 'expired';
  return 'active';
}

interface CreateKeyInput {
  org: string;
  name: string;
  expiresAt?: Date | null;
  actor: string;
}

/** Returns the plaintext once; only its hash is kept. */
export async function createKey(db: Db, input: CreateKeyInput): Promise<{ key: PublicKey; plaintext: string }> {
  const org = await findOrg(db, input.org);
  const name = input.name.trim();
  if (!name) throw new AppError('validation_failed', 'name must not be empty');
  if (input.expiresAt && input.expiresAt <= new Date()) throw new AppError('validation_failed', 'expires_at must be in the future');
  const { plaintext, prefix, hash } = generateKey();
  const [key] = await db
    .insert(apiKeys)
    .values({ id: newId('key'), orgId: org.id, name, prefix, hash, createdBy: input.actor, expiresAt: input.expiresAt ?? null })
    .returning();
  await recordAudit(db, {
    orgId: org.id,
    actor: input.actor,
    action: 'key.created',
    targetType: 'api_key',
    targetId: key!.id,
    details: { name, prefix, expires_at: key!.expiresAt?.toISOString() ?? null },
  });
  return { key: publicKey(key!), plaintext };
}

export async function listKeys(db: Db, filter: { org?: string } = {}): Promise<PublicKey[]> {
  const orgId = filter.org ? (await findOrg(db, filter.org)).id : undefined;
  const rows = await db
    .select()
    .from(apiKeys)
    .where(orgId ? eq(apiKeys.orgId, orgId) : undefined)
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
  return rows.map(publicKey);
}

export interface RevokeKeyInput {
  keyId: string;
  /** When set, the key must belong to this organisation (API callers); the CLI operator may revoke any. */
  orgId?: string;
  actor: string;
}

/** Revoking twice is harmless: the second call reports the first revocation. */
export async function revokeKey(db: Db, input: RevokeKeyInput): Promise<{ key: PublicKey; alreadyRevoked: boolean }> {
  const scope = input.orgId ? and(eq(apiKeys.id, input.keyId), eq(apiKeys.orgId, input.orgId)) : eq(apiKeys.id, input.keyId);
  const [revoked] = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(scope, isNull(apiKeys.revokedAt)))
    .returning();
  if (revoked) {
    await recordAudit(db, {
      orgId: revoked.orgId,
      actor: input.actor,
      action: 'key.revoked',
      targetType: 'api_key',
      targetId: revoked.id,
      details: { name: revoked.name, prefix: revoked.prefix },
    });
    return { key: publicKey(revoked), alreadyRevoked: false };
  }
  const [existing] = await db.select().from(apiKeys).where(scope);
  if (!existing) throw notFound(`API key ${input.keyId}`);
  return { key: publicKey(existing), alreadyRevoked: true };
}

// --- authentication ------------------------------------------------------------------------------

interface PrincipalBase {
  org: Organisation;
  /** Whose budget its requests spend (the organisation's, whichever way it signs in), and the
   * limits in force: worked out once per cached key. */
  rateSubject: string;
  limits: Limits;
}

/** A caller with an API key. */
interface KeyPrincipal extends PrincipalBase {
  kind: 'key';
  key: PublicKey;
}

/** A person signed in to the console (modules/auth/sessions.ts). */
export interface SessionPrincipal extends PrincipalBase {
  kind: 'session';
  user: Pick<User, 'id' | 'email' | 'name' | 'role'>;
  session: { id: string; csrfToken: string };
}

/** Who is calling: an API key or a console session; both authenticate the same /api routes. */
export type Principal = KeyPrincipal | SessionPrincipal;

/** How the audit log names the caller: `key:key_…` or `user:usr_…`. */
export const actorOf = (principal: Principal): string =>
  principal.kind === 'key' ? `key:${principal.key.id}` : `user:${principal.user.id}`;

export type AuthFailure = 'missing' | 'malformed' | 'unknown' | 'expired' | 'revoked';

export const AUTH_FAILURE_MESSAGES: Record<AuthFailure, string> = {
  missing: 'Missing API key: send it as "Authorization: Bearer <key>"',
  malformed: 'Malformed API key: expected "Authorization: Bearer rvk_…"',
  unknown: 'Invalid API key',
  expired: 'API key has expired',
  revoked: 'API key has been revoked',
};

/** How long a looked-up key is trusted before it is read again: the bound on how late a revocation
 * made by another process (or the CLI on PostgreSQL) takes effect here. */
export const KEY_CACHE_TTL_MS = 2_000;
/** last_used_at is written at most this often per key, off the request path. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface Authenticator {
  /** Synchronous when the key is in the cache (most requests): no promise on the hot path. */
  authenticate(token: string | undefined): Principal | AuthFailure | Promise<Principal | AuthFailure>;
  /** Forget every cached key now (a key revoked or a limit changed in this process). */
  invalidate(): void;
}

export function createAuthenticator(db: Db, onError: (error: unknown) => void = () => {}): Authenticator {
  const byHash = db
    .select({ key: apiKeys, org: organisations })
    .from(apiKeys)
    .innerJoin(organisations, eq(organisations.id, apiKeys.orgId))
    .where(eq(apiKeys.hash, sql.placeholder('hash')))
    .limit(1)
    .prepare('auth_key_by_hash');

  const cache = new Map<string, { row: { key: ApiKey; org: Organisation }; principal: Principal; fetchedAt: number }>();
  const lastUsedWritten = new Map<string, number>();

  function admit(entry: { row: { key: ApiKey }; principal: Principal }, now: number): Principal | AuthFailure {
    const status = keyStatus(entry.row.key, now);
    if (status !== 'active') return status;
    touch(entry.row.key.id, now);
    return entry.principal;
  }

  function touch(keyId: string, now: number) {
    const last = lastUsedWritten.get(keyId) ?? 0;
    if (now - last < LAST_USED_RESOLUTION_MS) return;
    lastUsedWritten.set(keyId, now);
    db.update(apiKeys)
      .set({ lastUsedAt: new Date(now) })
      .where(eq(apiKeys.id, keyId))
      .then(undefined, onError);
  }

  return {
    authenticate(token) {
      if (!token) return 'missing';
      if (!KEY_PATTERN.test(token)) return 'malformed';
      // The lookup (the cache's, then the unique index's) is by SHA-256 of the key: its timing can
      // reveal something about a hash, nothing about a key.
      const hash = hashKey(token);
      const now = Date.now();
      const cached = cache.get(hash);
      if (cached && now - cached.fetchedAt <= KEY_CACHE_TTL_MS) return admit(cached, now);
      return byHash.execute({ hash }).then(([row]) => {
        if (!row) {
          cache.delete(hash); // unknown keys are not remembered: a new key works at once
          return 'unknown' as const;
        }
        const principal: KeyPrincipal = {
          kind: 'key',
          key: publicKey(row.key),
          org: row.org,
          rateSubject: `org:${row.org.id}`,
          limits: limitsOf(row.org),
        };
        const entry = { row, principal, fetchedAt: now };
        cache.set(hash, entry);
        if (cache.size > 10_000) cache.delete(cache.keys().next().value!);
        return admit(entry, now);
      });
    },
    invalidate() {
      cache.clear();
    },
  };
}

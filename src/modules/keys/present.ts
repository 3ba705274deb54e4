import { keyStatus, type PublicKey } from './service.ts';

/** The API's view of a key: snake_case, ISO times, never the hash. */
export function presentKey(key: PublicKey) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    status: keyStatus(key),
    created_by: key.createdBy,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    expires_at: key.expiresAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

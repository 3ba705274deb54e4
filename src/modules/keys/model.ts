import { t } from 'elysia';
import { enumOf, instant, nullable } from '../../lib/record-fields.ts';

/** A key as a client may see it (presentKey): never its secret or its hash. */
export const PublicKeyView = t.Object(
  {
    id: t.String(),
    name: t.String(),
    prefix: t.String(),
    status: enumOf(['active', 'revoked', 'expired'] as const),
    created_by: t.String(),
    created_at: instant,
    last_used_at: nullable(instant),
    expires_at: nullable(instant),
    revoked_at: nullable(instant),
  },
  { additionalProperties: false },
);

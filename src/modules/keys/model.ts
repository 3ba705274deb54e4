import { t } from 'elysia';
import { enumOf, instant, label, nullable } from '../../lib/record-fields.ts';

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

/** POST /api/keys: the key and its secret, shown this once. */
export const CreatedKey = t.Object(
  { ...PublicKeyView.properties, secret: t.String({ description: 'The key itself: shown this once, store it now' }) },
  { additionalProperties: false },
);
/** POST /api/keys */
export const CreateKeyBody = t.Object({ name: label(200), expires_at: t.Optional(nullable(instant)) }, { additionalProperties: false });

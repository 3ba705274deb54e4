import { t } from 'elysia';
import { enumOf, instant, nullable } from '../../lib/record-fields.ts';
import { PLATFORMS } from '../tickets/platforms.ts';

/** A connector as API clients see it (presentConnector): whether it has a secret or a token, never
 * either. */
export const ConnectorView = t.Object(
  {
    id: t.String(),
    org_id: t.String(),
    name: t.String(),
    platform: enumOf(PLATFORMS),
    builtin: t.Boolean(),
    webhook_url: nullable(t.String()),
    signed: t.Boolean(),
    token: t.Boolean(),
    previous_secret_valid_until: nullable(instant),
    created_at: instant,
    updated_at: instant,
  },
  { additionalProperties: false },
);

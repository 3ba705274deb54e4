import { t } from 'elysia';
import { PLANS } from '../../db/schema/index.ts';
import { enumOf, instant, nullable } from '../../lib/record-fields.ts';

const RateWindow = t.Object(
  { limit: t.Integer({ minimum: 0 }), remaining: t.Integer({ minimum: 0 }), reset: t.Integer({ description: 'Unix epoch seconds' }) },
  { additionalProperties: false },
);

/** GET /api/me: the key's organisation, the key, and its budget after this request. */
export const Me = t.Object(
  {
    org: t.Object({ id: t.String(), name: t.String(), plan: enumOf(PLANS) }, { additionalProperties: false }),
    key: t.Object({ id: t.String(), name: t.String(), prefix: t.String(), expires_at: nullable(instant) }, { additionalProperties: false }),
    rate_limit: t.Object({ minute: RateWindow, day: RateWindow }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

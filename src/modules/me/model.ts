import { t } from 'elysia';
import { PLANS } from '../../db/schema/index.ts';
import { enumOf, instant, nullable } from '../../lib/record-fields.ts';
import { SessionUserView } from '../auth/model.ts';

const RateWindow = t.Object(
  { limit: t.Integer({ minimum: 0 }), remaining: t.Integer({ minimum: 0 }), reset: t.Integer({ description: 'Unix epoch seconds' }) },
  { additionalProperties: false },
);

/** GET /api/me: the caller's organisation, its key (null with a console session) or its user (null
 * with a key), the session's CSRF token (null with a key), and its budget after this request. */
export const Me = t.Object(
  {
    org: t.Object({ id: t.String(), name: t.String(), plan: enumOf(PLANS) }, { additionalProperties: false }),
    key: nullable(
      t.Object({ id: t.String(), name: t.String(), prefix: t.String(), expires_at: nullable(instant) }, { additionalProperties: false }),
    ),
    user: nullable(SessionUserView),
    csrf_token: nullable(t.String({ description: 'With a console session: send it back as X-CSRF-Token on POST, PUT, PATCH and DELETE' })),
    rate_limit: t.Object({ minute: RateWindow, day: RateWindow }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

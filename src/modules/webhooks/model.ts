import { t } from 'elysia';

/** The ticket webhook's success answer, without the envelope: platforms only look at the status.
 * Front's URL validation is answered with its challenge echoed. */
export const WebhookAck = t.Union([
  t.Object(
    { ok: t.Literal(true), status: t.Literal('received'), connector: t.String(), event_id: t.String() },
    { additionalProperties: false },
  ),
  t.Object({ challenge: t.String() }, { additionalProperties: false }),
]);

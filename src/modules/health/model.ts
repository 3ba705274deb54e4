import { t } from 'elysia';

/** GET /healthz: the process is alive. */
export const Liveness = t.Object(
  { status: t.Literal('alive'), version: t.String(), uptime_s: t.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);

const Check = t.Object({ name: t.String(), ok: t.Boolean(), detail: t.Optional(t.String()) }, { additionalProperties: false });

/** GET /readyz when ready (a 503 names the failing checks in the envelope's error and meta). */
export const Readiness = t.Object({ status: t.Literal('ready'), checks: t.Array(Check) }, { additionalProperties: false });

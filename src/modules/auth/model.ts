import { t } from 'elysia';
import { PLANS, USER_ROLES } from '../../db/schema/index.ts';
import { enumOf, nullable } from '../../lib/record-fields.ts';

/** The person signed in, as the console shows them. */
export const SessionUserView = t.Object(
  { id: t.String(), email: t.String(), name: nullable(t.String()), role: enumOf(USER_ROLES) },
  { additionalProperties: false },
);

/** POST /api/auth/accept and /sign-in: who signed in, where, and the CSRF token to send back as
 * X-CSRF-Token on every state-changing request (the session itself is in the cookie). */
export const SignedIn = t.Object(
  {
    user: SessionUserView,
    organisation: t.Object({ id: t.String(), name: t.String(), plan: enumOf(PLANS) }, { additionalProperties: false }),
    csrf_token: t.String(),
  },
  { additionalProperties: false },
);

export const AcceptLink = t.Object(
  { token: t.String({ minLength: 1, maxLength: 200 }), password: t.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);
export type AcceptLink = typeof AcceptLink.static;

/** `organisation` (its id or exact name): which account to open when the e-mail has one in several
 * organisations; without it, the oldest. */
export const SignIn = t.Object(
  {
    email: t.String({ minLength: 1, maxLength: 320 }),
    password: t.String({ minLength: 1, maxLength: 1024 }),
    organisation: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type SignIn = typeof SignIn.static;

export const SignedOut = t.Object({ signed_out: t.Literal(true) }, { additionalProperties: false });
export const SignedOutEverywhere = t.Object({ sessions_ended: t.Integer({ minimum: 0 }) }, { additionalProperties: false });

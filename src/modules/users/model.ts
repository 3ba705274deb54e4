import { t } from 'elysia';
import { USER_ROLES } from '../../db/schema/index.ts';
import { enumOf, instant, label, nullable } from '../../lib/record-fields.ts';

/** A console user as an admin sees them (presentUser): never a password's hash. */
export const UserView = t.Object(
  {
    id: t.String(),
    email: t.String(),
    name: nullable(t.String()),
    role: enumOf(USER_ROLES),
    status: enumOf(['invited', 'active', 'disabled'] as const),
    created_at: instant,
    updated_at: instant,
    disabled_at: nullable(instant),
  },
  { additionalProperties: false },
);

/** POST /api/users: the user and their one-time sign-in link, shown this once. */
export const InvitedUser = t.Object(
  { user: UserView, sign_in_link: t.String(), link_expires_at: instant },
  { additionalProperties: false },
);

export const InviteUser = t.Object(
  {
    email: t.String({ minLength: 3, maxLength: 320 }),
    name: t.Optional(nullable(label(200))),
    role: enumOf(USER_ROLES),
  },
  { additionalProperties: false },
);
export type InviteUser = typeof InviteUser.static;

export const PatchUser = t.Object(
  { role: t.Optional(enumOf(USER_ROLES)), disabled: t.Optional(t.Boolean()) },
  { additionalProperties: false },
);
export type PatchUser = typeof PatchUser.static;

export const UserParams = t.Object({ id: t.String({ minLength: 1, maxLength: 100 }) });

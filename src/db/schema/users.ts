import { check, index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { organisations } from './organisations.ts';
import { timestamps, timestamptz } from './columns.ts';

export const USER_ROLES = ['admin', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/** People who sign in to the console (docs/api.md "Users and the console sign-in"). The e-mail is stored lower-cased: unique per
 * organisation whatever its case. */
export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    name: text('name'),
    role: text('role', { enum: USER_ROLES }).notNull(),
    /** Bun.password (argon2id); null until the first sign-in link is accepted. */
    passwordHash: text('password_hash'),
    disabledAt: timestamptz('disabled_at'),
    ...timestamps,
  },
  (table) => [
    uniqueIndex('users_org_email_key').on(table.orgId, table.email),
    index('users_email_idx').on(table.email),
    check('users_role_check', sql`${table.role} in ('admin', 'member')`),
    check('users_email_lower_check', sql`${table.email} = lower(${table.email})`),
  ],
);
export type User = typeof users.$inferSelect;

/** Console sessions. Only the SHA-256 of the cookie's token is stored; the CSRF token is derived
 * from the cookie's token (modules/auth/sessions.ts), so neither can be read back from here. */
export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull().unique(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    orgId: text('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    lastSeenAt: timestamptz('last_seen_at').notNull().defaultNow(),
    /** Absolute end, whatever the activity. */
    expiresAt: timestamptz('expires_at').notNull(),
    revokedAt: timestamptz('revoked_at'),
  },
  (table) => [index('sessions_user_id_idx').on(table.userId)],
);
export type Session = typeof sessions.$inferSelect;

/** One-time sign-in links (an invitation, or a forgotten password): the token's SHA-256 only. */
export const signInLinks = pgTable(
  'sign_in_links',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull().unique(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    orgId: text('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    createdBy: text('created_by').notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    expiresAt: timestamptz('expires_at').notNull(),
    usedAt: timestamptz('used_at'),
  },
  (table) => [index('sign_in_links_user_id_idx').on(table.userId)],
);
export type SignInLink = typeof signInLinks.$inferSelect;

import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';
import { timestamptz } from './columns.ts';

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** The first characters of the key, shown in listings so a person can tell keys apart. */
    prefix: text('prefix').notNull(),
    /** Hex SHA-256 of the whole key; the key itself is never stored. */
    hash: text('hash').notNull().unique(),
    createdBy: text('created_by').notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    lastUsedAt: timestamptz('last_used_at'),
    expiresAt: timestamptz('expires_at'),
    revokedAt: timestamptz('revoked_at'),
  },
  (table) => [index('api_keys_org_id_idx').on(table.orgId)],
);

export type ApiKey = typeof apiKeys.$inferSelect;

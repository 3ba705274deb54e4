import { sql } from 'drizzle-orm';
import { check, foreignKey, pgTable, text, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { organisations } from './organisations.ts';
import { timestamps, timestamptz } from './columns.ts';
import { PLATFORMS, type Platform } from '../../modules/tickets/platforms.ts';

/** Where tickets come from: a support platform's webhook, or the API import. The id is in
 * the webhook URL and is the only credential of a platform that can neither sign nor add a header,
 * so it is unguessable (154 random bits). */
export const connectors = pgTable(
  'connectors',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    /** Display name, returned by the webhook; unique in its organisation. */
    name: text('name').notNull(),
    platform: text('platform').$type<Platform>().notNull(),
    /** The webhook secret sealed with the server's SECRET_KEY (lib/secret-box.ts); null: unsigned. */
    secretSealed: text('secret_sealed'),
    /** After a rotation the old secret stays valid until `previous_secret_expires_at`, so the
     * platform's side can be changed without losing deliveries. */
    previousSecretSealed: text('previous_secret_sealed'),
    previousSecretExpiresAt: timestamptz('previous_secret_expires_at'),
    /** SHA-256 of a static bearer token, for platforms that add a header but cannot sign. */
    tokenHash: text('token_hash'),
    /** The organisation's own "API import" connector, made on the first import without one. */
    builtin: text('builtin'),
    ...timestamps,
  },
  (table) => [
    foreignKey({ columns: [table.orgId], foreignColumns: [organisations.id] }).onDelete('cascade'),
    unique('connectors_org_id_id_unique').on(table.orgId, table.id),
    unique('connectors_org_name_unique').on(table.orgId, table.name),
    uniqueIndex('connectors_org_builtin_unique').on(table.orgId, table.builtin).where(sql`${table.builtin} is not null`),
    check('connectors_platform_check', sql.raw(`platform in (${PLATFORMS.map((p) => `'${p}'`).join(', ')})`)),
  ],
);

export type Connector = typeof connectors.$inferSelect;

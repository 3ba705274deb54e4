// What the CLI can ask for: the operator's commands as units of work. From a terminal on
// PostgreSQL they run on the CLI's own connection; on the embedded database while `serve` runs,
// they travel over the server's admin socket and the server runs each one whole (db/units.ts).
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../db/client.ts';
import { knownMigrations } from '../db/migrate.ts';
import type { UnitRegistry } from '../db/units.ts';
import type { Plan } from '../db/schema/index.ts';
import { createOrg, listOrgs, updateOrg, type CreateOrgInput, type UpdateOrgInput } from '../modules/orgs/service.ts';
import { createKey, listKeys, revokeKey, type RevokeKeyInput } from '../modules/keys/service.ts';
import { loadDemo, type DemoInput } from '../modules/demo/service.ts';
import { finishImport, importBatch, importTarget } from '../modules/imports/service.ts';

export const adminUnits = {
  'orgs.create': (db: Db, input: CreateOrgInput & { plan: Plan }) => createOrg(db, input),
  'orgs.list': (db: Db, _args: Record<string, never>) => listOrgs(db),
  'orgs.update': (db: Db, input: UpdateOrgInput) => updateOrg(db, input),
  'keys.create': (db: Db, input: { org: string; name: string; expiresAt: string | null; actor: string }) =>
    createKey(db, { ...input, expiresAt: input.expiresAt ? new Date(input.expiresAt) : null }),
  'keys.list': (db: Db, filter: { org?: string }) => listKeys(db, filter),
  'keys.revoke': (db: Db, input: RevokeKeyInput) => revokeKey(db, input),
  /** Creates or refreshes the demo organisation: its ARR data is replaced, row for row the same for
   * the same seed and day, and a new key is made for it. One transaction: all or nothing. */
  'demo.load': (db: Db, input: DemoInput) => loadDemo(db, input),
  /** `revintel import`: the target organisation, then each batch of rows in its own transaction
   * (a crash keeps every committed batch), then fresh statistics. */
  'import.target': (db: Db, input: { org?: string }) => importTarget(db, input),
  'import.batch': (db: Db, input: Parameters<typeof importBatch>[1]) => importBatch(db, input),
  'import.finish': (db: Db, input: Parameters<typeof finishImport>[1]) => finishImport(db, input),
  /** What the running server has applied (it migrates at start). */
  'migrations.status': async (db: Db, _args: Record<string, never>) => {
    const [row] = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`));
    return { applied: row?.n ?? 0, known: knownMigrations() };
  },
} satisfies UnitRegistry;

export type AdminUnits = typeof adminUnits;

/** Units that change who may call the API or how much: the server forgets cached keys after them. */
export const CHANGES_ACCESS: ReadonlySet<keyof AdminUnits> = new Set(['orgs.update', 'keys.revoke']);

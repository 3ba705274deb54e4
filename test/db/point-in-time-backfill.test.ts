// Migration 0015 backfills what existed before it: cancelled_at of cancelled contracts (and of
// evergreen ones marked ended), churned_at of churned customers, and one revision per contract. A
// fresh database is migrated up to 0014, given rows, then migrated to the end, on both backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { migrationsFolder } from '../../src/db/migrate.ts';
import { emptyPglite } from '../helpers/empty-pglite.ts';
import { BACKENDS, TEST_DATABASE_URL, tempDir } from '../helpers/harness.ts';

/** The migrations folder as it was before the point-in-time migration. */
function foldersUpTo(lastIdx: number): string {
  const dir = tempDir('revintel-migrations-');
  const source = migrationsFolder();
  const journal = JSON.parse(readFileSync(join(source, 'meta/_journal.json'), 'utf8')) as { entries: { idx: number; tag: string }[] };
  mkdirSync(join(dir, 'meta'));
  journal.entries = journal.entries.filter((entry) => entry.idx <= lastIdx);
  for (const entry of journal.entries) cpSync(join(source, `${entry.tag}.sql`), join(dir, `${entry.tag}.sql`));
  writeFileSync(join(dir, 'meta/_journal.json'), JSON.stringify(journal));
  return dir;
}

/** A database of its own, with `run` for plain SQL and `migrate` to apply a folder. */
interface Fresh {
  run<T>(text: string): Promise<T[]>;
  /** Several statements, no rows back. */
  exec(text: string): Promise<void>;
  migrate(folder: string): Promise<void>;
  close(): Promise<void>;
}

async function freshDatabase(backend: string): Promise<Fresh> {
  if (backend === 'embedded') {
    const { pglite, dispose } = await emptyPglite();
    return {
      run: async <T>(text: string) => (await pglite.query<T>(text)).rows,
      exec: async (text) => void (await pglite.exec(text)),
      migrate: (folder) => migratePglite(drizzlePglite(pglite), { migrationsFolder: folder }),
      close: dispose,
    };
  }
  const name = `test_pit_backfill_${process.pid}_${Date.now()}`;
  const admin = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  const client = postgres(url.toString(), { max: 1, onnotice: () => {} });
  return {
    run: async <T>(text: string) => (await client.unsafe(text)) as unknown as T[],
    exec: async (text) => void (await client.unsafe(text).simple()),
    migrate: (folder) => migratePostgres(drizzlePostgres(client), { migrationsFolder: folder }),
    close: async () => {
      await client.end({ timeout: 5 });
      await admin.unsafe(`drop database if exists ${name}`);
      await admin.end({ timeout: 5 });
    },
  };
}

for (const backend of BACKENDS) {
  describe(`migration 0015 backfills existing rows (${backend})`, () => {
    let database: Fresh;
    const folders: string[] = [];

    beforeAll(async () => {
      database = await freshDatabase(backend);
      folders.push(foldersUpTo(14));
      await database.migrate(folders[0]!);
      // Rows as they stood before 0015, last changed on 2026-03-10 (updated_at).
      await database.exec(`
        insert into organisations (id, name, plan) values ('org_bf', 'Backfill', 'enterprise');
        insert into customers (id, org_id, name, currency, status, updated_at) values
          ('cus_gone', 'org_bf', 'Gone', 'EUR', 'churned', '2026-03-10T23:30:00Z'),
          ('cus_here', 'org_bf', 'Here', 'EUR', 'active', '2026-03-10T12:00:00Z');
        insert into contracts (id, org_id, customer_id, name, status, start_date, end_date, billing_interval, amount, currency, created_at, updated_at, deleted_at) values
          ('ctr_ended_early', 'org_bf', 'cus_gone', 'P', 'cancelled', '2025-01-01', '2025-12-31', 'year', 100, 'EUR', '2026-03-01T00:00:00Z', '2026-03-10T12:00:00Z', null),
          ('ctr_notice', 'org_bf', 'cus_gone', 'P', 'cancelled', '2026-01-01', '2026-12-31', 'year', 100, 'EUR', '2026-03-01T00:00:00Z', '2026-03-10T12:00:00Z', null),
          ('ctr_evergreen', 'org_bf', 'cus_gone', 'P', 'cancelled', '2024-06-01', null, 'month', 10, 'EUR', '2026-03-01T00:00:00Z', '2026-03-10T12:00:00Z', null),
          ('ctr_stopped', 'org_bf', 'cus_here', 'P', 'ended', '2024-06-01', null, 'month', 10, 'EUR', '2026-03-01T00:00:00Z', '2026-03-10T12:00:00Z', null),
          ('ctr_done', 'org_bf', 'cus_here', 'P', 'ended', '2024-01-01', '2024-12-31', 'year', 100, 'EUR', '2026-03-01T00:00:00Z', '2026-03-10T12:00:00Z', null),
          ('ctr_live', 'org_bf', 'cus_here', 'P', 'active', '2025-01-01', null, 'month', 10, 'EUR', '2026-03-01T00:00:00Z', '2026-03-10T12:00:00Z', null),
          ('ctr_later', 'org_bf', 'cus_here', 'P', 'active', '2026-06-01', null, 'month', 10, 'EUR', '2026-03-01T00:00:00Z', '2026-03-10T12:00:00Z', null),
          ('ctr_deleted', 'org_bf', 'cus_here', 'P', 'active', '2025-01-01', null, 'month', 10, 'EUR', '2026-03-01T00:00:00Z', '2026-03-10T12:00:00Z', '2026-03-10T12:00:00Z');
      `);
      await database.migrate(migrationsFolder());
    });
    afterAll(async () => {
      await database.close();
      for (const folder of folders) rmSync(folder, { recursive: true, force: true });
    });

    test('a cancelled contract gets its end date when that came first, else the day of its last change; an evergreen one marked ended the day of its last change', async () => {
      const rows = await database.run<{ id: string; cancelled_at: string | null }>(
        `select id, cancelled_at::text as cancelled_at from contracts order by id`,
      );
      expect(Object.fromEntries(rows.map((r) => [r.id, r.cancelled_at]))).toEqual({
        ctr_deleted: null,
        ctr_done: null,
        ctr_ended_early: '2025-12-31',
        ctr_evergreen: '2026-03-10',
        ctr_later: null,
        ctr_live: null,
        ctr_notice: '2026-03-10',
        ctr_stopped: '2026-03-10',
      });
    });

    test('a churned customer gets the UTC day of its last change; others none', async () => {
      const rows = await database.run<{ id: string; churned_at: string | null }>(
        `select id, churned_at::text as churned_at from customers order by id`,
      );
      expect(rows).toEqual([
        { id: 'cus_gone', churned_at: '2026-03-10' },
        { id: 'cus_here', churned_at: null },
      ]);
    });

    test('each contract has one revision from its start (or the day it was written, if earlier); a deleted one a second, deleted from that day', async () => {
      const rows = await database.run<{
        contract_id: string;
        revision: number;
        valid_from: string;
        cancelled_at: string | null;
        deleted: boolean;
      }>(
        `select contract_id, revision, valid_from::text as valid_from, cancelled_at::text as cancelled_at, deleted from contract_revisions order by contract_id, revision`,
      );
      expect(rows.map((r) => [r.contract_id, r.revision, r.valid_from, r.deleted])).toEqual([
        ['ctr_deleted', 1, '2025-01-01', false],
        ['ctr_deleted', 2, '2026-03-10', true],
        ['ctr_done', 1, '2024-01-01', false],
        ['ctr_ended_early', 1, '2025-01-01', false],
        ['ctr_evergreen', 1, '2024-06-01', false],
        ['ctr_later', 1, '2026-03-01', false],
        ['ctr_live', 1, '2025-01-01', false],
        ['ctr_notice', 1, '2026-01-01', false],
        ['ctr_stopped', 1, '2024-06-01', false],
      ]);
      expect(rows.find((r) => r.contract_id === 'ctr_notice')!.cancelled_at).toBe('2026-03-10');
    });

    test('the backfilled past is rebuilt: the notice is known from its day, the evergreen contract counts through it', async () => {
      const at = (day: string) =>
        database.run<{ contract_id: string; status: string; counted: boolean }>(
          `select contract_id, status, counted from revintel_contracts_at('org_bf', '${day}') order by contract_id`,
        );
      const before = Object.fromEntries((await at('2026-03-09')).map((r) => [r.contract_id, [r.status, r.counted]]));
      expect(before).toMatchObject({
        ctr_notice: ['active', true],
        ctr_evergreen: ['active', true],
        ctr_deleted: ['active', true],
        ctr_done: ['ended', false],
      });
      const after = Object.fromEntries((await at('2026-03-11')).map((r) => [r.contract_id, [r.status, r.counted]]));
      expect(after).toMatchObject({ ctr_notice: ['cancelled', true], ctr_evergreen: ['cancelled', false], ctr_stopped: ['ended', false] });
      expect(after.ctr_deleted).toBeUndefined();
    });
  });
}

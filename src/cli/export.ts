// revintel export --to postgres://… (docs/operating.md "Growing past one machine"): the embedded installation
// in DATA_DIR copied into an empty PostgreSQL, migrated here to this version first, then checked
// table by table. serve must be stopped: the copy is of one moment.
import postgres from 'postgres';
import { connectPostgres, openEmbedded } from '../db/client.ts';
import { copyTables, targetIsEmpty, verifyCopy } from '../db/export.ts';
import { runMigrations } from '../db/migrate.ts';
import { helpText, parseCommand, requireString, UsageError, type OptionSpecs } from './args.ts';

const OPTIONS: OptionSpecs = {
  to: { type: 'string', value: 'postgres://…', description: 'the empty PostgreSQL database to copy into' },
  'batch-size': { type: 'string', value: 'N', description: 'rows per copied batch (1 to 100,000)', default: '1000' },
};

const HELP = helpText({
  usage: 'revintel export --to postgres://… [--data-dir DATA_DIR] [--batch-size N]',
  about: `Copies the embedded database in DATA_DIR into an empty PostgreSQL database (migrated to this
version by the command), then compares every table on both sides (rows and a checksum of every
row) and says whether they match. Stop serve first; a target holding any row is refused. Secrets
stay sealed: run the servers on PostgreSQL with the same SECRET_KEY (DATA_DIR/secret.key when it
was generated).`,
  options: OPTIONS,
  settings: ['DATA_DIR'],
});

export async function exportCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const to = requireString(cmd.values, 'to', HELP);
  if (!/^postgres(ql)?:\/\//.test(to)) throw new UsageError(`--to must be a postgres:// URL, got "${to.replace(/:[^:@/]*@/, ':…@')}"`);
  const batchSize = Number(cmd.values['batch-size'] ?? 1000);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000)
    throw new UsageError('--batch-size must be an integer from 1 to 100,000');
  const config = cmd.config();
  if (config.databaseUrl) throw new UsageError('export copies the embedded database: unset DATABASE_URL (the target is --to)');
  const started = performance.now();
  const source = await openEmbedded(config.dataDir, 'export', { timeoutMs: 3_600_000 });
  const target = postgres(to, { max: 1, onnotice: () => {}, connection: { application_name: 'revintel-export', TimeZone: 'UTC' } });
  try {
    await runMigrations(source, null);
    const migrating = connectPostgres(to, 1);
    try {
      await runMigrations(migrating, to);
    } finally {
      await migrating.close();
    }
    const taken = await targetIsEmpty(target);
    if (taken) throw new UsageError(`the target database is not empty (table ${taken} holds rows): export needs an empty one`);
    const tty = !cmd.json && process.stderr.isTTY;
    const copies = await copyTables(source.pglite!, target, {
      batchSize,
      progress: (table, copied, total) => {
        if (tty) process.stderr.write(`\r\x1b[2K${table}: ${copied.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`);
      },
    });
    if (tty) process.stderr.write('\r\x1b[2K');
    const { verified, differ } = await verifyCopy(source.pglite!, target);
    if (differ.length > 0) throw new Error(`the copy does not match the source in ${differ.join('; ')}: do not switch to it`);
    const rows = copies.reduce((sum, t) => sum + t.rows, 0);
    const result = {
      to: to.replace(/:[^:@/]*@/, ':…@'),
      tables: copies.length,
      rows,
      ms: Math.round(performance.now() - started),
      verified: verified.length,
      copies,
    };
    cmd.print(
      result,
      (r) =>
        `copied ${r.rows.toLocaleString('en-US')} rows in ${r.tables} tables to ${r.to} in ${(r.ms / 1000).toFixed(1)} s; every table verified (rows and checksums match)`,
    );
  } finally {
    await target.end();
    await source.close();
  }
}

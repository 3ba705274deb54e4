// Preloaded by bunfig.toml before every test file.
import { setDefaultTimeout } from 'bun:test';
import postgres from 'postgres';
import { ensureSnapshot } from '../scripts/pgdata-snapshot.ts';

// bunfig's [test] timeout is ignored on Bun 1.4.4 (seen here); the suites start real processes.
setDefaultTimeout(60_000);

// A new embedded database starts from this snapshot (0.5 s) instead of initdb (about 7 s).
await ensureSnapshot();

// Under `bun test --parallel` every worker process gets its own PostgreSQL database and Redis
// database: suites that run the job queue claim whatever is due in the database, so two files
// sharing one would work each other's jobs. Worker 1 keeps the configured ones.
await giveWorkerItsOwnDatabases(Number(process.env.BUN_TEST_WORKER_ID ?? '1'));

// The PostgreSQL database at this build's migrations before any test: a file that starts with the
// command line (test/e2e) finds it so, whatever ran before it on this worker (the others migrate
// it themselves when they open it). Up to date, this is one query. And no organisation's job left
// pending by an earlier file (a demo queues its recompute): a file draining a kind would otherwise
// work them all — a 3,000-customer demo's rescore in another file's 60 s hook. Organisations are
// made per file (uniqueName), so none of those jobs is this file's.
if (process.env.TEST_DATABASE_URL) {
  const { connectPostgres, queryText } = await import('../src/db/client.ts');
  const { runMigrations } = await import('../src/db/migrate.ts');
  const database = connectPostgres(process.env.TEST_DATABASE_URL, 1);
  try {
    await runMigrations(database, process.env.TEST_DATABASE_URL);
    await queryText(database.db, `delete from jobs where org_id is not null and state in ('queued', 'running')`, []);
  } finally {
    await database.close();
  }
}

async function giveWorkerItsOwnDatabases(worker: number): Promise<void> {
  if (!Number.isInteger(worker) || worker <= 1) return;
  const pgUrl = process.env.TEST_DATABASE_URL;
  if (pgUrl && !process.env.TEST_DATABASE_URL_BASE) {
    const url = new URL(pgUrl);
    const name = `${url.pathname.slice(1) || 'postgres'}_w${worker}`;
    const admin = postgres(pgUrl, { max: 1, onnotice: () => {} });
    try {
      const [row] = await admin`select 1 as present from pg_database where datname = ${name}`;
      if (!row)
        await admin.unsafe(`create database "${name}"`).catch((error: { code?: string }) => {
          if (error.code !== '42P04') throw error; // another file of this worker created it first
        });
    } finally {
      await admin.end();
    }
    url.pathname = `/${name}`;
    process.env.TEST_DATABASE_URL_BASE = pgUrl;
    process.env.TEST_DATABASE_URL = url.toString();
  }
  const redisUrl = process.env.TEST_REDIS_URL;
  if (redisUrl && !process.env.TEST_REDIS_URL_BASE) {
    const url = new URL(redisUrl);
    url.pathname = `/${worker}`;
    process.env.TEST_REDIS_URL_BASE = redisUrl;
    process.env.TEST_REDIS_URL = url.toString();
  }
}

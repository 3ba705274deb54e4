// `revintel jobs` through the compiled binary, on the embedded database (the CLI takes DATA_DIR) and on PostgreSQL:
// a dead job is listed and shown with its reason, retried (audited) and queued again; what cannot be
// retried is said; a bad option is a usage error.
import { describe, expect, test } from 'bun:test';
import { t } from 'elysia';
import { connectPostgres, openEmbedded, queryText, type Database } from '../../src/db/client.ts';
import { runMigrations } from '../../src/db/migrate.ts';
import { defineJobKind } from '../../src/queue/job-kind.ts';
import { claimJobs, enqueueJob, settleJobs } from '../../src/queue/job-queue.ts';
import { randomBase62 } from '../../src/lib/ids.ts';
import { runCli } from '../helpers/binary.ts';
import { e2eFile } from '../helpers/e2e.ts';
import { tempDir, TEST_DATABASE_URL } from '../helpers/harness.ts';

const { dirs } = e2eFile();
const dataDir = tempDir('revintel-jobs-cli-');
dirs.push(dataDir);

const targets: { label: string; env: Record<string, string>; open: () => Promise<Database> }[] = [
  { label: 'embedded', env: { DATA_DIR: dataDir }, open: () => openEmbedded(dataDir, 'test') },
];
if (TEST_DATABASE_URL)
  targets.push({ label: 'postgres', env: { DATABASE_URL: TEST_DATABASE_URL }, open: async () => connectPostgres(TEST_DATABASE_URL!, 2) });

for (const target of targets) {
  describe(`jobs CLI (${target.label})`, () => {
    const cli = (args: string[]) => runCli([...args, '--json'], { LOG_LEVEL: 'silent', ...target.env });

    /** A job of a kind of its own, failed for good on its one attempt. */
    async function deadJob(): Promise<{ id: string; kind: string }> {
      const kind = defineJobKind({
        kind: `test.cli.${randomBase62(8)}`,
        payload: t.Object({ n: t.Number() }),
        retry: { maxAttempts: 1 },
        perform: async () => null,
      });
      const database = await target.open();
      try {
        await runMigrations(database, target.label === 'postgres' ? TEST_DATABASE_URL : null);
        const { id } = await enqueueJob(database.db, kind, { n: 1 });
        await database.db.transaction((tx) =>
          claimJobs(tx as never, { owner: 'cli-test', limit: 1, leaseSeconds: 60, kinds: [kind.kind], now: new Date() }),
        );
        await settleJobs(database.db, {
          owner: 'cli-test',
          outcomes: [{ id, state: 'dead', error: 'the platform refused it (attempt 1 of 1)' }],
          now: new Date(),
        });
        return { id, kind: kind.kind };
      } finally {
        await database.close();
      }
    }

    test('list the dead, show one with its reason, retry it', async () => {
      const { id, kind } = await deadJob();
      const dead = await cli(['jobs', 'list', '--state', 'dead', '--kind', kind]);
      expect(dead.code).toBe(0);
      expect(dead.json).toEqual([
        expect.objectContaining({
          id,
          kind,
          state: 'dead',
          attempts: 1,
          max_attempts: 1,
          last_error: 'the platform refused it (attempt 1 of 1)',
        }),
      ]);

      const shown = await cli(['jobs', 'show', id]);
      expect(shown.json).toMatchObject({ id, kind, state: 'dead', payload: { n: 1 }, result: null });
      expect(shown.json.finished_at).toMatch(/Z$/);

      const retried = await cli(['jobs', 'retry', id, 'job_unknown']);
      expect(retried.code).toBe(0);
      expect(retried.json).toEqual({ retried: [id], skipped: ['job_unknown'] });
      const queued = await cli(['jobs', 'list', '--kind', kind]);
      expect(queued.json).toEqual([expect.objectContaining({ id, state: 'queued', attempts: 0, finished_at: null })]);
      expect((await cli(['jobs', 'retry', id])).json).toEqual({ retried: [], skipped: [id] });

      const database = await target.open();
      try {
        const audit = await queryText<{ actor: string; details: { kind: string } }>(
          database.db,
          `select actor, details from audit_log where action = 'job.retried' and target_id = $1`,
          [id],
        );
        expect(audit).toEqual([{ actor: expect.stringMatching(/^cli:/), details: { kind } }]);
      } finally {
        await database.close();
      }
    });

    test('every dead job of a kind at once; usage errors name the option', async () => {
      const first = await deadJob();
      const all = await cli(['jobs', 'retry', '--all-dead', '--kind', first.kind]);
      expect(all.json).toEqual({ retried: [first.id], skipped: [] });
      const bad = await cli(['jobs', 'list', '--state', 'lost']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr + bad.stdout).toContain('--state must be one of queued, running, done, dead');
      const missing = await cli(['jobs', 'show']);
      expect(missing.code).not.toBe(0);
      expect((await cli(['jobs', 'show', 'job_nope'])).stderr + (await cli(['jobs', 'show', 'job_nope'])).stdout).toContain('Job job_nope');
    });
  });
}

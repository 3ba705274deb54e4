// A process that takes jobs and then hangs, to be killed with SIGKILL by a test (test/jobs/queue.test.ts):
// `bun job-child.ts claim <database-url | data-dir> <kind> <owner> <lease-seconds>` claims the due
// jobs of <kind>, prints "claimed <ids>" and waits for ever;
// `bun job-child.ts fire <database-url> <kind> <every-seconds> <now-iso> <rounds>` fires that
// schedule `rounds` times at `now` and prints how many runs it enqueued.
import { connectPostgres, openEmbedded, type Database } from '../../src/db/client.ts';
import { claimJobs, fireSchedules } from '../../src/queue/job-queue.ts';

const [verb, where, kind, ...rest] = process.argv.slice(2);
const database: Database = where!.startsWith('postgres://') ? connectPostgres(where!, 2) : await openEmbedded(where!, 'job-child');

if (verb === 'claim') {
  const [owner, lease] = rest;
  const { jobs } = await database.db.transaction((tx) =>
    claimJobs(tx as never, { owner: owner!, limit: 100, leaseSeconds: Number(lease), kinds: [kind!], now: new Date() }),
  );
  console.log(`claimed ${jobs.map((j) => j.id).join(',')}`);
  setInterval(() => {}, 1 << 30);
} else if (verb === 'fire') {
  const [every, now, rounds] = rest;
  const schedules = [{ kind: kind!, schedule: { everySeconds: Number(every) }, maxAttempts: 3 }];
  let fired = 0;
  for (let i = 0; i < Number(rounds); i++) {
    const result = await database.db.transaction((tx) => fireSchedules(tx as never, { schedules, now: new Date(now!) }));
    fired += result.fired.length;
  }
  console.log(`fired ${fired}`);
  await database.close();
}

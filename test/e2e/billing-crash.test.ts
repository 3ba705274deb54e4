// A backfill killed with SIGKILL mid-way, then resumed: customers (with their subscriptions and
// invoices) from the fake Stripe, a 429 in the middle, `revintel billing sync` in a child process
// killed while it pages. Run again, it resumes from the last page stored: every record once; a
// second sync reads everything again and changes nothing. On each backend (the embedded database
// is the child's own while it runs: this process opens it only once the children are done).
import { afterAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { queryText } from '../../src/db/client.ts';
import { openEmbedded } from '../../src/db/client.ts';
import { type FakeBillingApi, startFakeStripe, stripeAccount } from '../fakes/billing.ts';
import { waitFor } from '../helpers/binary.ts';
import { openTestDatabase, TEST_DATABASE_URL, tempDir } from '../helpers/harness.ts';
import { TEST_SECRET_KEY } from '../helpers/tickets.ts';

// At 2,000 customers the test takes one to five minutes a backend on the shared machine (their
// 6,000 objects' apply, mostly), so the suite runs 300 (9 pages) and
// BILLING_CRASH_CUSTOMERS=2000 runs that size.
const CUSTOMERS = Number(process.env.BILLING_CRASH_CUSTOMERS ?? 300);
/** Pages of one list, and the requests of the whole backfill (three lists, one 429). */
const PAGES = Math.ceil(CUSTOMERS / 100);
const API_KEY = 'rk_test_crash_0123456789';
const SOURCE = join(import.meta.dir, '../../src/index.ts');
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

/** `revintel …` from source in a child process, its stdout parsed as JSON. */
function cli(args: string[], env: Record<string, string>) {
  return Bun.spawn(['bun', SOURCE, ...args, '--json'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp', LOG_LEVEL: 'warn', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
}
async function run(args: string[], env: Record<string, string>) {
  const child = cli(args, env);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`revintel ${args.join(' ')} exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}

const BACKENDS = [{ name: 'embedded', postgres: false }, ...(TEST_DATABASE_URL ? [{ name: 'postgres', postgres: true }] : [])];

for (const backend of BACKENDS) {
  describe(`a backfill killed with SIGKILL, then resumed (${backend.name})`, () => {
    test('stores every record once, and a second sync changes nothing', async () => {
      const account = stripeAccount(CUSTOMERS);
      // A request in the customers' pages is answered 429.
      const stripe: FakeBillingApi = startFakeStripe({
        apiKey: API_KEY,
        ...account,
        rateLimitOn: new Set([Math.ceil(PAGES / 2)]),
        retryAfter: true,
      });
      cleanups.push(() => stripe.stop());
      const dir = tempDir('revintel-billing-crash-');
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const env = {
        SECRET_KEY: TEST_SECRET_KEY,
        STRIPE_API_BASE: stripe.url,
        BILLING_MAX_RPS: '40',
        ALLOW_INSECURE_PLATFORM_URLS: 'true',
        ...(backend.postgres ? { DATABASE_URL: TEST_DATABASE_URL! } : { DATA_DIR: dir }),
      };
      // The shared PostgreSQL database at this build's migrations (another file may not have run yet).
      if (backend.postgres) await (await openTestDatabase('postgres')).dispose();
      const orgName = `Billing crash ${Date.now()}`;
      const org = await run(['orgs', 'create', '--name', orgName, '--plan', 'enterprise'], env);
      const connector = await run(['billing', 'add', 'stripe', '--org', org.id, '--api-key', API_KEY, '--test-mode'], env);

      // Killed while it pages: past the 429, before the last page.
      const killed = cli(['billing', 'sync', connector.id], env);
      await waitFor(async () => stripe.requests() >= PAGES + 2 || killed.exitCode !== null, 120_000, 5);
      expect(killed.exitCode).toBeNull();
      killed.kill('SIGKILL');
      expect(await killed.exited).not.toBe(0);
      expect(stripe.requests()).toBeLessThan(3 * PAGES + 1);

      const resumed = await run(['billing', 'sync', connector.id], env);
      expect(resumed.sync.state).toBe('done');
      expect(resumed.sync.rate_limited).toBeGreaterThanOrEqual(1);
      // Over both runs each object was new once: the page read again when the kill came was unchanged.
      for (const kind of ['customers', 'subscriptions', 'invoices']) expect(resumed.sync.report[kind].new).toBe(CUSTOMERS);
      expect(resumed.applied).toMatchObject({ failed: 0, dead: 0, remaining: 0 });

      const again = await run(['billing', 'sync', connector.id], env);
      expect(again.sync.id).not.toBe(resumed.sync.id);
      for (const kind of ['customers', 'subscriptions', 'invoices'])
        expect(again.sync.report[kind]).toEqual({ read: CUSTOMERS, new: 0, unchanged: CUSTOMERS });
      expect(again.applied.applied).toBe(0);

      const database = backend.postgres ? await openTestDatabase('postgres') : await openEmbedded(dir, 'test');
      try {
        const [counts] = await queryText<Record<string, number>>(
          database.db,
          `select (select count(*)::int from customers where org_id = $1) as customers,
                  (select count(*)::int from contracts where org_id = $1) as contracts,
                  (select count(distinct customer_id)::int from contracts where org_id = $1) as customers_with_contract,
                  (select count(*)::int from invoices where org_id = $1 and contract_id is not null) as invoices,
                  (select count(*)::int from billing_events where org_id = $1) as events,
                  (select count(*)::int from billing_events where org_id = $1 and state <> 'applied') as not_applied`,
          [org.id],
        );
        expect(counts).toEqual({
          customers: CUSTOMERS,
          contracts: CUSTOMERS,
          customers_with_contract: CUSTOMERS,
          invoices: CUSTOMERS,
          events: 3 * CUSTOMERS,
          not_applied: 0,
        });
      } finally {
        await database.close();
      }
    }, 600_000);
  });
}

// bun bench/sign-in.ts [-- --flood N] — what strangers' sign-in traffic costs, on PGlite (a temp
// dir), through the app's request path (createApp; addresses from X-Forwarded-For):
//   baseline   the owner's sign-in on an idle server: median of 5 (the figure the others compare to)
//   accept     --flood concurrent POST /api/auth/accept with made-up tokens: argon2 runs started,
//              CPU seconds of this process, the slowest answer, answers by status
//   sign-in    --flood concurrent wrong-password sign-ins from --flood addresses, and the owner's
//              sign-in from another address started with them: its status and time (and its ratio
//              to the baseline), and again 1 s after the flood was answered; argon2 runs, CPU
//              seconds, answers by status
// Figures are reported, never asserted. Options: --flood N (120).
import { parseArgs } from 'node:util';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openEmbedded } from '../src/db/client.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { createLogger } from '../src/lib/log.ts';
import { memoryRateLimiter } from '../src/lib/rate-limiter.ts';
import { createAuthenticator } from '../src/modules/keys/service.ts';
import { createOrg } from '../src/modules/orgs/service.ts';
import { createUser } from '../src/modules/users/service.ts';
import { cleanupAll, makeTempDir, median, table } from './lib.ts';

const { values: opts } = parseArgs({ args: Bun.argv.slice(2), options: { flood: { type: 'string' } }, allowPositionals: true });
const FLOOD = Number(opts.flood ?? 120);
const PASSWORD = 'correct horse battery';

// Every argon2 run, whoever starts it.
let argon2Runs = 0;
const { hash, verify } = Bun.password;
Bun.password.hash = ((...args: Parameters<typeof hash>) => (argon2Runs++, hash(...args))) as typeof hash;
Bun.password.verify = ((...args: Parameters<typeof verify>) => (argon2Runs++, verify(...args))) as typeof verify;

const dir = makeTempDir('signin-bench');
const database = await openEmbedded(dir, 'bench');
await runMigrations(database, null);
const config = { ...loadConfig({ LOG_LEVEL: 'silent', TRUST_PROXY: 'all', DATA_DIR: dir }) };
const app = createApp({
  config,
  database,
  limiter: memoryRateLimiter(),
  authenticator: createAuthenticator(database.db),
  log: createLogger('silent'),
  readiness: async () => [{ name: 'database', ok: true }],
});

const post = async (path: string, body: unknown, from: string) => {
  const started = performance.now();
  const response = await app.handle(
    new Request(`http://localhost${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://localhost', 'x-forwarded-for': from },
      body: JSON.stringify(body),
    }),
  );
  await response.text();
  return { status: response.status, ms: performance.now() - started };
};

const org = await database.db.transaction((tx) => createOrg(tx as never, { name: 'Bench', plan: 'enterprise', actor: 'bench' }));
const { user, link } = await database.db.transaction((tx) =>
  createUser(tx as never, { org: org.id, email: 'owner@bench.example', role: 'admin', actor: 'bench' }),
);
if ((await post('/api/auth/accept', { token: link.token, password: PASSWORD }, '192.0.2.1')).status !== 200)
  throw new Error('the owner could not accept their link');

const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
};
const byStatus = (answers: { status: number }[]) =>
  Object.entries(answers.reduce<Record<number, number>>((counts, a) => ((counts[a.status] = (counts[a.status] ?? 0) + 1), counts), {}))
    .map(([status, n]) => `${n}×${status}`)
    .join(' ');

const baselines: number[] = [];
for (let i = 0; i < 5; i++) {
  const answer = await post('/api/auth/sign-in', { email: user.email, password: PASSWORD }, `192.0.2.${10 + i}`);
  if (answer.status !== 200) throw new Error(`the owner's idle sign-in answered ${answer.status}`);
  baselines.push(answer.ms);
}
const baseline = median(baselines);

// A flood of made-up link tokens.
let runs = argon2Runs;
let cpu = process.cpuUsage();
let started = performance.now();
const accepts = await Promise.all(
  Array.from({ length: FLOOD }, (_, i) =>
    post('/api/auth/accept', { token: `made-up-token-${i}-${'x'.repeat(30)}`, password: 'whatever password' }, `198.51.100.${i % 250}`),
  ),
);
const acceptRow = [
  'accept flood',
  String(FLOOD),
  String(argon2Runs - runs),
  cpuSeconds(cpu).toFixed(2),
  (performance.now() - started).toFixed(0),
  Math.max(...accepts.map((a) => a.ms)).toFixed(0),
  byStatus(accepts),
  '—',
  '—',
];

// A flood of wrong passwords from many addresses, and the owner from a clean one in the middle of it.
runs = argon2Runs;
cpu = process.cpuUsage();
started = performance.now();
const flood = Array.from({ length: FLOOD }, (_, i) =>
  post('/api/auth/sign-in', { email: user.email, password: `wrong password ${i}` }, `203.0.113.${i % 250}`),
);
const owner = post('/api/auth/sign-in', { email: user.email, password: PASSWORD }, '192.0.2.200');
const [signIns, ownerAnswer] = await Promise.all([Promise.all(flood), owner]);
// The owner tries again once the flood has been answered, after the Retry-After it was given (if any).
await Bun.sleep(1000);
const ownerAgain = await post('/api/auth/sign-in', { email: user.email, password: PASSWORD }, '192.0.2.200');
const signInRow = [
  'sign-in flood',
  String(FLOOD),
  String(argon2Runs - runs),
  cpuSeconds(cpu).toFixed(2),
  (performance.now() - started).toFixed(0),
  Math.max(...signIns.map((a) => a.ms)).toFixed(0),
  byStatus(signIns),
  `${ownerAnswer.status} in ${ownerAnswer.ms.toFixed(0)} ms (${(ownerAnswer.ms / baseline).toFixed(1)}× idle)`,
  `${ownerAgain.status} in ${ownerAgain.ms.toFixed(0)} ms`,
];

console.log(`the owner's sign-in on an idle server (baseline): median ${baseline.toFixed(0)} ms of 5\n`);
console.log(
  table(
    ['flood', 'requests', 'argon2 runs', 'CPU s', 'wall ms', 'slowest ms', 'answers', "owner's sign-in (clean address)", 'owner 1 s after'],
    [acceptRow, signInRow],
  ),
);

await database.close();
await cleanupAll();

// `bun run fuzz`: property-based fuzzing (fast-check) of the real server, in-process on port 0, on
// the embedded database and, when TEST_DATABASE_URL is set, on PostgreSQL. Random raw HTTP/1.1
// requests (methods, odd paths and Host headers, query strings, hostile bodies, keys, webhook
// signatures: arbitraries.ts) must each get:
//   - no 5xx, except a deliberate 503 in the envelope with Retry-After;
//   - the envelope {success, data, error} with a `code` of its status, and X-Request-Id (the
//     webhook's {ok, status: "received"} and HEAD's empty body aside; Bun's own bare refusal of a
//     request that is not valid HTTP too; the console's not-found page, a 404 in HTML, for a browser's
//     GET outside /api); Allow on a 405, WWW-Authenticate on a key's 401;
//   - no success under /api without the key;
//   - an answer within 10 s, while /healthz, polled every 50 ms, answers within 100 ms;
//   - organisation B (whose key is never used) neither shown nor changed: its rows are compared
//     after every write and at the end.
// Memory (RSS) may grow by at most 512 MB over a run. A failure is shrunk to a minimal request.
//
//   bun run fuzz -- [--runs N] [--seed S] [--backend embedded|postgres|both] [--survey] [--deep]
//   (env: FUZZ_RUNS, FUZZ_SEED). --survey keeps going and lists every distinct finding; --deep adds
//   JSON nested thousands of levels. Replay a finding with its printed seed (and path).
import fc from 'fast-check';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createHmac } from 'node:crypto';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createLogger } from '../../src/lib/log.ts';
import { localRunner } from '../../src/db/units-of-work.ts';
import { adminUnits } from '../../src/admin/cli-units.ts';
import { queryText } from '../../src/db/client.ts';
import { newConnectorId } from '../../src/lib/ids.ts';
import { sealSecret } from '../../src/lib/secret-box.ts';
import { ERROR_STATUS } from '../../src/lib/errors.ts';
import { tempDir, testConfig } from '../helpers/harness.ts';
import { describe, requestArb, serialize, type FuzzRequest, type Target } from './arbitraries.ts';
import { header, rawRequest, type RawResponse } from './raw-http.ts';
import { DEFAULT_SETTINGS } from '../../src/settings.ts';

const { values: args } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    runs: { type: 'string' },
    seed: { type: 'string' },
    backend: { type: 'string' },
    survey: { type: 'boolean' },
    deep: { type: 'boolean' },
    path: { type: 'string' },
    help: { type: 'boolean' },
  },
});
if (args.help) {
  console.log(`bun run fuzz -- [options]
  --runs N        requests per backend (FUZZ_RUNS; default 300)
  --seed S        the random seed (FUZZ_SEED; default: from the clock, always printed)
  --path P        with --seed: replay one counterexample as printed
  --backend B     embedded | postgres | both (default: embedded, both when TEST_DATABASE_URL is set)
  --survey        keep going after a finding; list every distinct one, each shrunk
  --deep          bodies nested thousands of levels too (default at most 200)
  FUZZ_STATS=1    also print the answers per method, route and status`);
  process.exit(0);
}
const RUNS = Number(args.runs ?? process.env.FUZZ_RUNS ?? 300);
const SEED = Number(args.seed ?? process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const DB_URL = process.env.TEST_DATABASE_URL || null;
const backendArg = args.backend ?? (DB_URL ? 'both' : 'embedded');
const BACKENDS = backendArg === 'both' ? ['embedded', 'postgres'] : [backendArg];
if (!BACKENDS.every((b) => b === 'embedded' || b === 'postgres') || (BACKENDS.includes('postgres') && !DB_URL)) {
  console.error('--backend is embedded, postgres or both; postgres needs TEST_DATABASE_URL');
  process.exit(2);
}
const HEALTHZ_MS = 100;
const RSS_BOUND = 512 * 1024 * 1024;
const SECRET_KEY = 'fuzz-secret-key-0123456789abcdefghijklmnop';
const WORKER_URL = new URL('../../src/jobs/worker.ts', import.meta.url);

interface Problem {
  kind: string;
  status: number | null;
  message: string;
  answer: string;
}
interface Finding extends Problem {
  key: string;
  route: string;
  request: string;
  count: number;
  replay: string;
}

// --- Setting up: the server, two organisations with records, connectors and keys.
const json = async (response: Response) => ((await response.json()) as { data: any }).data;

async function setUp(backend: string) {
  const dataDir = join(tempDir('revintel-fuzz-'), 'data');
  // WhatsApp's sends go to a closed local port: nothing reaches Meta.
  const whatsapp = {
    secret: `wa-app-secret-${crypto.randomUUID()}`,
    verifyToken: `wa-verify-${crypto.randomUUID()}`,
    phoneNumberId: `7${Date.now()}${Math.floor(Math.random() * 1000)}`,
  };
  const config = testConfig({
    port: 0,
    host: '127.0.0.1',
    dataDir,
    databaseUrl: backend === 'postgres' ? DB_URL : null,
    secretKey: SECRET_KEY,
    anonLimitPerMinute: 10_000_000,
    anonLimitPerDay: 1_000_000_000,
    shutdownTimeoutMs: 5_000,
    whatsappAppSecret: whatsapp.secret,
    whatsappVerifyToken: whatsapp.verifyToken,
    whatsappApiBase: 'http://127.0.0.1:9/v21.0',
    allowInsecurePlatformUrls: true,
  });
  // The server's error lines, to tell what lies behind a 500.
  const errorLines: string[] = [];
  const log = createLogger('error', {}, (line) => errorLines.push(line) > 200 && errorLines.shift());
  const server = await startServer(config, { workerUrl: WORKER_URL, log });
  const admin = localRunner(server.database.db, adminUnits, DEFAULT_SETTINGS);
  const base = server.url.href;
  const org = async (label: string) => {
    const made = await admin.run('orgs.create', {
      name: `fuzz-${label}-${crypto.randomUUID().slice(0, 8)}`,
      plan: 'enterprise',
      rateLimitPerMinute: 10_000_000,
      rateLimitPerDay: 1_000_000_000,
      actor: 'fuzz',
    } as never);
    const { plaintext } = await admin.run('keys.create', { org: made.id, name: 'fuzz', expiresAt: null, actor: 'fuzz' });
    const secret = `whsec-${label}-${crypto.randomUUID()}`;
    const id = newConnectorId();
    await admin.run('connectors.create', {
      id,
      org: made.id,
      name: `fuzz-${label}`,
      platform: 'generic',
      secretSealed: sealSecret(secret, SECRET_KEY, id),
      tokenHash: null,
      actor: 'fuzz',
    });
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path.slice(1)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${plaintext}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(json);
    const ids = {
      customers: [] as string[],
      contracts: [] as string[],
      invoices: [] as string[],
      tickets: [] as string[],
      externalIds: [] as string[],
    };
    for (const n of [1, 2, 3]) {
      const ext = `${label}-${n}`;
      const customer = await post('/api/customers', {
        external_id: ext,
        name: `${label} ${n}`,
        currency: 'EUR',
        email: `c${n}@${label}.example.com`,
        domain: `${label}${n}.example.com`,
      });
      const contract = await post('/api/contracts', {
        external_id: `${ext}-c`,
        customer_id: customer.id,
        name: 'Plan',
        start_date: '2026-01-01',
        billing_interval: 'month',
        amount: 10_000 * n,
      });
      const invoice = await post('/api/invoices', {
        external_id: `${ext}-i`,
        customer_id: customer.id,
        contract_id: contract.id,
        amount_due: 5_000,
        issued_at: '2026-01-01T00:00:00Z',
        due_date: '2026-01-31',
      });
      ids.customers.push(customer.id), ids.contracts.push(contract.id), ids.invoices.push(invoice.id), ids.externalIds.push(ext);
      const delivery = JSON.stringify({
        ticket: {
          id: `${label}-T${n}`,
          subject: 'We want to cancel our subscription',
          requester_email: `c${n}@${label}.example.com`,
          status: 'open',
          created_at: '2026-01-05T09:15:00Z',
        },
      });
      await fetch(`${base}api/webhooks/tickets?connectorId=${id}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(delivery).digest('hex')}`,
        },
        body: delivery,
      });
    }
    for (let i = 0; i < 100 && ids.tickets.length < 3; i++) {
      await Bun.sleep(100);
      ids.tickets = (await fetch(`${base}api/tickets`, { headers: { authorization: `Bearer ${plaintext}` } }).then(json)).map(
        (t: { id: string }) => t.id,
      );
    }
    return { id: made.id as string, key: plaintext, connector: id, secret, ids, name: made.name as string };
  };
  const a = await org('a');
  const b = await org('b');
  const chatId = `chi_fuzz${crypto.randomUUID().slice(0, 8)}`;
  await admin.run('chat.add', {
    id: chatId,
    org: a.id,
    platform: 'whatsapp',
    externalId: whatsapp.phoneNumberId,
    credentialsSealed: sealSecret('EAAG-fuzz-token-000000', SECRET_KEY, chatId),
    actor: 'fuzz',
  });
  const tables = [
    'organisations',
    'customers',
    'contracts',
    'invoices',
    'tickets',
    'ticket_events',
    'connectors',
    'api_keys',
    'idempotency_keys',
  ];
  const checksumSql = `select ${tables.map((t) => `(select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) from ${t} x where ${t === 'organisations' ? 'id' : 'org_id'} = $1)`).join(" || ':' || ")} as sum`;
  const checksum = async () => (await queryText<{ sum: string }>(server.database.db, checksumSql, [b.id]))[0]!.sum;
  // Settled: org B's events processed, its key's last use written.
  let before = await checksum();
  for (let i = 0; i < 20; i++) {
    await Bun.sleep(250);
    const now = await checksum();
    if (now === before) break;
    before = now;
  }
  const target: Target = {
    port: server.port,
    keyA: a.key,
    connectorA: a.connector,
    secretA: a.secret,
    connectorB: b.connector,
    whatsapp,
    ids: Object.fromEntries(
      Object.entries(a.ids).map(([k, v]) => [k, [...v, ...(b.ids as Record<string, string[]>)[k]!]]),
    ) as Target['ids'],
    deep: args.deep ?? false,
  };
  const orgB = [
    b.id,
    b.name,
    b.connector,
    ...Object.values(b.ids)
      .flat()
      .filter((x) => !x.startsWith('b-')),
  ];
  // What the worker thread made of org A's deliveries: errors other than "no ticket in it" are worth a look.
  const workerErrors = () =>
    queryText<{ last_error: string; status: string; n: number }>(
      server.database.db,
      `select last_error, status, count(*)::int as n from ticket_events where org_id = $1 and last_error is not null and last_error not like 'no ticket found%' group by 1, 2 order by 3 desc`,
      [a.id],
    );
  return { server, target, checksum, before, dataDir, errorLines, orgB, workerErrors };
}

// --- /healthz, polled on its own all along: each slow answer with the fuzz request in flight.
function startProbe(server: RunningServer, inFlight: () => FuzzRequest | null) {
  const slow: { start: number; end: number; ms: number; during: string }[] = [];
  let max = 0;
  let running = true;
  let current: Promise<void> = Promise.resolve();
  const loop = async () => {
    while (running) {
      const start = performance.now();
      const during = inFlight();
      current = fetch(`${server.url.href}healthz`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.arrayBuffer().then(() => undefined),
        () => undefined,
      );
      await current;
      const end = performance.now();
      const ms = end - start;
      max = Math.max(max, ms);
      if (ms > HEALTHZ_MS) slow.push({ start, end, ms: Math.round(ms), during: during ? describe(during, 300) : '(none)' });
      await Bun.sleep(50);
    }
  };
  const done = loop();
  return {
    slow,
    max: () => Math.round(max),
    /** Waits for the probe in flight: a stall shows once it has answered. */
    settle: () => current,
    stop: () => ((running = false), done),
  };
}

// --- One request, and what is wrong with its answer (null: nothing).
const ENVELOPE_EXEMPT_STATUSES = new Set([400, 413, 414, 431, 505]);

function judge(req: FuzzRequest, res: RawResponse, keyA: string): Problem | null {
  const text = res.body.toString('utf8');
  const answer = `${res.status} ${text.slice(0, 200)}`;
  const p = (kind: string, message: string): Problem => ({ kind, status: res.status, message, answer });
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {}
  const envelope = body && typeof body === 'object' && 'success' in body && 'data' in body && 'error' in body;
  // Bun's own refusal of bytes that are not HTTP: a bare status, no request id, not the app's.
  if (!header(res, 'x-request-id') && !envelope && ENVELOPE_EXEMPT_STATUSES.has(res.status)) return null;
  if (res.status >= 500 && !(res.status === 503 && envelope && header(res, 'retry-after')))
    return p('5xx', envelope ? String(body.error) : text.slice(0, 120));
  const rid = header(res, 'x-request-id');
  if (!rid) return p('no x-request-id', text.slice(0, 120));
  if (!/^[A-Za-z0-9_.:@/-]{1,128}$/.test(rid)) return p('bad x-request-id', rid.slice(0, 160));
  // What docs/api.md promises alongside: Allow on a 405, WWW-Authenticate on a 401 for a key (a
  // webhook's signature is not one), Retry-After on a 429.
  const needs = (
    { 405: 'allow', 401: req.route.startsWith('/api/webhooks/') ? '' : 'www-authenticate', 429: 'retry-after' } as Record<number, string>
  )[res.status];
  if (needs && !header(res, needs)) return p(`no ${needs} header`, text.slice(0, 120));
  // Without key A (in any spelling) nothing under /api but the webhooks may succeed.
  const keyed = req.headers.some(([n, v]) => n === 'authorization' && v.includes(keyA));
  if (
    res.status < 300 &&
    !keyed &&
    /^\/+(ab\/)?api\//i.test(req.target.replace(/^http:\/\/[^/]*/, '')) &&
    !req.route.startsWith('/api/webhooks')
  )
    return p('answered without a key', text.slice(0, 120));
  if (req.method === 'HEAD') return null;
  // WhatsApp's handshake echoes the challenge as text; its deliveries are acknowledged with {}.
  const messagingOk =
    req.route === '/api/webhooks/messaging' &&
    res.status === 200 &&
    ((req.method === 'GET' && text === '1158201444') || (req.method === 'POST' && text === '{}'));
  const webhookOk =
    messagingOk || (req.route === '/api/webhooks/tickets' && res.status === 200 && body && (body.ok === true || 'challenge' in body));
  if (webhookOk) return null;
  // The console's own "not found": a page a browser opened (GET, Accept naming text/html) at a path
  // no route has, outside /api/ (which keeps the envelope).
  const path = req.target.replace(/^http:\/\/[^/]*/, '');
  const browsing = req.method === 'GET' && req.headers.some(([n, v]) => n.toLowerCase() === 'accept' && v.includes('text/html'));
  if (res.status === 404 && (header(res, 'content-type') ?? '').startsWith('text/html')) {
    return browsing && !/^\/api\//.test(path) ? null : p('a page where the envelope belongs', `${req.method} ${path.slice(0, 120)}`);
  }
  if (!envelope) return p('not the envelope', text.slice(0, 120));
  if (body.success !== res.status < 400 || (body.success ? body.error !== null : body.data !== null || typeof body.error !== 'string'))
    return p('inconsistent envelope', text.slice(0, 120));
  if (!body.success && (ERROR_STATUS as Record<string, number>)[body.code] !== res.status)
    return p('code does not match status', `${body.code}: ${body.error}`);
  return null;
}

const normalise = (message: string) =>
  message
    .replace(/\(request [^)]*\)/g, '(request …)')
    .replace(/\b(req|cus|con|ctr|inv|tkt|bat|evt|key)_[A-Za-z0-9]+/g, '$1_…')
    .replace(/\d+/g, '#')
    .replace(/"[^"]{40,}"/g, '"…"')
    .slice(0, 160);

async function fuzzBackend(backend: string) {
  const started = performance.now();
  const { server, target, checksum, before, dataDir, errorLines, orgB, workerErrors } = await setUp(backend);
  let inFlight: FuzzRequest | null = null;
  const probe = startProbe(server, () => inFlight);
  const rss = () => (Bun.gc(true), process.memoryUsage().rss);
  const rssBefore = rss();
  const rssTrend: number[] = [];
  let sent = 0;
  let platformAnswers = 0;
  const statuses = new Map<string, number>();
  const byRoute = new Map<string, number>();
  let wedged = false;
  const findings = new Map<string, Finding>();
  const stalls: string[] = [];

  async function check(req: FuzzRequest): Promise<Problem | null> {
    if (wedged) return null;
    inFlight = req;
    const t0 = performance.now();
    const bytes = serialize(req);
    const answers = await Promise.all(
      Array.from({ length: req.copies }, () =>
        rawRequest(target.port, bytes, { head: req.method === 'HEAD', timeoutMs: req.malformed ? 1_000 : 10_000 }),
      ),
    );
    const t1 = performance.now();
    inFlight = null;
    sent += answers.length;
    if (Math.floor(sent / 2000) > rssTrend.length) rssTrend.push(Math.round(rss() / 2 ** 20));
    // Judged by the worst answer: an error, else a 5xx, else the first.
    const res = answers.find((a) => 'error' in a) ?? answers.find((a) => !('error' in a) && a.status >= 500) ?? answers[0]!;
    const label = 'error' in res ? res.error : String(res.status);
    statuses.set(label, (statuses.get(label) ?? 0) + 1);
    if (process.env.FUZZ_STATS) {
      const k = `${req.method} ${req.route} ${label}${'error' in res || header(res, 'x-request-id') ? '' : ' BARE'} ${'error' in res ? '' : normalise(res.body.toString().match(/"error":"([^"]{0,60})/)?.[1] ?? '')}`;
      byRoute.set(k, (byRoute.get(k) ?? 0) + 1);
    }
    let problem: Problem | null;
    if ('error' in res) {
      // A request that is not valid HTTP (or whose framing never ends) may be dropped or left waiting.
      problem = req.malformed ? null : { kind: 'no answer', status: null, message: res.error, answer: `${res.error} after ${res.ms} ms` };
      if (res.error === 'timeout' && !req.malformed) {
        const alive = await fetch(`${server.url.href}healthz`, { signal: AbortSignal.timeout(3_000) }).then(
          () => true,
          () => false,
        );
        if (!alive) wedged = true;
      }
    } else {
      problem = judge(req, res, target.keyA);
      if (!problem && !header(res, 'x-request-id')) platformAnswers++;
      const rid = header(res, 'x-request-id');
      const logged = rid && problem?.kind === '5xx' ? errorLines.find((line) => line.includes(rid)) : undefined;
      if (problem && logged) problem.answer += `\n   server log: ${logged.slice(0, 400)}`;
      const shown = res.status < 300 ? res.body.toString() : '';
      // B's ids as ids or references; org A may well write one as its own external_id or name.
      const leaked = orgB.find((id) =>
        ['id', 'org_id', 'customer_id', 'contract_id', 'connector_id'].some((field) => shown.includes(`"${field}":"${id}"`)),
      );
      if (!problem && leaked)
        problem = {
          kind: 'isolation',
          status: res.status,
          message: "a success answer shows org B's data",
          answer: `${leaked} in ${res.body.toString().slice(0, 200)}`,
        };
      if (!problem && req.route === '/api/webhooks/tickets' && res.status < 300 && res.body.toString().includes('"connector":"fuzz-b"')) {
        problem = {
          kind: 'isolation',
          status: res.status,
          message: "org B's connector accepted a delivery not signed with its secret",
          answer: res.body.toString().slice(0, 200),
        };
      }
    }
    if (!problem && !['GET', 'HEAD', 'OPTIONS'].includes(req.method) && (await checksum()) !== before) {
      problem = {
        kind: 'isolation',
        status: 'error' in res ? null : res.status,
        message: "org B's rows changed",
        answer: 'error' in res ? res.error : res.body.toString().slice(0, 200),
      };
    }
    await probe.settle();
    const stall = probe.slow.find((s) => s.end >= t0 && s.start <= t1 + 5);
    if (!problem && stall) {
      // A stall once may be the machine; a stall again on the same request is the request's.
      const again = await (async () => {
        const from = performance.now();
        inFlight = req;
        await rawRequest(target.port, serialize(req), { head: req.method === 'HEAD', timeoutMs: 10_000 });
        inFlight = null;
        sent++;
        await probe.settle();
        return probe.slow.find((s) => s.end >= from);
      })();
      if (again)
        problem = {
          kind: 'healthz slow',
          status: null,
          message: `/healthz took ${again.ms} ms (limit ${HEALTHZ_MS})`,
          answer: `stalled twice: ${stall.ms} ms, ${again.ms} ms`,
        };
      else stalls.push(`${stall.ms} ms during ${describe(req, 200).replace(/\n/g, ' ')}`);
    }
    return problem;
  }

  const keyOf = (req: FuzzRequest, p: Problem) => `${p.kind} | ${p.status ?? '-'} | ${req.method} ${req.route} | ${normalise(p.message)}`;
  const property = fc.asyncProperty(requestArb(target), async (req) => {
    const problem = await check(req);
    if (!problem) return true;
    const key = keyOf(req, problem);
    const known = findings.get(key);
    if (known && args.survey) return (known.count++, true);
    return false;
  });

  // Survey: after each failure (shrunk), go on with the next seed until the runs are spent.
  let left = RUNS;
  let seed = SEED;
  while (left > 0 && !wedged) {
    const details = await fc.check(property, {
      seed,
      numRuns: left,
      path: seed === SEED ? args.path : undefined,
      endOnFailure: false,
      interruptAfterTimeLimit: 3_600_000,
    });
    left -= details.numRuns;
    if (!details.failed) break;
    const req = details.counterexample?.[0];
    const problem = req ? await check(req) : null;
    if (req && problem) {
      const key = keyOf(req, problem);
      const entry = findings.get(key);
      if (entry) entry.count++;
      else
        findings.set(key, {
          ...problem,
          key,
          route: req.route,
          request: describe(req),
          count: 1,
          replay: `--seed ${seed} --path ${details.counterexamplePath} --backend ${backend}${args.deep ? ' --deep' : ''}`,
        });
    } else {
      findings.set(`flaky ${seed}`, {
        kind: 'flaky',
        status: null,
        message: `a failure that did not recur (${String(details.errorInstance ?? '')})`,
        answer: '',
        key: `flaky ${seed}`,
        route: '-',
        request: '',
        count: 1,
        replay: `--seed ${seed} --path ${details.counterexamplePath}`,
      });
    }
    if (!args.survey) break;
    seed = (seed * 48271 + 1) % 2 ** 31;
  }
  if (wedged)
    findings.set('wedged', {
      kind: 'no answer',
      status: null,
      message: 'the server stopped answering /healthz after a timeout; the run was cut short',
      answer: '',
      key: 'wedged',
      route: '-',
      request: '',
      count: 1,
      replay: '',
    });

  await probe.stop();
  const rssAfter = rss();
  const growth = rssAfter - rssBefore;
  if (growth > RSS_BOUND)
    findings.set('memory', {
      kind: 'memory',
      status: null,
      message: `RSS grew by ${Math.round(growth / 2 ** 20)} MB (bound ${RSS_BOUND / 2 ** 20} MB)`,
      answer: '',
      key: 'memory',
      route: '-',
      request: '',
      count: 1,
      replay: '',
    });
  await Bun.sleep(500); // the worker thread's processing of what was just accepted
  const after = await checksum();
  if (after !== before)
    findings.set('isolation-end', {
      kind: 'isolation',
      status: null,
      message: "org B's rows differ after the run",
      answer: '',
      key: 'isolation-end',
      route: '-',
      request: '',
      count: 1,
      replay: '',
    });
  const worker = await workerErrors();
  await server.stop();
  rmSync(join(dataDir, '..'), { recursive: true, force: true });

  console.log(
    `\n== ${backend}: ${sent} requests (${RUNS - Math.max(left, 0)} runs) in ${((performance.now() - started) / 1000).toFixed(1)} s; ${platformAnswers} bare platform answers; /healthz max ${probe.max()} ms; RSS ${Math.round(rssBefore / 2 ** 20)} -> ${Math.round(rssAfter / 2 ** 20)} MB (every 2000 requests: ${rssTrend.join(', ')})`,
  );
  console.log(
    `   answers: ${[...statuses]
      .sort()
      .map(([s, n]) => `${s}×${n}`)
      .join(' ')}`,
  );
  if (process.env.FUZZ_STATS)
    console.log(
      [...byRoute]
        .sort()
        .map(([k, n]) => `   ${k} ×${n}`)
        .join('\n'),
    );
  if (stalls.length)
    console.log(`   ${stalls.length} /healthz stall(s) that did not recur on a retry (not counted): ${stalls.slice(0, 3).join(' | ')}`);
  if (worker.length)
    console.log(
      `   the worker's errors on org A's events other than "no ticket found" (not counted):\n${worker.map((w) => `     ${w.n}× ${w.status}: ${w.last_error.slice(0, 160)}`).join('\n')}`,
    );
  for (const f of findings.values()) {
    console.log(
      `\n-- FINDING [${f.kind}] ${f.message}  (${f.count}×)\n   key: ${f.key}\n   answer: ${f.answer.replace(/\n/g, ' ')}${f.replay ? `\n   replay: bun run fuzz -- ${f.replay}` : ''}`,
    );
    if (f.request) console.log(f.request.replace(/^/gm, '   > '));
  }
  if (!findings.size) console.log('   no findings');
  return findings.size;
}

console.log(
  `fuzz: seed ${SEED}, ${RUNS} runs per backend, backends ${BACKENDS.join(', ')}${args.survey ? ', survey' : ''}${args.deep ? ', deep nesting' : ''} (replay: bun run fuzz -- --seed ${SEED} --runs ${RUNS})`,
);
let failures = 0;
for (const backend of BACKENDS) failures += await fuzzBackend(backend);
console.log(failures ? `\nfuzz: ${failures} finding(s)` : '\nfuzz: no findings');
process.exit(failures ? 1 : 0);

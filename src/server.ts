// `revintel serve`: open the database, migrate, start the worker thread and the HTTP server, and
// shut all of it down in order on SIGTERM/SIGINT.
import { hostname } from 'node:os';
import { createApp, type App, type AppDeps } from './app.ts';
import { describeError, envelopeResponse } from './plugins/errors.ts';
import type { Config } from './config.ts';
import { connectPostgres, openEmbedded, type Database } from './db/client.ts';
import { isMigrated, runMigrations } from './db/migrate.ts';
import { warmScoring } from './modules/predictions/service.ts';
import { createBackgroundTurns, type BackgroundTurns } from './db/turns.ts';
import type { Peer } from './plugins/request-context.ts';
import { createMetrics } from './modules/metrics/registry.ts';
import { scrape } from './modules/metrics/index.ts';
import { startSupervisor, type Supervisor } from './jobs/supervisor.ts';
import { settingsOf } from './settings.ts';
import { newId } from './lib/ids.ts';
import { createLogger, type Logger } from './lib/log.ts';
import { memoryRateLimiter, postgresRateLimiter, redisRateLimiter, type RateLimiter } from './lib/rate-limiter.ts';
import { ensureSecretKey } from './lib/secret-key.ts';
import { releaseStartupMemory } from './lib/startup-memory.ts';
import { createAuthenticator } from './modules/keys/service.ts';
import type { ReadinessCheck } from './modules/health/index.ts';
import { VERSION } from './version.ts';

export class PortInUseError extends Error {
  constructor(host: string, port: number) {
    super(
      `PORT ${port} on ${host} is in use by another process. Choose another PORT, stop that process, ` +
        'or — for several revintel processes on one PostgreSQL — set REUSE_PORT=true on each of them.',
    );
    this.name = 'PortInUseError';
  }
}

export async function openDatabase(
  config: Config,
  command: string,
  onFailure?: (error: Error) => void,
  notice?: (message: string) => void,
): Promise<Database> {
  const bounds = { timeoutMs: config.requestTimeoutMs };
  return config.databaseUrl
    ? connectPostgres(config.databaseUrl, config.databasePoolSize, bounds)
    : openEmbedded(config.dataDir, command, bounds, onFailure, notice);
}

async function createLimiter(config: Config, database: Database): Promise<{ limiter: RateLimiter; close: () => Promise<void> }> {
  switch (config.rateLimitStore) {
    case 'memory': {
      const limiter = memoryRateLimiter();
      return { limiter, close: () => limiter.close() };
    }
    case 'postgres': {
      const limiter = postgresRateLimiter(database.sql!);
      return { limiter, close: () => limiter.close() };
    }
    case 'redis': {
      // Loaded only for this store, like every piece a deployment may not use.
      const { default: Redis } = await import('ioredis');
      const client = new Redis(config.redisUrl!, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true });
      await client.connect();
      const limiter = redisRateLimiter(client);
      return {
        limiter,
        close: async () => {
          await limiter.close();
          await client.quit();
        },
      };
    }
  }
}

export interface RunningServer {
  url: URL;
  port: number;
  database: Database;
  stop(): Promise<void>;
}

export interface ServeOptions {
  workerUrl: URL | string;
  /** The main worker thread, already started from `workerUrl` (its code loads meanwhile); without
   * it start-up starts one first thing. */
  worker?: Worker;
  log?: Logger;
  /** More feature modules to mount (the tests mount fixtures here). */
  modules?: AppDeps['modules'];
  /** The embedded database failed for good (db/embedded-guard.ts): the process should restart. */
  onFatal?: (error: Error) => void;
}

/** IPv6 literals go in brackets in a URL. */
const urlHost = (host: string) => (host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host);

/** /readyz runs at most one check at a time and reuses a result for a second: probes from anyone
 * cost the database next to nothing. */
function cachedReadiness(log: Logger, check: () => Promise<ReadinessCheck[]>): () => Promise<ReadinessCheck[]> {
  let last: { at: number; checks: Promise<ReadinessCheck[]> } | null = null;
  return () => {
    const now = Date.now();
    if (!last || now - last.at > 1_000) {
      const checks = check().catch((error) => {
        log.error('readiness check failed', describeError(error));
        return [{ name: 'readiness', ok: false, detail: 'check failed' }];
      });
      last = { at: now, checks };
    }
    return last.checks;
  };
}

/** Is the database reachable, migrated, and the worker beating? */
function readinessOf(database: Database, supervisor: Supervisor, log: Logger) {
  return cachedReadiness(log, async (): Promise<ReadinessCheck[]> => {
    const checks: ReadinessCheck[] = [];
    let reachable = true;
    try {
      await database.ping(1_000);
    } catch (error) {
      reachable = false;
      log.warn('readiness: database unreachable', describeError(error));
    }
    const failure = database.failure();
    if (failure) reachable = false;
    checks.push({
      name: 'database',
      ok: reachable,
      detail: failure ? 'failed: restart revintel' : reachable ? database.kind : 'unreachable',
    });
    const migrated = reachable && (await isMigrated(database).catch(() => false));
    checks.push({ name: 'migrations', ok: migrated, detail: migrated ? 'applied' : reachable ? 'pending' : 'unknown' });
    const alive = supervisor.isAlive();
    checks.push({ name: 'worker', ok: alive, detail: alive ? 'alive' : 'no heartbeat' });
    return checks;
  });
}

/** Requests in flight, for the background units that wait for them (db/turns.ts). */
function countedFetch(app: App, turns: BackgroundTurns) {
  return (request: Request, bunServer: Peer): Response | Promise<Response> => {
    turns.requestStarted();
    let answer: Response | Promise<Response>;
    try {
      answer = app.handle(request, bunServer);
    } catch (error) {
      turns.requestEnded();
      throw error;
    }
    if (!(answer instanceof Promise)) {
      turns.requestEnded();
      return answer;
    }
    return answer.finally(turns.requestEnded);
  };
}

/** Starts listening; a taken port is said plainly. */
function listen(config: Config, app: App, log: Logger, turns: BackgroundTurns | null): ReturnType<typeof Bun.serve> {
  try {
    return Bun.serve({
      port: config.port,
      hostname: config.host,
      // Off unless asked: a second process on a taken port must fail, not silently share it.
      reusePort: config.reusePort,
      development: false,
      // Longer than a request's deadline, so a body trickled in past it is answered (503, in
      // the envelope) rather than dropped by Bun with no answer. Bun allows at most 255 s.
      idleTimeout: Math.min(255, Math.ceil(config.requestTimeoutMs / 1000) + 10),
      // The gate refuses a declared length over the route's limit and the body reader stops a
      // streamed one at it, both with the envelope; Bun's own bare 413 is only a last resort.
      maxRequestBodySize: 1024 * 1024 * 1024,
      fetch: turns ? countedFetch(app, turns) : (request, bunServer) => app.handle(request, bunServer),
      // The last resort for anything app.handle failed to answer itself: without it Bun sends its
      // bare "Something went wrong!" 500 and nothing is logged.
      error: (error) => {
        const requestId = `req_${crypto.randomUUID().replaceAll('-', '')}`;
        log.error('unhandled error outside the request pipeline', { request_id: requestId, ...describeError(error) });
        return envelopeResponse(500, `Internal server error (request ${requestId})`, 'internal', { 'x-request-id': requestId });
      },
    });
  } catch (error) {
    if ((error as { code?: string }).code === 'EADDRINUSE' || /in use/i.test(String((error as Error).message))) {
      throw new PortInUseError(config.host, config.port);
    }
    throw error;
  }
}

/** Shutdown in order, within SHUTDOWN_TIMEOUT_MS: stop listening and let requests in flight finish,
 * then the worker (it finishes the work in hand), then everything opened at start, in reverse. */
function shutdownOf(
  config: Config,
  log: Logger,
  server: ReturnType<typeof Bun.serve>,
  supervisor: Supervisor,
  cleanup: () => Promise<void>,
): () => Promise<void> {
  let stopping: Promise<void> | null = null;
  return () =>
    (stopping ??= (async () => {
      const deadline = Date.now() + config.shutdownTimeoutMs;
      const left = () => Math.max(0, deadline - Date.now());
      log.info('shutting down: no new connections, finishing requests in flight');
      // stop(false) stops listening and resolves once the requests in flight have completed.
      const drained = await Promise.race([server.stop(false).then(() => true), Bun.sleep(left() * 0.6).then(() => false)]);
      if (!drained) {
        log.warn('requests still in flight at the deadline: closing their connections');
        await server.stop(true);
      }
      await supervisor.stop(left());
      await cleanup();
      log.info('stopped');
    })());
}

/** How long each step of start-up took, reported on the "serving" line. */
function phaseTimer() {
  const phases: Record<string, number> = {};
  let phaseStart = performance.now();
  const phase = (name: string) => {
    const now = performance.now();
    phases[name] = Math.round(now - phaseStart);
    phaseStart = now;
  };
  return { phases, phase };
}

export async function startServer(config: Config, options: ServeOptions): Promise<RunningServer> {
  const startedAt = Date.now();
  // From the process's start to here: loading the code (and reading the settings).
  const loadedMs = Math.round(performance.now());
  // Embedded: the worker's code loads while the database opens and migrates; it waits for its
  // `init`. On PostgreSQL it starts when there is work (jobs/supervisor.ts).
  const firstWorker = options.worker ?? (config.databaseUrl ? undefined : new Worker(options.workerUrl));
  const log = options.log ?? createLogger(config.logLevel);
  const { phases, phase } = phaseTimer();
  const database = await openDatabase(
    config,
    'serve',
    (error) => {
      log.error('embedded database failed: every query is refused until revintel restarts', { error: error.message });
      options.onFatal?.(error);
    },
    (message) => log.warn(message),
  ).catch((error) => {
    firstWorker?.terminate();
    throw error;
  });
  phase('open_database_ms');
  if (config.debugStalls && database.pglite) {
    const { watchStalls } = await import('./db/embedded-stalls.ts');
    const round = (ms: number) => Math.round(ms);
    watchStalls({
      pglite: database.pglite,
      report: (stall) =>
        log.warn('main thread stalled', {
          late_ms: round(stall.lateMs),
          window_ms: round(stall.windowMs),
          spent: Object.fromEntries(stall.spent.map((part) => [part.what, round(part.ms)])),
          heap_freed_mb: round(stall.heapFreedMb),
        }),
    });
  }
  // Whatever is opened is closed again, in reverse, at shutdown or if start-up fails. The worker
  // thread is ended last (a no-op once the supervisor has stopped it).
  const cleanups: (() => Promise<void>)[] = [async () => firstWorker?.terminate(), () => database.close()];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await fn().catch((error) => log.error('shutdown step failed', { error: String(error) }));
  };
  try {
    // On the embedded database a SECRET_KEY is made at first start; the app, the worker and the
    // admin socket all read the one settings object built here, with whichever key is in force.
    config = { ...config, secretKey: ensureSecretKey(config.secretKey, database.kind === 'embedded' ? config.dataDir : null) };
    const settings = settingsOf(config);
    const migration = await runMigrations(database, config.databaseUrl);
    phase('migrations_ms');
    if (database.kind === 'embedded') {
      await warmScoring(database.db, settings.predictions);
      phase('warm_up_ms');
    }
    if (!config.secretKey && database.kind === 'postgres') {
      log.warn('SECRET_KEY is not set: connectors with webhook secrets cannot be created until it is');
    }
    if (config.rateLimitStore === 'memory' && database.kind === 'postgres') {
      log.warn('RATE_LIMIT_STORE=memory on PostgreSQL: each process counts alone, so N processes admit N times the limits');
    }

    const { limiter, close: closeLimiter } = await createLimiter(config, database);
    cleanups.push(closeLimiter);
    const authenticator = createAuthenticator(database.db, (error) => log.warn('could not record key use', { error: String(error) }));

    const instance = { id: newId('ins'), hostname: hostname(), pid: process.pid, version: VERSION, startedAt: new Date(startedAt) };
    // Embedded: the one thread that runs every query serves requests first (db/turns.ts).
    const turns = database.kind === 'embedded' ? createBackgroundTurns() : null;
    const supervisor = startSupervisor({
      workerUrl: options.workerUrl,
      firstWorker,
      database,
      databaseUrl: config.databaseUrl,
      instance,
      log,
      logLevel: config.logLevel,
      settings,
      turns: turns ?? undefined,
    });
    cleanups.push(() => supervisor.stop(1_000)); // a no-op once stop() has stopped it

    const metrics = createMetrics(database);
    if (config.metricsPort) {
      // Prometheus on a port of its own, local only: no token, nothing but /metrics.
      const metricsServer = Bun.serve({
        hostname: '127.0.0.1',
        port: config.metricsPort,
        fetch: (request) =>
          new URL(request.url).pathname === '/metrics'
            ? scrape(metrics)
            : new Response('Not found: only /metrics is served here\n', { status: 404 }),
      });
      cleanups.push(async () => void (await metricsServer.stop(true)));
      log.info('metrics served', { url: `http://127.0.0.1:${metricsServer.port}/metrics` });
    }
    const app = createApp({
      metrics,
      config,
      settings,
      database,
      limiter,
      authenticator,
      log,
      readiness: readinessOf(database, supervisor, log),
      startedAt,
      modules: options.modules,
      wakeWorker: (events) => supervisor.wake(events),
      wakeJobs: () => supervisor.wakeJobs(),
    });
    if (database.kind === 'embedded') {
      // The CLI's door into the embedded database (and backups with it): loaded on that database only.
      const { serveAdminSocket } = await import('./admin/socket.ts');
      const socket = serveAdminSocket({
        dataDir: config.dataDir,
        db: database.db,
        settings,
        onAccessChange: () => {
          authenticator.invalidate();
          app.connectors.invalidate();
          app.billingConnectors.invalidate();
        },
        onJobsQueued: () => supervisor.wakeJobs(),
        onEventsQueued: () => supervisor.wake(),
        turns: turns ?? undefined,
      });
      cleanups.push(socket.stop);
    }
    phase('prepare_ms');

    await supervisor.ready;
    phase('worker_ready_ms');
    const server = listen(config, app, log, turns);
    const url = new URL(`http://${urlHost(config.host)}:${server.port}`);
    log.info('revintel serving', {
      url: url.href,
      version: VERSION,
      database: database.kind,
      data_dir: database.kind === 'embedded' ? config.dataDir : undefined,
      rate_limit_store: limiter.kind,
      migrations_applied: migration.applied,
      startup_ms: Date.now() - startedAt,
      load_ms: loadedMs,
      ...phases,
    });
    // The worker thread does the same once it is ready (jobs/worker.ts).
    releaseStartupMemory();
    return { url, port: server.port!, database, stop: shutdownOf(config, log, server, supervisor, cleanup) };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

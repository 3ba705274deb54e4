import { DataDirBusyError } from '../db/data-dir-lock.ts';
import { SETTING_NAMES } from '../config.ts';
import type { RunningServer } from '../server.ts';
import { exitWith, helpText, parseCommand } from './args.ts';

const HELP = helpText({
  usage: 'revintel [serve] [options]',
  about: `Serves the HTTP API and runs the background worker. Without DATABASE_URL it keeps its data in an
embedded database in DATA_DIR. Every option is also an environment variable (--port <-> PORT);
the flag wins.`,
  settings: SETTING_NAMES,
});

const EXIT_DATABASE_FAILED = 70;

export async function serveCommand(argv: string[], workerUrl: URL) {
  const cmd = parseCommand(argv, {}, HELP);
  const config = cmd.config();
  // Embedded, the worker thread starts first: its code loads on the other core while this thread
  // loads the server's (every path out of a failed start ends the process, and the thread with it).
  // On PostgreSQL it starts only when there is work (jobs/supervisor.ts).
  const worker = config.databaseUrl ? undefined : new Worker(workerUrl);
  // The embedded database's wasm compiles while the server's code loads (an error is met again,
  // and reported, when the database opens).
  if (!config.databaseUrl) import('../db/embedded.ts').then((embedded) => embedded.compilePglite()).catch(() => {});
  const { PortInUseError, startServer } = await import('../server.ts');
  // Handlers first: a signal that arrives while starting up is honoured once the server is up (the
  // start-up itself is bounded: the worker must register within 30 s). A second signal exits at once.
  let server: RunningServer | null = null;
  let signalled: string | null = null;
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      process.stderr.write(
        `${JSON.stringify({ time: new Date().toISOString(), level: 'warn', msg: 'second signal: exiting now', signal })}\n`,
      );
      process.exit(1);
    }
    signalled ??= signal;
    if (!server) return;
    stopping = true;
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'info', msg: 'signal received', signal })}\n`);
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // A library's late error (postgres.js writing to a socket the database closed, seen during
  // shutdown) would otherwise print a multi-KB dump of minified source: one line instead, and the
  // server goes on (its database clients reconnect; a lost database fails /readyz).
  const logUncaught = (kind: string) => (error: unknown) => {
    const message = String((error as Error)?.message ?? error).slice(0, 500);
    process.stderr.write(
      `${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: kind, error: message, during_shutdown: stopping })}\n`,
    );
  };
  process.on('uncaughtException', logUncaught('uncaught exception'));
  process.on('unhandledRejection', logUncaught('unhandled rejection'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    // A failed embedded database refuses every query: stop as on SIGTERM, with a code that tells a
    // supervisor (systemd's Restart=on-failure, Docker's restart policy) to start it again.
    server = await startServer(config, {
      workerUrl,
      worker,
      onFatal: () => {
        if (stopping) return;
        stopping = true;
        if (!server) process.exit(EXIT_DATABASE_FAILED);
        server.stop().finally(() => process.exit(EXIT_DATABASE_FAILED));
      },
    });
  } catch (error) {
    if (error instanceof DataDirBusyError || error instanceof PortInUseError) exitWith(error, cmd.json);
    throw error;
  }
  if (signalled) shutdown(signalled);
}

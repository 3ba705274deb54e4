import { DataDirBusyError } from '../db/data-dir-lock.ts';
import { flagName, SETTING_NAMES } from '../config.ts';
import { PortInUseError, startServer, type RunningServer } from '../server.ts';
import { exitWith, parseCommand } from './args.ts';

const HELP = `
Usage: revintel [serve] [options]

Serves the HTTP API and runs the background worker. Without DATABASE_URL it keeps its data in an
embedded database in DATA_DIR. Every option is also an environment variable (--port <-> PORT).

Options:
${SETTING_NAMES.map((name) => `  --${flagName(name)}`.padEnd(30) + name).join('\n')}
  -h, --help                  this help
`;

export async function serveCommand(argv: string[], workerUrl: URL) {
  const cmd = parseCommand(argv, {}, HELP);
  const config = cmd.config();
  // Handlers first: a signal that arrives while starting up is honoured once the server is up (the
  // start-up itself is bounded: the worker must register within 30 s). A second signal exits at once.
  let server: RunningServer | null = null;
  let signalled: string | null = null;
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level: 'warn', msg: 'second signal: exiting now', signal }) + '\n');
      process.exit(1);
    }
    signalled ??= signal;
    if (!server) return;
    stopping = true;
    process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level: 'info', msg: 'signal received', signal }) + '\n');
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    server = await startServer(config, { workerUrl });
  } catch (error) {
    if (error instanceof DataDirBusyError || error instanceof PortInUseError) exitWith(error, cmd.json);
    throw error;
  }
  if (signalled) shutdown(signalled);
}

import { DataDirBusyError } from '../db/data-dir-lock.ts';
import { flagName, SETTING_NAMES } from '../config.ts';
import { PortInUseError, startServer } from '../server.ts';
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
  let server;
  try {
    server = await startServer(config, { workerUrl });
  } catch (error) {
    if (error instanceof DataDirBusyError || error instanceof PortInUseError) exitWith(error, cmd.json);
    throw error;
  }
  const shutdown = (signal: string) => {
    process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level: 'info', msg: 'signal received', signal }) + '\n');
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

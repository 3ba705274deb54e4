#!/usr/bin/env bun
// The one entry of the revintel binary: parses the sub-command and runs it.
import { pathToFileURL } from 'node:url';
import { exitWith } from './cli/args.ts';

// The worker is a second entrypoint of `bun build --compile`, beside the entry in the binary's
// embedded file system. There `Bun.main` says where that is: compiled to bytecode, `import.meta.url`
// is the path the binary was built from.
const WORKER_URL = new URL('./jobs/worker.ts', Bun.isStandaloneExecutable ? pathToFileURL(Bun.main) : import.meta.url);

const HELP = `
revintel — revenue intelligence: ARR data, ticket intelligence, churn predictions.

Usage: revintel <command> [options]

Commands:
  serve        serve the API and run the background worker (the default)
  migrate      apply database migrations
  orgs         create, list and update organisations
  keys         create, list and revoke API keys
  users        create, list and disable console users; print a one-time sign-in link
  connectors   create, list, update support-platform connectors and rotate their webhook secrets
  billing      add and list billing connectors (Stripe, Chargebee); backfill one's customers, contracts, invoices
  events       list, show and replay inbound ticket events (the processing queue)
  jobs         list, show and retry background jobs (the job queue)
  predictions  list and show churn predictions, queue a recompute or a retrain
  tickets      queue the re-analysis of stored tickets by this build's intelligence
  intelligence measure churn signals and sentiment on a labelled file of messages
  endpoints    add, list and remove the organisation's receivers of outbound events
  outbox       list outbound event deliveries and retry dead ones
  chat         add, list and remove chat installations (Slack workspaces, Google Chat spaces, WhatsApp numbers)
  backtest     how the churn model would have done on the organisation's own history
  arr          the ARR history by month (movements, GRR, NRR) or by cohort
  fx           the reporting currency and monthly exchange rates
  forecast     today's book's ARR ahead with exact bands; "forecast backtest" proves them
  demo         load a demo organisation with realistic ARR data, and print its API key
  import       import customers, contracts or invoices from CSV, JSON or NDJSON
  backup       write a consistent snapshot of the embedded database to a file, while serve runs
  restore      check a backup file and put it in DATA_DIR
  export       copy the embedded database into an empty PostgreSQL and verify it
  version      print the version

Run "revintel <command> --help" for a command's options. Every command takes --json.
`;

async function serve(argv: string[]) {
  return (await import('./cli/serve.ts')).serveCommand(argv, WORKER_URL);
}

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
      return serve([]);
    case 'serve':
      return serve(rest);
    case 'migrate':
      return (await import('./cli/migrate.ts')).migrateCommand(rest);
    case 'orgs':
      return (await import('./cli/orgs.ts')).orgsCommand(rest);
    case 'keys':
      return (await import('./cli/keys.ts')).keysCommand(rest);
    case 'users':
      return (await import('./cli/users.ts')).usersCommand(rest);
    case 'connectors':
      return (await import('./cli/connectors.ts')).connectorsCommand(rest);
    case 'billing':
      return (await import('./cli/billing.ts')).billingCommand(rest);
    case 'events':
      return (await import('./cli/events.ts')).eventsCommand(rest);
    case 'predictions':
      return (await import('./cli/predictions.ts')).predictionsCommand(rest);
    case 'tickets':
      return (await import('./cli/tickets.ts')).ticketsCommand(rest);
    case 'intelligence':
      return (await import('./cli/intelligence.ts')).intelligenceCommand(rest);
    case 'endpoints':
      return (await import('./cli/endpoints.ts')).endpointsCommand(rest);
    case 'outbox':
      return (await import('./cli/outbox.ts')).outboxCommand(rest);
    case 'chat':
      return (await import('./cli/chat.ts')).chatCommand(rest);
    case 'backtest':
      return (await import('./cli/backtest.ts')).backtestCommand(rest);
    case 'arr':
      return (await import('./cli/arr.ts')).arrCommand(rest);
    case 'fx':
      return (await import('./cli/fx.ts')).fxCommand(rest);
    case 'forecast':
      return (await import('./cli/forecast.ts')).forecastCommand(rest);
    case 'jobs':
      return (await import('./cli/jobs.ts')).jobsCommand(rest);
    case 'demo':
      return (await import('./cli/demo.ts')).demoCommand(rest);
    case 'import':
      return (await import('./cli/import.ts')).importCommand(rest);
    case 'backup':
      return (await import('./cli/backup.ts')).backupCommand(rest);
    case 'restore':
      return (await import('./cli/backup.ts')).restoreCommand(rest);
    case 'export':
      return (await import('./cli/export.ts')).exportCommand(rest);
    case 'version':
    case '--version':
      return (await import('./cli/version.ts')).versionCommand(rest);
    case 'help':
    case '--help':
    case '-h':
      console.log(HELP.trim());
      return;
    default:
      if (command.startsWith('--')) return serve(argv);
      console.error(`revintel: unknown command "${command}"\n${HELP}`);
      process.exit(2);
  }
}

const argv = process.argv.slice(2);
main(argv).catch((error) => exitWith(error, argv.includes('--json')));

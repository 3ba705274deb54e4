// revintel events list|show|replay: the ticket event queue as the operator sees it — what came in,
// what failed and why, and dead letters sent back to the queue once the cause is fixed.
import { EVENT_STATUSES } from '../db/schema/index.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, cliActor, parseCommand, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: { ...{ type: 'string', value: 'ORG', description: 'an organisation id or its exact name' }, default: 'every organisation' },
  connector: { type: 'string', value: 'CONNECTOR', description: 'only the events of this connector (its id)' },
  status: { type: 'string', value: 'STATUS', description: `only events in this status: ${EVENT_STATUSES.join(', ')}` },
  limit: { type: 'string', value: 'N', description: 'how many to list, newest first (1 to 10000)', default: '50' },
  'all-dead': { type: 'boolean', description: 'replay: every dead event (of --org)' },
};

const HELP = helpText({
  usage: 'revintel events <list|show|replay> [options]',
  about: `  list [--org ORG] [--connector CONNECTOR] [--status STATUS] [--limit N]
  show EVENT_ID                       the event with its body, headers, attempts and last error
  replay EVENT_ID...                  dead (or waiting) events go back to the queue, due now
  replay --all-dead [--org ORG]       every dead event (of ORG)

An event that yields no ticket, or fails 8 times, is dead: it keeps its last error until replayed.`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

export async function eventsCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...positionals] = cmd.positionals;
  const { values } = cmd;
  const org = typeof values.org === 'string' ? values.org : undefined;
  switch (sub) {
    case 'list': {
      const status = typeof values.status === 'string' ? values.status : undefined;
      if (status && !(EVENT_STATUSES as readonly string[]).includes(status))
        throw new UsageError(`--status must be one of ${EVENT_STATUSES.join(', ')}`);
      const limit = values.limit === undefined ? 50 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be 1 to 10000');
      const connector = typeof values.connector === 'string' ? values.connector : undefined;
      const events = await withAdminSession(cmd.config(), 'events list', (s) =>
        s.runner.run('events.list', { org, connector, status, limit }),
      );
      return cmd.print(events, (rows) =>
        table(
          rows.map((e) => ({ ...e, last_error: e.last_error ? e.last_error.slice(0, 60) : null })),
          ['id', 'org_id', 'connector_name', 'source', 'status', 'attempts', 'received_at', 'processed_at', 'last_error'],
        ),
      );
    }
    case 'show': {
      const id = positionals[0];
      if (!id) throw new UsageError(`events show needs EVENT_ID\n${HELP}`);
      const event = await withAdminSession(cmd.config(), 'events show', (s) => s.runner.run('events.show', { id }));
      return cmd.print(event, (e) =>
        [
          `${e.id}  ${e.status}  (${e.source} via ${e.connector_name}, ${e.connector_id})`,
          `org ${e.org_id}; received ${e.received_at}; attempts ${e.attempts}; ${e.processed_at ? `processed ${e.processed_at}` : `next attempt ${e.run_after}`}`,
          ...(e.last_error ? [`last error: ${e.last_error}`] : []),
          ...(e.ticket_ids?.length ? [`tickets: ${e.ticket_ids.join(', ')}`] : []),
          `headers: ${JSON.stringify(e.headers)}`,
          '',
          e.body,
        ].join('\n'),
      );
    }
    case 'replay': {
      if (positionals.length === 0 && !values['all-dead']) throw new UsageError(`events replay needs EVENT_ID... or --all-dead\n${HELP}`);
      if (positionals.length > 0 && values['all-dead']) throw new UsageError('give EVENT_IDs or --all-dead, not both');
      const result = await withAdminSession(cmd.config(), 'events replay', (s) =>
        s.runner.run(
          'events.replay',
          positionals.length ? { ids: positionals, actor: cliActor() } : { allDead: true, org, actor: cliActor() },
        ),
      );
      return cmd.print(result, (r) =>
        [
          `replayed ${r.replayed.length} event(s)${r.replayed.length ? `: ${r.replayed.join(', ')}` : ''}`,
          ...r.refused.map((x) => `not replayed: ${x.id} (${x.status})`),
        ].join('\n'),
      );
    }
    default:
      throw new UsageError(sub ? `unknown events command "${sub}"\n${HELP}` : HELP);
  }
}

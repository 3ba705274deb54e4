// revintel outbox list|retry: outbound event deliveries as the operator sees them (docs/agent-actions.md
// "Outbound events") — pending, delivered or dead with their last answer — and dead ones
// sent again with fresh attempts once the receiver is fixed.
import { DELIVERY_STATUSES, type DeliveryStatus } from '../db/schema/index.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, cliActor, parseCommand, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: { ...{ type: 'string', value: 'ORG', description: 'an organisation id or its exact name' }, default: 'every organisation' },
  status: { type: 'string', value: 'STATUS', description: `list: only deliveries in this status: ${DELIVERY_STATUSES.join(', ')}` },
  limit: { type: 'string', value: 'N', description: 'list: how many, newest first (1 to 200)', default: '50' },
  'all-dead': { type: 'boolean', description: 'retry: every dead delivery (of --org)' },
};

const HELP = helpText({
  usage: 'revintel outbox <list|retry> [options]',
  about: `  list [--org ORG] [--status STATUS] [--limit N]
  retry DELIVERY_ID...                 dead deliveries are sent again with fresh attempts, now
  retry --all-dead [--org ORG]         every dead delivery (of ORG)

A delivery is dead after ${8} attempts, or at once when the receiver answers a 4xx other than 408 and
429 (or a redirect), or its address is not public while ALLOW_PRIVATE_ENDPOINTS is off. An attempt's
error is a category (refused: address not allowed, name lookup failed, connect failed, TLS failed,
timeout, http NNN); the network's own error is in the server's log at LOG_LEVEL=debug.`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

export async function outboxCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...positionals] = cmd.positionals;
  const { values } = cmd;
  const org = typeof values.org === 'string' ? values.org : undefined;
  switch (sub) {
    case 'list': {
      const status = typeof values.status === 'string' ? values.status : undefined;
      if (status && !(DELIVERY_STATUSES as readonly string[]).includes(status))
        throw new UsageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`);
      const limit = values.limit === undefined ? 50 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new UsageError('--limit must be 1 to 200');
      const rows = await withAdminSession(cmd.config(), 'outbox list', (s) =>
        s.runner.run('outbox.list', { org, status: status as DeliveryStatus | undefined, limit }),
      );
      return cmd.print(rows, (list) =>
        table(
          list.map((d) => ({ ...d, attempts: `${d.attempts}/8`, last_error: d.last_error ? d.last_error.slice(0, 60) : null })),
          ['id', 'event_type', 'url', 'status', 'attempts', 'last_status', 'next_attempt_at', 'last_error'],
        ),
      );
    }
    case 'retry': {
      if (positionals.length === 0 && !values['all-dead']) throw new UsageError(`outbox retry needs DELIVERY_ID… or --all-dead\n${HELP}`);
      const result = await withAdminSession(cmd.config(), 'outbox retry', (s) =>
        s.runner.run('outbox.retry', { ids: positionals.length ? positionals : undefined, org, actor: cliActor() }),
      );
      return cmd.print(result, (r) => (r.retried.length ? `sent again: ${r.retried.join(', ')}` : 'no dead delivery matched'));
    }
    default:
      throw new UsageError(sub ? `unknown outbox command "${sub}"\n${HELP}` : HELP);
  }
}

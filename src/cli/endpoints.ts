// revintel endpoints add|list|remove: the organisation's own receivers of outbound events (docs/agent-actions.md
// "Outbound events"). The signing secret is made and sealed here, with the
// SECRET_KEY this command is configured with, and printed once.
import { OUTBOUND_EVENT_TYPES } from '../db/schema/index.ts';
import { newId } from '../lib/ids.ts';
import { sealSecret } from '../lib/secret-box.ts';
import { ensureSecretKey } from '../lib/secret-key.ts';
import { endpointUrlProblem, newEndpointSecret, RefusedDestination, resolveDestination } from '../modules/agent-actions/outbox.ts';
import { messageOf } from '../lib/errors.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, cliActor, parseCommand, requireString, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: { type: 'string', value: 'ORG', description: 'an organisation id or its exact name' },
  url: { type: 'string', value: 'URL', description: 'add: where deliveries are POSTed (https://…)' },
  events: {
    type: 'string',
    value: 'TYPE,TYPE…',
    description: `add: the event types it receives, of ${OUTBOUND_EVENT_TYPES.join(', ')}`,
    default: 'all',
  },
};

const HELP = helpText({
  usage: 'revintel endpoints <add|list|remove> [options]',
  about: `  add --org ORG --url URL [--events TYPE,TYPE…]   register a receiver; prints its signing secret once
  list [--org ORG]
  remove ENDPOINT_ID

Deliveries are signed the Standard Webhooks way (webhook-id, webhook-timestamp, webhook-signature:
v1,<base64 HMAC-SHA256 of "id.timestamp.body"> keyed by the secret's base64 part after whsec_).
A URL whose host is, or resolves to, an address that is not the public internet (loopback,
private, link-local, reserved; IPv6 forms of those) or is localhost is refused, here and on every
delivery, unless ALLOW_PRIVATE_ENDPOINTS=true.`,
  options: OPTIONS,
  settings: [...DATABASE_SETTINGS, 'SECRET_KEY'],
});

export async function endpointsCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...positionals] = cmd.positionals;
  const { values } = cmd;
  switch (sub) {
    case 'add': {
      const config = cmd.config();
      const url = requireString(values, 'url', HELP);
      const problem = endpointUrlProblem(url);
      if (problem) throw new UsageError(problem);
      // A host that is or resolves to a non-public address is refused now; a name that does not
      // resolve yet is accepted (every delivery resolves and checks it again).
      try {
        await resolveDestination(new URL(url), config.allowPrivateEndpoints);
      } catch (error) {
        if (error instanceof RefusedDestination)
          throw new UsageError(`--url: ${messageOf(error)}; set ALLOW_PRIVATE_ENDPOINTS=true for on-premise receivers`);
      }
      const events =
        typeof values.events === 'string'
          ? values.events
              .split(',')
              .map((e) => e.trim())
              .filter(Boolean)
          : null;
      const key = ensureSecretKey(config.secretKey, config.databaseUrl ? null : config.dataDir);
      if (!key) throw new UsageError('SECRET_KEY must be set to store an endpoint secret (the servers must have the same one)');
      const id = newId('whe');
      const secret = newEndpointSecret();
      const endpoint = await withAdminSession(config, 'endpoints add', (s) =>
        s.runner.run('endpoints.add', {
          id,
          org: requireString(values, 'org', HELP),
          url,
          events,
          secretSealed: sealSecret(secret, key, id),
          actor: cliActor(),
        }),
      );
      return cmd.print({ ...endpoint, secret }, (e) =>
        [
          `added endpoint ${e.id} for ${e.org_id}: ${e.url} (${e.events ? e.events.join(', ') : 'all events'})`,
          '',
          `  secret: ${secret}`,
          '',
          'This is the only time the secret is shown: give it to the receiver now.',
        ].join('\n'),
      );
    }
    case 'list': {
      const org = typeof values.org === 'string' ? values.org : undefined;
      const list = await withAdminSession(cmd.config(), 'endpoints list', (s) => s.runner.run('endpoints.list', { org }));
      return cmd.print(list, (rows) =>
        table(
          rows.map((r) => ({ ...r, events: r.events ? r.events.join(',') : 'all' })),
          ['id', 'org_id', 'url', 'events', 'created_at'],
        ),
      );
    }
    case 'remove': {
      const id = positionals[0];
      if (!id) throw new UsageError(`endpoints remove needs ENDPOINT_ID\n${HELP}`);
      const removed = await withAdminSession(cmd.config(), 'endpoints remove', (s) =>
        s.runner.run('endpoints.remove', { id, actor: cliActor() }),
      );
      return cmd.print(removed, () => `removed endpoint ${id}: it receives nothing more`);
    }
    default:
      throw new UsageError(sub ? `unknown endpoints command "${sub}"\n${HELP}` : HELP);
  }
}

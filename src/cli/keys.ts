import { presentKey } from '../modules/keys/present.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, cliActor, parseCommand, requireString, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: { type: 'string', value: 'ORG', description: 'an organisation id or its exact name' },
  name: { type: 'string', value: 'NAME', description: "the key's name, to tell keys apart" },
  'expires-at': { type: 'string', value: 'ISO-8601', description: 'when the key stops working', default: 'never' },
};

const HELP = helpText({
  usage: 'revintel keys <create|list|revoke> [options]',
  about: `  create --org ORG --name NAME [--expires-at ISO-8601]   prints the key once: store it now
  list [--org ORG]
  revoke KEY_ID

A revoked key stops working within 2 seconds on every instance (at once on the instance that
revoked it).`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

export async function keysCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...positionals] = cmd.positionals;
  const { values } = cmd;
  switch (sub) {
    case 'create': {
      const org = requireString(values, 'org', HELP);
      const name = requireString(values, 'name', HELP);
      let expiresAt: string | null = null;
      if (typeof values['expires-at'] === 'string') {
        const parsed = new Date(values['expires-at']);
        if (Number.isNaN(parsed.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(values['expires-at'])) {
          throw new UsageError(`--expires-at must be an ISO 8601 date or time, got "${values['expires-at']}"`);
        }
        expiresAt = parsed.toISOString();
      }
      const { key, plaintext } = await withAdminSession(cmd.config(), 'keys create', (s) =>
        s.runner.run('keys.create', { org, name, expiresAt, actor: cliActor() }),
      );
      return cmd.print({ ...presentKey(key), org_id: key.orgId, secret: plaintext }, (k) =>
        [
          `created key ${k.id} (${k.name}) for ${k.org_id}`,
          '',
          `  ${k.secret}`,
          '',
          'This is the only time the key is shown: store it now.',
        ].join('\n'),
      );
    }
    case 'list': {
      const filter = typeof values.org === 'string' ? { org: values.org } : {};
      const keys = await withAdminSession(cmd.config(), 'keys list', (s) => s.runner.run('keys.list', filter));
      return cmd.print(
        keys.map((k) => ({ ...presentKey(k), org_id: k.orgId })),
        (list) => table(list, ['id', 'org_id', 'name', 'prefix', 'status', 'created_at', 'last_used_at', 'expires_at']),
      );
    }
    case 'revoke': {
      const keyId = positionals[0];
      if (!keyId) throw new UsageError(`keys revoke needs KEY_ID\n${HELP}`);
      const { key, alreadyRevoked } = await withAdminSession(cmd.config(), 'keys revoke', (s) =>
        s.runner.run('keys.revoke', { keyId, actor: cliActor() }),
      );
      return cmd.print({ ...presentKey(key), org_id: key.orgId, already_revoked: alreadyRevoked }, (k) =>
        alreadyRevoked ? `key ${k.id} was already revoked at ${k.revoked_at}` : `revoked key ${k.id} (${k.name})`,
      );
    }
    default:
      throw new UsageError(sub ? `unknown keys command "${sub}"\n${HELP}` : HELP);
  }
}

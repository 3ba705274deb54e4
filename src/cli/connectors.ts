// revintel connectors create|list|update|rotate-secret. Secrets are sealed here, with the SECRET_KEY
// this command is configured with (on the embedded database the one in DATA_DIR), before anything
// is sent: a secret's plaintext never reaches the database nor the server's admin socket.
import { randomBase62, newConnectorId } from '../lib/ids.ts';
import { ensureSecretKey } from '../lib/secret-key.ts';
import { sealSecret } from '../lib/secret-box.ts';
import { hashToken } from '../modules/webhooks/signatures.ts';
import { DEFAULT_ROTATION_GRACE_SECONDS, presentConnector } from '../modules/tickets/connectors/service.ts';
import { PLATFORMS } from '../modules/tickets/platforms.ts';
import type { Config } from '../config.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, cliActor, parseCommand, requireString, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: { type: 'string', value: 'ORG', description: 'an organisation id or its exact name' },
  name: { type: 'string', value: 'NAME', description: "the connector's name" },
  platform: { type: 'string', value: 'PLATFORM', description: `one of ${PLATFORMS.join(', ')}` },
  secret: { type: 'string', value: 'S', description: "the platform's signing secret (at least 8 characters)" },
  'generate-secret': { type: 'boolean', description: 'generate a signing secret and print it once' },
  token: {
    type: 'string',
    value: 'T',
    description:
      'a static token, for platforms that can only add a header (Freshdesk, Gorgias, Zoho Desk: "Authorization: Bearer <token>")',
  },
  'no-token': { type: 'boolean', description: 'update: remove the token' },
  'no-secret': { type: 'boolean', description: 'update: remove the secret (the connector then takes unsigned events)' },
  grace: {
    type: 'string',
    value: 'SECONDS',
    description: 'rotate-secret: how long the previous secret stays valid',
    default: `${DEFAULT_ROTATION_GRACE_SECONDS}, one day`,
  },
};

const HELP = helpText({
  usage: 'revintel connectors <create|list|update|rotate-secret> [options]',
  about: `  create --org ORG --platform PLATFORM --name NAME [--secret S | --generate-secret] [--token T]
  list [--org ORG]
  update CONNECTOR [--org ORG] [--name N] [--platform P] [--token T | --no-token] [--no-secret]
  rotate-secret CONNECTOR [--org ORG] [--secret S | --generate-secret] [--grace SECONDS]

CONNECTOR is a connector id, or its exact name with --org. The webhook URL printed is PUBLIC_URL +
/api/webhooks/tickets?connectorId=…; point the platform at it. Every platform may sign with
x-hub-signature-256; docs/tickets.md ("Connecting a platform") gives each platform's own scheme.`,
  options: OPTIONS,
  settings: [...DATABASE_SETTINGS, 'PUBLIC_URL', 'SECRET_KEY'],
});

/** The key secrets are sealed with: SECRET_KEY, or the embedded database's own. */
function sealingKey(config: Config): string {
  const key = ensureSecretKey(config.secretKey, config.databaseUrl ? null : config.dataDir);
  if (!key) throw new UsageError('SECRET_KEY must be set to store a webhook secret (the servers must have the same one)');
  return key;
}

/** The secret to store: given, generated (and then printed once), or none. */
function chooseSecret(values: Record<string, unknown>): { secret: string | null; generated: boolean } {
  if (typeof values.secret === 'string' && values['generate-secret']) throw new UsageError('give --secret or --generate-secret, not both');
  if (typeof values.secret === 'string') {
    if (values.secret.length < 8) throw new UsageError('--secret must be at least 8 characters');
    return { secret: values.secret, generated: false };
  }
  if (values['generate-secret']) return { secret: `whsec_${randomBase62(40)}`, generated: true };
  return { secret: null, generated: false };
}

export async function connectorsCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...positionals] = cmd.positionals;
  const { values } = cmd;
  const org = typeof values.org === 'string' ? values.org : undefined;
  switch (sub) {
    case 'create': {
      const config = cmd.config();
      const { secret, generated } = chooseSecret(values);
      const token = typeof values.token === 'string' ? values.token : null;
      if (token !== null && token.length < 16) throw new UsageError('--token must be at least 16 characters');
      const id = newConnectorId();
      const connector = await withAdminSession(config, 'connectors create', (s) =>
        s.runner.run('connectors.create', {
          id,
          org: requireString(values, 'org', HELP),
          name: requireString(values, 'name', HELP),
          platform: requireString(values, 'platform', HELP),
          secretSealed: secret ? sealSecret(secret, sealingKey(config), id) : null,
          tokenHash: token ? hashToken(token) : null,
          actor: cliActor(),
        }),
      );
      const shown = { ...presentConnector(connector, config.publicUrl), ...(generated ? { secret } : {}) };
      return cmd.print(shown, (c) =>
        [
          `created connector ${c.id} (${c.name}, ${c.platform}) for ${c.org_id}`,
          '',
          `  webhook URL: ${c.webhook_url}${config.publicUrl ? '' : '   (set PUBLIC_URL to print the full address)'}`,
          `  signed: ${c.signed ? 'yes' : 'no'}   token: ${c.token ? 'yes' : 'no'}`,
          ...(generated ? ['', `  secret: ${secret}`, '', 'This is the only time the secret is shown: enter it in the platform now.'] : []),
        ].join('\n'),
      );
    }
    case 'list': {
      const config = cmd.config();
      const list = await withAdminSession(config, 'connectors list', (s) => s.runner.run('connectors.list', org ? { org } : {}));
      return cmd.print(
        list.map((c) => presentConnector(c, config.publicUrl)),
        (rows) => table(rows, ['id', 'org_id', 'name', 'platform', 'signed', 'token', 'previous_secret_valid_until', 'webhook_url']),
      );
    }
    case 'update': {
      const config = cmd.config();
      const connector = positionals[0];
      if (!connector) throw new UsageError(`connectors update needs CONNECTOR\n${HELP}`);
      if (typeof values.token === 'string' && values['no-token']) throw new UsageError('give --token or --no-token, not both');
      const tokenHash = typeof values.token === 'string' ? hashToken(values.token) : values['no-token'] ? null : undefined;
      const updated = await withAdminSession(config, 'connectors update', (s) =>
        s.runner.run('connectors.update', {
          connector,
          org,
          name: typeof values.name === 'string' ? values.name : undefined,
          platform: typeof values.platform === 'string' ? values.platform : undefined,
          tokenHash,
          removeSecret: Boolean(values['no-secret']),
          actor: cliActor(),
        }),
      );
      return cmd.print(
        presentConnector(updated, config.publicUrl),
        (c) => `updated connector ${c.id} (${c.name}, ${c.platform}); signed: ${c.signed ? 'yes' : 'no'}, token: ${c.token ? 'yes' : 'no'}`,
      );
    }
    case 'rotate-secret': {
      const config = cmd.config();
      const ref = positionals[0];
      if (!ref) throw new UsageError(`connectors rotate-secret needs CONNECTOR\n${HELP}`);
      const { secret: given, generated: asked } = chooseSecret(values);
      const secret = given ?? `whsec_${randomBase62(40)}`;
      const generated = asked || given === null;
      const grace = values.grace === undefined ? DEFAULT_ROTATION_GRACE_SECONDS : Number(values.grace);
      if (!Number.isInteger(grace) || grace < 0) throw new UsageError(`--grace must be a whole number of seconds, got "${values.grace}"`);
      const rotated = await withAdminSession(config, 'connectors rotate-secret', async (s) => {
        const current = await s.runner.run('connectors.find', { connector: ref, org });
        return s.runner.run('connectors.rotate-secret', {
          connector: current.id,
          secretSealed: sealSecret(secret, sealingKey(config), current.id),
          graceSeconds: grace,
          actor: cliActor(),
        });
      });
      const shown = { ...presentConnector(rotated, config.publicUrl), ...(generated ? { secret } : {}) };
      return cmd.print(shown, (c) =>
        [
          `rotated the secret of ${c.id} (${c.name})`,
          c.previous_secret_valid_until
            ? `the previous secret stays valid until ${c.previous_secret_valid_until}`
            : 'the previous secret no longer works',
          ...(generated ? ['', `  secret: ${secret}`, '', 'This is the only time the secret is shown: enter it in the platform now.'] : []),
        ].join('\n'),
      );
    }
    default:
      throw new UsageError(sub ? `unknown connectors command "${sub}"\n${HELP}` : HELP);
  }
}

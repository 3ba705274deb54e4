// revintel chat add|list|remove: the chat platforms' installations (docs/chat-platforms.md:
// Slack, Google Chat, WhatsApp). A Slack bot token or a WhatsApp access token is sealed here, with
// the SECRET_KEY this command is configured with; its plaintext never crosses the admin socket nor
// reaches the database. A Google Chat space needs no token of its own (the app's service account
// speaks everywhere).
import { newId } from '../lib/ids.ts';
import { SPACE_NAME } from '../modules/google-chat/installations.ts';
import { sealSecret } from '../lib/secret-box.ts';
import { ensureSecretKey } from '../lib/secret-key.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, cliActor, parseCommand, requireString, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: { type: 'string', value: 'ORG', description: 'an organisation id or its exact name' },
  'team-id': { type: 'string', value: 'T…', description: "add slack: the workspace's team id" },
  'bot-token': { type: 'string', value: 'xoxb-…', description: "add slack: the app's bot token" },
  space: { type: 'string', value: 'spaces/…', description: 'add google-chat: the space' },
  'phone-number-id': { type: 'string', value: 'N', description: "add whatsapp: Meta's phone number id" },
  'access-token': { type: 'string', value: 'T', description: "add whatsapp: a system user's access token" },
};

const HELP = helpText({
  usage: 'revintel chat <add|list|remove> [options]',
  about: `  add slack --org ORG --team-id T… --bot-token xoxb-…   connect a Slack workspace to an organisation
  add google-chat --org ORG --space spaces/…            connect a Google Chat space to an organisation
  add whatsapp --org ORG --phone-number-id N --access-token T
                                                        connect a WhatsApp Business number
  list [--org ORG]
  remove INSTALLATION_ID

Tokens are sealed under SECRET_KEY (the servers must have the same one). A Google Chat space
takes no token: the app posts as its service account (GCHAT_SERVICE_ACCOUNT_FILE). A workspace,
space or number belongs to one organisation at a time.`,
  options: OPTIONS,
  settings: [...DATABASE_SETTINGS, 'SECRET_KEY'],
});

/** What `chat add <platform>` takes: the platform's id of the installation and its token. */
function installationOf(
  platform: string | undefined,
  values: Record<string, unknown>,
): { platform: 'slack' | 'whatsapp'; externalId: string; token: string; what: string } {
  if (platform === 'slack') {
    const teamId = requireString(values, 'team-id', HELP);
    if (!/^[TE][A-Z0-9]{2,30}$/.test(teamId)) throw new UsageError(`--team-id must be a Slack team id (T…), got "${teamId}"`);
    const token = requireString(values, 'bot-token', HELP);
    if (!/^xoxb-[A-Za-z0-9-]{4,250}$/.test(token)) throw new UsageError('--bot-token must be a Slack bot token (xoxb-…)');
    return { platform, externalId: teamId, token, what: 'workspace' };
  }
  if (platform === 'whatsapp') {
    const phoneNumberId = requireString(values, 'phone-number-id', HELP);
    if (!/^[0-9]{5,30}$/.test(phoneNumberId))
      throw new UsageError(`--phone-number-id must be Meta's phone number id (digits), got "${phoneNumberId}"`);
    const token = requireString(values, 'access-token', HELP);
    if (!/^[A-Za-z0-9_\-.|]{20,1024}$/.test(token))
      throw new UsageError('--access-token must be a Meta access token (20 to 1,024 characters, no spaces)');
    return { platform, externalId: phoneNumberId, token, what: 'phone number id' };
  }
  throw new UsageError(
    platform
      ? `chat add: unknown platform "${platform}" (slack, google-chat, whatsapp)`
      : `chat add needs a platform (slack, google-chat, whatsapp)\n${HELP}`,
  );
}

export async function chatCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...positionals] = cmd.positionals;
  const { values } = cmd;
  switch (sub) {
    case 'add': {
      const platform = positionals[0];
      if (platform === 'google-chat') {
        const space = requireString(values, 'space', HELP);
        if (!SPACE_NAME.test(space)) throw new UsageError(`--space must be a Google Chat space name (spaces/…), got "${space}"`);
        const added = await withAdminSession(cmd.config(), 'chat add', (s) =>
          s.runner.run('chat.add', {
            id: newId('chi'),
            org: requireString(values, 'org', HELP),
            platform: 'google_chat',
            externalId: space,
            credentialsSealed: null,
            actor: cliActor(),
          }),
        );
        return cmd.print(added, (row) => `added ${row.platform} installation ${row.id} for ${row.org_id}: space ${row.external_id}`);
      }
      const installation = installationOf(platform, values);
      const config = cmd.config();
      const key = ensureSecretKey(config.secretKey, config.databaseUrl ? null : config.dataDir);
      if (!key) throw new UsageError('SECRET_KEY must be set to store a token (the servers must have the same one)');
      const id = newId('chi');
      const added = await withAdminSession(config, 'chat add', (s) =>
        s.runner.run('chat.add', {
          id,
          org: requireString(values, 'org', HELP),
          platform: installation.platform,
          externalId: installation.externalId,
          credentialsSealed: sealSecret(installation.token, key, id),
          actor: cliActor(),
        }),
      );
      return cmd.print(
        added,
        (row) => `added ${row.platform} installation ${row.id} for ${row.org_id}: ${installation.what} ${row.external_id}`,
      );
    }
    case 'list': {
      const org = typeof values.org === 'string' ? values.org : undefined;
      const list = await withAdminSession(cmd.config(), 'chat list', (s) => s.runner.run('chat.list', { org }));
      return cmd.print(list, (rows) =>
        table(
          rows.map((r) => ({ ...r })),
          ['id', 'org_id', 'platform', 'external_id', 'created_at'],
        ),
      );
    }
    case 'remove': {
      const id = positionals[0];
      if (!id) throw new UsageError(`chat remove needs INSTALLATION_ID\n${HELP}`);
      const removed = await withAdminSession(cmd.config(), 'chat remove', (s) => s.runner.run('chat.remove', { id, actor: cliActor() }));
      return cmd.print(removed, () => `removed chat installation ${id}: its token is erased`);
    }
    default:
      throw new UsageError(sub ? `unknown chat command "${sub}"\n${HELP}` : HELP);
  }
}

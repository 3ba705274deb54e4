// revintel chat add|list|remove: the chat platforms' installations (README "Agent actions" →
// Slack, Google Chat). A Slack bot token is sealed here, with the SECRET_KEY this command is
// configured with; its plaintext never crosses the admin socket nor reaches the database. A Google
// Chat space needs no token of its own (the app's service account speaks everywhere).
import { newId } from '../lib/ids.ts';
import { SPACE_NAME } from '../modules/google-chat/installations.ts';
import { sealSecret } from '../lib/secret-box.ts';
import { ensureSecretKey } from '../lib/secret-key.ts';
import { DATABASE_OPTIONS_HELP, cliActor, parseCommand, requireString, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const HELP = `
Usage: revintel chat <add|list|remove> [options]

  add slack --org ORG --team-id T… --bot-token xoxb-…   connect a Slack workspace to an organisation
  add google-chat --org ORG --space spaces/…            connect a Google Chat space to an organisation
  list [--org ORG]
  remove INSTALLATION_ID

The bot token is sealed under SECRET_KEY (the servers must have the same one). A Google Chat space
takes no token: the app posts as its service account (GCHAT_SERVICE_ACCOUNT_FILE). A workspace or
space belongs to one organisation at a time. WhatsApp is not supported yet.

${DATABASE_OPTIONS_HELP}
`;

const OPTIONS = { org: { type: 'string' }, 'team-id': { type: 'string' }, 'bot-token': { type: 'string' }, space: { type: 'string' } } as const;

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
          s.runner.run('chat.add', { id: newId('chi'), org: requireString(values, 'org', HELP), platform: 'google_chat', externalId: space, credentialsSealed: null, actor: cliActor() }),
        );
        return cmd.print(added, (row) => `added ${row.platform} installation ${row.id} for ${row.org_id}: space ${row.external_id}`);
      }
      if (platform !== 'slack') throw new UsageError(platform ? `chat add: "${platform}" is not supported yet (slack, google-chat)` : `chat add needs a platform (slack, google-chat)\n${HELP}`);
      const config = cmd.config();
      const teamId = requireString(values, 'team-id', HELP);
      if (!/^[TE][A-Z0-9]{2,30}$/.test(teamId)) throw new UsageError(`--team-id must be a Slack team id (T…), got "${teamId}"`);
      const token = requireString(values, 'bot-token', HELP);
      if (!/^xoxb-[A-Za-z0-9-]{4,250}$/.test(token)) throw new UsageError('--bot-token must be a Slack bot token (xoxb-…)');
      const key = ensureSecretKey(config.secretKey, config.databaseUrl ? null : config.dataDir);
      if (!key) throw new UsageError('SECRET_KEY must be set to store a bot token (the servers must have the same one)');
      const id = newId('chi');
      const added = await withAdminSession(config, 'chat add', (s) =>
        s.runner.run('chat.add', { id, org: requireString(values, 'org', HELP), platform: 'slack', externalId: teamId, credentialsSealed: sealSecret(token, key, id), actor: cliActor() }),
      );
      return cmd.print(added, (row) => `added ${row.platform} installation ${row.id} for ${row.org_id}: workspace ${row.external_id}`);
    }
    case 'list': {
      const org = typeof values.org === 'string' ? values.org : undefined;
      const list = await withAdminSession(cmd.config(), 'chat list', (s) => s.runner.run('chat.list', { org }));
      return cmd.print(list, (rows) => table(rows.map((r) => ({ ...r })), ['id', 'org_id', 'platform', 'external_id', 'created_at']));
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

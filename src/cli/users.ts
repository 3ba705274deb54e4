import { signInLinkUrl } from '../modules/users/service.ts';
import type { Config } from '../config.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, cliActor, parseCommand, requireString, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: { type: 'string', value: 'ORG', description: 'an organisation id or its exact name' },
  email: { type: 'string', value: 'EMAIL', description: "the person's e-mail (how they sign in)" },
  name: { type: 'string', value: 'NAME', description: "the person's name", default: 'none' },
  role: { type: 'string', value: 'ROLE', description: 'admin or member' },
};

const HELP = helpText({
  usage: 'revintel users <create|list|disable|link> [options]',
  about: `  create --org ORG --email EMAIL [--name NAME] --role admin|member
                         creates a console user and prints a one-time sign-in link (valid 24 h)
  list [--org ORG]
  disable USER_ID        the user can no longer sign in; their sessions end at once
  link USER_ID           a fresh one-time sign-in link (a forgotten password, a lost invitation)

The link opens the console at PUBLIC_URL (else http://localhost:PORT): /sign-in/accept#token=… —
the person sets a password there.`,
  options: OPTIONS,
  settings: [...DATABASE_SETTINGS, 'PUBLIC_URL'],
});

/** Where sign-in links point: PUBLIC_URL, else this machine's port. */
export const consoleBase = (config: Pick<Config, 'publicUrl' | 'port'>) => config.publicUrl ?? `http://localhost:${config.port}`;

const linkLines = (r: { sign_in_link: string; link_expires_at: string }) => [
  '',
  `  ${r.sign_in_link}`,
  '',
  `Send this one-time sign-in link to its owner: it sets their password, and expires at ${r.link_expires_at}.`,
];

export async function usersCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...positionals] = cmd.positionals;
  const { values } = cmd;
  switch (sub) {
    case 'create': {
      const input = {
        org: requireString(values, 'org', HELP),
        email: requireString(values, 'email', HELP),
        role: requireString(values, 'role', HELP),
        name: typeof values.name === 'string' ? values.name : null,
        actor: cliActor(),
      };
      const created = await withAdminSession(cmd.config(), 'users create', (s) => s.runner.run('users.create', input));
      const link = signInLinkUrl(consoleBase(cmd.config()), created.token);
      return cmd.print({ ...created.user, sign_in_link: link, link_expires_at: created.link_expires_at }, (r) =>
        [`created ${r.role} ${r.id} (${r.email}) in ${r.org_id}`, ...linkLines(r)].join('\n'),
      );
    }
    case 'list': {
      const filter = typeof values.org === 'string' ? { org: values.org } : {};
      const list = await withAdminSession(cmd.config(), 'users list', (s) => s.runner.run('users.list', filter));
      return cmd.print(list, (rows) => table(rows, ['id', 'org_id', 'email', 'name', 'role', 'status', 'created_at']));
    }
    case 'disable': {
      const userId = positionals[0];
      if (!userId) throw new UsageError(`users disable needs USER_ID\n${HELP}`);
      const user = await withAdminSession(cmd.config(), 'users disable', (s) =>
        s.runner.run('users.disable', { userId, actor: cliActor() }),
      );
      return cmd.print(user, (u) => `disabled ${u.id} (${u.email}): their sessions have ended`);
    }
    case 'link': {
      const userId = positionals[0];
      if (!userId) throw new UsageError(`users link needs USER_ID\n${HELP}`);
      const issued = await withAdminSession(cmd.config(), 'users link', (s) => s.runner.run('users.link', { userId, actor: cliActor() }));
      const link = signInLinkUrl(consoleBase(cmd.config()), issued.token);
      return cmd.print({ ...issued.user, sign_in_link: link, link_expires_at: issued.link_expires_at }, (r) =>
        [`a new sign-in link for ${r.id} (${r.email})`, ...linkLines(r)].join('\n'),
      );
    }
    default:
      throw new UsageError(sub ? `unknown users command "${sub}"\n${HELP}` : HELP);
  }
}

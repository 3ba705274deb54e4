import { PLANS, type Organisation, type Plan } from '../db/schema/index.ts';
import { limitsOf } from '../modules/orgs/service.ts';
import {
  DATABASE_SETTINGS,
  helpText,
  type OptionSpecs,
  cliActor,
  optionalLimit,
  parseCommand,
  requireString,
  table,
  UsageError,
} from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  name: { type: 'string', value: 'NAME', description: "the organisation's name (unique)" },
  plan: { type: 'string', value: 'PLAN', description: `${PLANS.join(' or ')}` },
  'limit-per-minute': { type: 'string', value: 'N|plan', description: "requests per minute over the plan's", default: "the plan's" },
  'limit-per-day': { type: 'string', value: 'N|plan', description: "requests per day over the plan's", default: "the plan's" },
};

const HELP = helpText({
  usage: 'revintel orgs <create|list|update> [options]',
  about: `  create --name NAME --plan PLAN [--limit-per-minute N] [--limit-per-day N]
  list
  update ORG [--name NAME] [--plan PLAN] [--limit-per-minute N|plan] [--limit-per-day N|plan]

ORG is an organisation id or its exact name. The plan sets the rate limits (growth_agents 60/min
and 10,000/day, enterprise 300/min and 100,000/day) unless overridden; "plan" clears an override.`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

function parsePlan(raw: unknown): Plan {
  if (!PLANS.includes(raw as Plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}, got "${String(raw)}"`);
  return raw as Plan;
}

export function presentOrg(org: Organisation) {
  const limits = limitsOf(org);
  return {
    id: org.id,
    name: org.name,
    plan: org.plan,
    limit_per_minute: limits.perMinute,
    limit_per_day: limits.perDay,
    overrides: { per_minute: org.rateLimitPerMinute, per_day: org.rateLimitPerDay },
    created_at: org.createdAt,
    updated_at: org.updatedAt,
  };
}

const describe = (org: ReturnType<typeof presentOrg>) =>
  `${org.id}  ${org.name}  plan=${org.plan}  limits=${org.limit_per_minute}/min ${org.limit_per_day}/day`;

export async function orgsCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...positionals] = cmd.positionals;
  const { values } = cmd;
  switch (sub) {
    case 'create': {
      const input = {
        name: requireString(values, 'name', HELP),
        plan: parsePlan(requireString(values, 'plan', HELP)),
        rateLimitPerMinute: optionalLimit(values, 'limit-per-minute') ?? null,
        rateLimitPerDay: optionalLimit(values, 'limit-per-day') ?? null,
        actor: cliActor(),
      };
      const org = await withAdminSession(cmd.config(), 'orgs create', (s) => s.runner.run('orgs.create', input));
      return cmd.print(presentOrg(org), (o) => `created organisation ${describe(o)}`);
    }
    case 'list': {
      const orgs = await withAdminSession(cmd.config(), 'orgs list', (s) => s.runner.run('orgs.list', {}));
      return cmd.print(orgs.map(presentOrg), (list) =>
        table(list, ['id', 'name', 'plan', 'limit_per_minute', 'limit_per_day', 'created_at']),
      );
    }
    case 'update': {
      const org = positionals[0];
      if (!org) throw new UsageError(`orgs update needs ORG (an id or exact name)\n${HELP}`);
      const input = {
        org,
        name: typeof values.name === 'string' ? values.name : undefined,
        plan: values.plan === undefined ? undefined : parsePlan(values.plan),
        rateLimitPerMinute: optionalLimit(values, 'limit-per-minute'),
        rateLimitPerDay: optionalLimit(values, 'limit-per-day'),
        actor: cliActor(),
      };
      const updated = await withAdminSession(cmd.config(), 'orgs update', (s) => s.runner.run('orgs.update', input));
      return cmd.print(presentOrg(updated), (o) => `updated organisation ${describe(o)}`);
    }
    default:
      throw new UsageError(sub ? `unknown orgs command "${sub}"\n${HELP}` : HELP);
  }
}

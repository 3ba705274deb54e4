// revintel jobs list|show|retry: the background job queue as the operator sees it — what is
// queued, running, done or dead and why, and dead jobs sent back to the queue once the cause is fixed.
import { JOB_STATES, type JobState } from '../db/schema/index.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, cliActor, parseCommand, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  state: { type: 'string', value: 'STATE', description: `only jobs in this state: ${JOB_STATES.join(', ')}` },
  kind: { type: 'string', value: 'KIND', description: 'only jobs of this kind (predictions.recompute, …)' },
  org: { ...{ type: 'string', value: 'ORG', description: 'an organisation id or its exact name' }, default: 'every organisation' },
  limit: { type: 'string', value: 'N', description: 'how many to list, newest first (1 to 1000)', default: '50' },
  'all-dead': { type: 'boolean', description: 'retry: every dead job (of --kind)' },
};

const HELP = helpText({
  usage: 'revintel jobs <list|show|retry> [options]',
  about: `  list [--state STATE] [--kind KIND] [--org ORG] [--limit N]
  show JOB_ID                         the job with its payload, attempts, last error and result
  retry JOB_ID...                     dead jobs go back to the queue with fresh attempts, due now
  retry --all-dead [--kind KIND]      every dead job (of KIND)

A job that fails as many times as its kind allows, or fails in a way no retry can fix, is dead: it
keeps its last error until retried. Finished jobs are kept 7 days (dead ones 30).`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

export async function jobsCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...positionals] = cmd.positionals;
  const { values } = cmd;
  const kind = typeof values.kind === 'string' ? values.kind : undefined;
  switch (sub) {
    case 'list': {
      const state = typeof values.state === 'string' ? values.state : undefined;
      if (state && !(JOB_STATES as readonly string[]).includes(state))
        throw new UsageError(`--state must be one of ${JOB_STATES.join(', ')}`);
      const limit = values.limit === undefined ? 50 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be 1 to 1000');
      const org = typeof values.org === 'string' ? values.org : undefined;
      const jobs = await withAdminSession(cmd.config(), 'jobs list', (s) =>
        s.runner.run('jobs.list', { state: state as JobState | undefined, kind, org, limit }),
      );
      return cmd.print(jobs, (rows) =>
        table(
          rows.map((j) => ({
            ...j,
            attempts: `${j.attempts}/${j.max_attempts}`,
            last_error: j.last_error ? j.last_error.slice(0, 60) : null,
          })),
          ['id', 'kind', 'org_id', 'state', 'attempts', 'run_at', 'finished_at', 'last_error'],
        ),
      );
    }
    case 'show': {
      const id = positionals[0];
      if (!id) throw new UsageError(`jobs show needs JOB_ID\n${HELP}`);
      const job = await withAdminSession(cmd.config(), 'jobs show', (s) => s.runner.run('jobs.show', { id }));
      return cmd.print(job, (j) =>
        [
          `${j.id}  ${j.kind}  ${j.state}${j.org_id ? `  (org ${j.org_id})` : ''}`,
          `created ${j.created_at}; attempts ${j.attempts} of ${j.max_attempts}; ${j.finished_at ? `finished ${j.finished_at}` : j.state === 'running' ? `held by ${j.lease_owner} until ${j.lease_until}` : `runs at ${j.run_at}`}`,
          ...(j.dedupe_key ? [`dedupe key: ${j.dedupe_key}`] : []),
          ...(j.last_error ? [`last error: ${j.last_error}`] : []),
          `payload: ${JSON.stringify(j.payload)}`,
          ...(j.result !== null && j.result !== undefined ? [`result: ${JSON.stringify(j.result)}`] : []),
        ].join('\n'),
      );
    }
    case 'retry': {
      if (positionals.length === 0 && !values['all-dead']) throw new UsageError(`jobs retry needs JOB_ID... or --all-dead\n${HELP}`);
      if (positionals.length > 0 && values['all-dead']) throw new UsageError('give JOB_IDs or --all-dead, not both');
      const result = await withAdminSession(cmd.config(), 'jobs retry', (s) =>
        s.runner.run(
          'jobs.retry',
          positionals.length ? { ids: positionals, actor: cliActor() } : { allDead: true, kind, actor: cliActor() },
        ),
      );
      return cmd.print(result, (r) =>
        [
          `retried ${r.retried.length} job(s)${r.retried.length ? `: ${r.retried.join(', ')}` : ''}`,
          ...r.skipped.map((id) => `not retried: ${id} (not dead, or its key is queued again)`),
        ].join('\n'),
      );
    }
    default:
      throw new UsageError(sub ? `unknown jobs command "${sub}"\n${HELP}` : HELP);
  }
}

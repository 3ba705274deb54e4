// revintel tickets reanalyze: after an upgrade that changed the ticket intelligence, read every
// stored ticket again with this build's rules (a job the worker runs; it rescores the customers
// whose signals changed).
import { INTELLIGENCE_VERSION } from '../modules/tickets/intelligence.ts';
import { DATABASE_SETTINGS, helpText, parseCommand, UsageError, type OptionSpecs } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: { type: 'string', value: 'ORG', description: 'the organisation (name or id)', default: 'the only one, when there is one' },
};

const HELP = helpText({
  usage: 'revintel tickets reanalyze [--org ORG]',
  about: `reanalyze   queue the re-analysis of the organisation's tickets not yet analysed by this build's
            intelligence (version ${INTELLIGENCE_VERSION}); the worker runs it and rescores the customers
            whose churn signals changed. Running it again finds nothing left to do.`,
  options: OPTIONS,
  settings: DATABASE_SETTINGS,
});

export async function ticketsCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub] = cmd.positionals;
  const org = typeof cmd.values.org === 'string' ? cmd.values.org : undefined;
  switch (sub) {
    case 'reanalyze': {
      const result = await withAdminSession(cmd.config(), 'tickets reanalyze', (s) => s.runner.run('tickets.reanalyze', { org }));
      return cmd.print(
        result,
        (r) =>
          `${r.queued_already ? 'a re-analysis was queued already' : 're-analysis queued'}: job ${r.job_id} (revintel jobs show ${r.job_id})`,
      );
    }
    default:
      throw new UsageError(sub ? `unknown tickets command "${sub}"\n${HELP}` : HELP);
  }
}

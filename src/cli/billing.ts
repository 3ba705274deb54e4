// revintel billing add|list|sync|status|replay (docs/billing.md). Secrets are sealed here, with the SECRET_KEY this
// command is configured with (on the embedded database the one in DATA_DIR), before anything is
// sent. `sync` runs the backfill in this process, a page per unit of work (on the embedded database
// while serve runs, through its admin socket), printing its progress; killed, it resumes from the
// last page stored when run again. The events it stores are then applied here too.
import { ensureSecretKey } from '../lib/secret-key.ts';
import { sealSecret } from '../lib/secret-box.ts';
import type { Config } from '../config.ts';
import { newBillingConnectorId, presentBillingConnector } from '../modules/billing/connectors.ts';
import type { BillingConnectorStatusView } from '../modules/billing/model.ts';
import { applyInParts } from '../modules/billing/apply.ts';
import { presentSync, runBackfill } from '../modules/billing/sync.ts';
import { syncSettingsOf } from '../modules/billing/sync-job.ts';
import { DATABASE_SETTINGS, helpText, type OptionSpecs, cliActor, parseCommand, requireString, table, UsageError } from './args.ts';
import { withAdminSession } from './admin-runner.ts';

const OPTIONS: OptionSpecs = {
  org: { type: 'string', value: 'ORG', description: 'an organisation id or its exact name' },
  name: { type: 'string', value: 'NAME', description: "the connector's name (default: the platform, and the site)" },
  'webhook-secret': { type: 'string', value: 'whsec_…', description: "Stripe: the webhook endpoint's signing secret" },
  'api-key': { type: 'string', value: 'KEY', description: 'the API key the backfill reads with (Stripe: a restricted rk_… key will do)' },
  'test-mode': { type: 'boolean', description: "take the platform's test-mode events (and ignore live ones)" },
  site: { type: 'string', value: 'SITE', description: 'Chargebee: the site (acme of acme.chargebee.com)' },
  'basic-auth': { type: 'string', value: 'USER:PASS', description: "Chargebee: the webhook's Basic credentials" },
};

const HELP = helpText({
  usage: 'revintel billing <add|list|sync|status|replay> [options]',
  about: `  add stripe --org ORG [--webhook-secret whsec_…] [--api-key rk_…] [--test-mode] [--name NAME]
  add chargebee --org ORG --site SITE --api-key KEY --basic-auth USER:PASS [--test-mode] [--name NAME]
  list [--org ORG]
  sync CONNECTOR [--org ORG]
  status CONNECTOR [--org ORG]
  replay CONNECTOR EVENT [--org ORG]

CONNECTOR is a billing connector id, or its exact name with --org. Point the platform's webhook at
the URL printed (PUBLIC_URL + /api/webhooks/billing?connectorId=…). sync reads customers,
subscriptions and invoices at most BILLING_MAX_RPS requests a second; run it again after a crash
to resume from the last page stored. status shows the events by state, the lag of the oldest
pending one, the last sync's outcome and the dead events; replay sets a dead EVENT (its bev_ id or
the platform's event id) pending again, with its object's other dead events.`,
  options: OPTIONS,
  settings: [...DATABASE_SETTINGS, 'PUBLIC_URL', 'SECRET_KEY', 'STRIPE_API_BASE', 'CHARGEBEE_API_BASE', 'BILLING_MAX_RPS'],
});

/** SECRET_KEY, or on the embedded database the one kept in DATA_DIR (made at the first need). */
export function sealingKey(config: Config): string {
  const key = ensureSecretKey(config.secretKey, config.databaseUrl ? null : config.dataDir);
  if (!key) throw new UsageError('SECRET_KEY must be set to store billing secrets (the servers must have the same one)');
  return key;
}

const optional = (values: Record<string, unknown>, name: string) =>
  typeof values[name] === 'string' ? (values[name] as string) : undefined;

export async function billingCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const [sub, ...positionals] = cmd.positionals;
  const { values } = cmd;
  const org = optional(values, 'org');
  switch (sub) {
    case 'add': {
      const platform = positionals[0];
      if (platform !== 'stripe' && platform !== 'chargebee') throw new UsageError(`billing add needs stripe or chargebee\n${HELP}`);
      const config = cmd.config();
      const site = optional(values, 'site');
      const basicAuth = optional(values, 'basic-auth');
      const apiKey = optional(values, 'api-key');
      const webhookSecret = optional(values, 'webhook-secret');
      if (platform === 'chargebee') {
        if (!site) throw new UsageError('--site is required for Chargebee');
        if (!basicAuth || !/^[^:]+:.{8,}$/.test(basicAuth))
          throw new UsageError('--basic-auth USER:PASS is required for Chargebee (a password of 8 characters or more)');
      } else if (site || basicAuth) throw new UsageError('--site and --basic-auth are for Chargebee');
      if (platform === 'chargebee' && webhookSecret) throw new UsageError('Chargebee does not sign webhooks: give --basic-auth');
      const id = newBillingConnectorId();
      const seal = (secret: string | undefined) => (secret ? sealSecret(secret, sealingKey(config), id) : null);
      const row = await withAdminSession(config, 'billing add', (s) =>
        s.runner.run('billing.add', {
          id,
          org: requireString(values, 'org', HELP),
          name: optional(values, 'name') ?? (platform === 'stripe' ? 'Stripe' : `Chargebee ${site}`),
          platform,
          mode: values['test-mode'] ? 'test' : 'live',
          site: site ?? null,
          webhookSecretSealed: seal(webhookSecret),
          apiKeySealed: seal(apiKey),
          basicAuthSealed: seal(basicAuth),
          actor: cliActor(),
        }),
      );
      return cmd.print(presentBillingConnector(row, config.publicUrl), (c) =>
        [
          `added billing connector ${c.id} (${c.name}, ${c.platform}, ${c.mode} mode) for ${c.org_id}`,
          '',
          `  webhook URL: ${c.webhook_url}${config.publicUrl ? '' : '   (set PUBLIC_URL to print the full address)'}`,
          `  webhook secret: ${c.webhook_secret ? 'yes' : 'no'}   API key: ${c.api_key ? 'yes' : 'no'}   Basic credentials: ${c.basic_auth ? 'yes' : 'no'}`,
          ...(c.api_key ? ['', `Run "revintel billing sync ${c.id}" to read what the account already holds.`] : []),
        ].join('\n'),
      );
    }
    case 'list': {
      const config = cmd.config();
      const rows = await withAdminSession(config, 'billing list', (s) => s.runner.run('billing.list', org ? { org } : {}));
      const shown = rows.map(({ row, status }) => ({ ...presentBillingConnector(row, config.publicUrl), events: status.events }));
      return cmd.print(shown, (list) =>
        table(
          list.map((c) => ({ ...c, events: `${c.events.applied} applied, ${c.events.pending} pending, ${c.events.dead} dead` })),
          ['id', 'org_id', 'name', 'platform', 'mode', 'events', 'webhook_url'],
        ),
      );
    }
    case 'sync': {
      const ref = positionals[0];
      if (!ref) throw new UsageError(`billing sync needs CONNECTOR\n${HELP}`);
      const config = cmd.config();
      const secretKey = sealingKey(config);
      const result = await withAdminSession(config, 'billing sync', async (s) => {
        const connector = await s.runner.run('billing.find', { connector: ref, org });
        const { sync: started, resumed } = await s.runner.run('billing.sync-start', { connectorId: connector.id });
        if (!cmd.json)
          console.error(
            `${resumed ? 'resuming' : 'starting'} sync ${started.id} of ${connector.name} at ${started.phase} (${started.pages} pages stored)`,
          );
        const sync = await runBackfill({
          syncId: started.id,
          settings: syncSettingsOf(config),
          secretKey,
          run: (unit, args) => s.runner.run(unit, args as never) as never,
          onPage: (at) => {
            if (!cmd.json) {
              const read = Object.values(at.report).reduce((sum, counts) => sum + (counts.read ?? 0), 0);
              console.error(
                `  page ${at.pages}: ${at.phase}, ${read} objects read, ${at.requests} requests, ${at.rateLimited} rate-limited`,
              );
            }
          },
        });
        const {
          parts: _parts,
          passes: _passes,
          deferredMs: _deferredMs,
          ...applied
        } = await applyInParts((part) =>
          s.runner.run('billing.apply', { connectorId: connector.id, stripeApiBase: config.stripeApiBase, ...part }),
        );
        return { sync: presentSync(sync), applied };
      });
      return cmd.print(result, ({ sync, applied }) =>
        [
          `sync ${sync.id}: ${sync.state}${sync.error ? ` (${sync.error})` : ''}`,
          `  ${sync.pages} pages, ${sync.requests} requests, ${sync.rate_limited} answered 429`,
          ...Object.entries(sync.report).map(
            ([kind, counts]) =>
              `  ${kind}: ${counts.read ?? 0} read, ${counts.new ?? 0} new or changed, ${counts.unchanged ?? 0} unchanged`,
          ),
          `  applied ${applied.applied} events; ${applied.failed} failed (kept pending), ${applied.dead} dead, ${applied.remaining} pending`,
        ].join('\n'),
      );
    }
    case 'status': {
      const ref = positionals[0];
      if (!ref) throw new UsageError(`billing status needs CONNECTOR\n${HELP}`);
      const config = cmd.config();
      const status = await withAdminSession(config, 'billing status', (s) =>
        s.runner.run('billing.status', { connector: ref, org, publicUrl: config.publicUrl }),
      );
      return cmd.print(status, describeStatus);
    }
    case 'replay': {
      const [ref, eventRef] = positionals;
      if (!ref || !eventRef) throw new UsageError(`billing replay needs CONNECTOR and EVENT\n${HELP}`);
      const result = await withAdminSession(cmd.config(), 'billing replay', (s) =>
        s.runner.run('billing.replay', { connector: ref, org, eventRef, actor: cliActor() }),
      );
      return cmd.print(
        result,
        (r) =>
          `replayed ${r.replayed.length} dead event(s) of ${r.object_type ?? 'object'} ${r.object_id ?? '-'}: pending again, applied by the server's worker (or the next "billing sync")`,
      );
    }
    default:
      throw new UsageError(sub ? `unknown billing command "${sub}"\n${HELP}` : HELP);
  }
}

const ago = (seconds: number) =>
  seconds < 120 ? `${seconds} s` : seconds < 7200 ? `${Math.round(seconds / 60)} min` : `${Math.round(seconds / 3600)} h`;

function describeStatus(status: BillingConnectorStatusView): string {
  const { connector: c, events, last_event: last, last_sync: sync, last_sync_outcome: outcome } = status;
  const lines = [
    `${c.name} (${c.id}, ${c.platform}, ${c.mode} mode)`,
    `  webhook URL: ${c.webhook_url}`,
    `  events: ${events.applied} applied, ${events.pending} pending, ${events.ignored} ignored, ${events.dead} dead`,
    `  last event: ${last ? `${last.type} (${last.source}, ${last.state}) received ${last.received_at}` : 'none yet'}`,
    `  lag: ${events.pending === 0 ? 'none (nothing pending)' : `${ago(status.lag_seconds)} (oldest pending received ${status.oldest_pending_at})`}`,
  ];
  if (!sync) lines.push('  last sync: none');
  else {
    lines.push(
      `  last sync ${sync.id}: ${sync.state}${sync.error ? ` (${sync.error})` : ''}, started ${sync.created_at}, ${sync.pages} pages`,
    );
    for (const [type, counts] of Object.entries(outcome?.objects ?? {}))
      lines.push(`    ${type}s: ${counts.read} read, ${counts.created} created, ${counts.updated} updated, ${counts.unchanged} unchanged`);
    for (const skip of outcome?.skipped ?? [])
      lines.push(`    skipped ${skip.count} ${skip.object_type ?? 'event'} event(s), ${skip.state}: ${skip.reason}`);
  }
  if (status.dead.length) {
    lines.push('  dead events (replay with "revintel billing replay CONNECTOR EVENT"):');
    for (const dead of status.dead)
      lines.push(`    ${dead.id}  ${dead.type}  ${dead.object_id ?? '-'}  ${dead.attempts} attempts: ${dead.detail ?? ''}`);
    if (status.dead_more) lines.push(`    … and ${status.dead_more} more`);
  }
  return lines.join('\n');
}

import { DATABASE_SETTINGS, helpText, type OptionSpecs, cliActor, parseCommand, UsageError } from './args.ts';
import { type AdminSession, withAdminSession } from './admin-runner.ts';
import { sealSecret } from '../lib/secret-box.ts';
import { newBillingConnectorId } from '../modules/billing/connectors.ts';
import { applyInParts } from '../modules/billing/apply.ts';
import { presentSync, runBackfill } from '../modules/billing/sync.ts';
import { serveStripeAccount, stripeDemoAccount } from '../modules/demo/stripe-account.ts';
import { sealingKey } from './billing.ts';
import { utcToday } from '../lib/today.ts';
import { recomputeInChunks } from '../modules/predictions/service.ts';
import { webhookUrl } from '../modules/tickets/connectors/service.ts';
import { signInLinkUrl } from '../modules/users/service.ts';
import { DEMO_TABLES, loadDemoInUnits } from '../modules/demo/service.ts';
import { EXAMPLE_TICKET } from '../modules/demo/tickets.ts';
import { consoleBase } from './users.ts';

const OPTIONS: OptionSpecs = {
  customers: { type: 'string', value: 'N', description: 'how many customers', default: '600' },
  seed: { type: 'string', value: 'S', description: 'the random seed: the same seed gives the same data on the same day', default: '42' },
  org: { type: 'string', value: 'NAME', description: "the demo organisation's name (refreshed when it exists)", default: 'Demo' },
  billing: {
    type: 'string',
    value: 'stripe',
    description:
      "load the organisation from a made-up Stripe account's history, through the billing sync (a backfill of a Stripe API served in this process), instead of generated rows",
  },
  truth: {
    type: 'string',
    value: 'FILE',
    description:
      "after loading, write the truth as CSV: customer_id,external_id,as_of,p_true — each active customer's true probability of churning within 90 days after as_of, for today and every 30 days back through the history",
  },
};

const HELP = helpText({
  usage: 'revintel demo [--customers N] [--seed S] [--org NAME] [--truth FILE | --billing stripe]',
  about: `Creates (or refreshes) a demo organisation with 36 months of realistic history, and prints an API
key for it and the webhook URL of its help desk connector. Each customer lives by a hidden health
that drifts month to month (with occasional shocks): customers across segments and currencies
arrive every month; monthly contracts stop on a billing day, annual terms renew as new contracts
(seats shrinking or growing with health) or end, after a notice weeks before or silently; add-ons
come and go; invoices are paid on time, late or never; support tickets come more often and angrier
as health falls, scored by the same intelligence as real ones. Churn depends on health, auto-renew
and tenure, so the organisation's churn is learnable; its true churn probabilities are kept apart
and never served.

With --billing stripe the organisation starts instead from a Stripe account with two years of
history (sign-ups, seats, annual and monthly plans, notices, cancellations, paid and open invoices)
served from this process, with no network: a billing connector "Demo Stripe" is made and its
backfill and apply run as "revintel billing sync" runs them, so its customers, contracts (with
revisions at Stripe's dates) and invoices arrive the way a real account's would; "revintel billing
status" then shows what the sync did.`,
  options: OPTIONS,
  settings: [...DATABASE_SETTINGS, 'PUBLIC_URL', 'SECRET_KEY'],
});

const integer = (raw: unknown, name: string, fallback: number, max: number) => {
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new UsageError(`--${name} must be an integer from 1 to ${max}, got "${String(raw)}"`);
  }
  return Number(raw);
};

const TRUTH_PAGE = 20_000;

/** The truth as CSV, a page at a time. */
async function writeTruth(
  file: string,
  page: (
    after: { customerId: string; asOf: string } | null,
  ) => Promise<{ customer_id: string; external_id: string; as_of: string; p_true: number }[]>,
) {
  const writer = Bun.file(file).writer();
  writer.write('customer_id,external_id,as_of,p_true\n');
  for (let after: { customerId: string; asOf: string } | null = null; ; ) {
    const rows = await page(after);
    for (const r of rows) writer.write(`${r.customer_id},${r.external_id},${r.as_of},${Number(r.p_true)}\n`);
    if (rows.length < TRUTH_PAGE) break;
    const last = rows[rows.length - 1]!;
    after = { customerId: last.customer_id, asOf: last.as_of };
  }
  await writer.end();
}

async function waitForJob(show: (id: string) => Promise<{ state: string; last_error: string | null } | null>, id: string) {
  for (;;) {
    const job = await show(id);
    if (!job || job.state === 'done') return;
    if (job.state === 'dead') throw new Error(`scoring the demo's predictions failed: ${job.last_error} (revintel jobs show ${id})`);
    await Bun.sleep(200);
  }
}

/** The demo's predictions, there when the command ends (by the model in force: the scorecard on a
 * first load): the running server's worker scores them (followed here), or, with no server, this
 * command does, a chunk per unit (the queued rescore then runs once more at the next start). A
 * model trained on its history follows in the server's fitting thread. */
async function scorePredictions(s: AdminSession, args: { orgId: string; jobId: string; today: string }, phase: (text: string) => void) {
  phase('scoring predictions…');
  if (s.via === 'server') await waitForJob((id) => s.runner.run('jobs.show', { id }), args.jobId);
  else {
    let scored = 0;
    await recomputeInChunks(
      async (chunk) => {
        const done = await s.runner.run('predictions.score-chunk', chunk);
        phase(`scoring predictions… ${((scored += done.scored)).toLocaleString('en-US')} customers`);
        return done;
      },
      { orgId: args.orgId, today: args.today, scope: 'all' },
    );
  }
}

const DEMO_STRIPE = 'Demo Stripe';
/** The key the in-process Stripe API takes: it is served on 127.0.0.1 for this command only. */
const DEMO_STRIPE_KEY = 'rk_test_revintel_demo_0000000000';

/**
 * `demo --billing stripe`: the demo organisation (its ARR data cleared), a Stripe connector made
 * afresh (an old one's stored events would make the backfill find nothing new), the account served
 * in this process and backfilled through the sync's own units, then its events applied.
 */
async function loadFromStripe(
  s: AdminSession,
  input: { orgName: string; customers: number; seed: number; today: string; actor: string },
  secretKey: string,
  phase: (text: string) => void,
) {
  const { org, connector: helpDesk } = await s.runner.run('demo.begin', input);
  while ((await s.runner.run('demo.clear', { orgId: org.id, connectorId: helpDesk.id, limit: 1_000 })) > 0) phase('clearing the demo…');
  await s.runner.run('billing.remove-named', { orgId: org.id, name: DEMO_STRIPE, actor: input.actor });
  const id = newBillingConnectorId();
  const billing = await s.runner.run('billing.add', {
    id,
    org: org.id,
    name: DEMO_STRIPE,
    platform: 'stripe',
    mode: 'test',
    site: null,
    apiKeySealed: sealSecret(DEMO_STRIPE_KEY, secretKey, id),
    actor: input.actor,
  });
  const stripe = serveStripeAccount(stripeDemoAccount(input), DEMO_STRIPE_KEY);
  let sync: Awaited<ReturnType<typeof runBackfill>>;
  try {
    const { sync: started } = await s.runner.run('billing.sync-start', { connectorId: billing.id });
    sync = await runBackfill({
      syncId: started.id,
      settings: { stripeApiBase: stripe.url, chargebeeApiBase: stripe.url, maxRps: 100 },
      secretKey,
      run: (unit, args) => s.runner.run(unit, args as never) as never,
      onPage: (at) => {
        const read = Object.values(at.report).reduce((sum, counts) => sum + (counts.read ?? 0), 0);
        phase(`backfilling from Stripe… ${at.phase}s, ${read.toLocaleString('en-US')} objects read`);
      },
    });
  } finally {
    stripe.stop();
  }
  if (sync.state !== 'done') throw new Error(`the demo's Stripe backfill failed: ${sync.error}`);
  let applied = 0;
  await applyInParts(async (part) => {
    const run = await s.runner.run('billing.apply', { connectorId: billing.id, ...part });
    applied += run.applied;
    phase(`applying Stripe's events… ${applied.toLocaleString('en-US')}`);
    return run;
  });
  for (const table of DEMO_TABLES) await s.runner.run('demo.analyze', { table, sample: s.via === 'server' ? 'small' : 'full' });
  const report = presentSync(sync).report;
  const counts = {
    customers: report.customers?.read ?? 0,
    contracts: report.subscriptions?.read ?? 0,
    invoices: report.invoices?.read ?? 0,
    tickets: 0,
    truth: 0,
  };
  const finished = await s.runner.run('demo.finish', { orgId: org.id, actor: input.actor });
  return { org, connector: helpDesk, counts, billingConnectorId: billing.id, applied, ...finished };
}

export async function demoCommand(argv: string[]) {
  const cmd = parseCommand(argv, OPTIONS, HELP);
  const billing = typeof cmd.values.billing === 'string' ? cmd.values.billing : null;
  if (billing !== null && billing !== 'stripe') throw new UsageError(`--billing takes stripe, got "${billing}"`);
  if (billing && typeof cmd.values.truth === 'string')
    throw new UsageError('--truth is for the generated demo: a Stripe account has no hidden truth');
  const input = {
    orgName: typeof cmd.values.org === 'string' ? cmd.values.org : 'Demo',
    customers: integer(cmd.values.customers, 'customers', 600, 1_000_000),
    seed: integer(cmd.values.seed, 'seed', 42, 2 ** 31),
    today: utcToday(),
    actor: cliActor(),
  };
  const truthFile = typeof cmd.values.truth === 'string' ? cmd.values.truth : null;
  // What it is doing, on a terminal: a large demo takes minutes (100,000 customers: 5–7).
  const phase = (text: string) => {
    if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${text}`);
  };
  const config = cmd.config();
  const result = await withAdminSession(config, 'demo', async (s) => {
    // Once the session has opened DATA_DIR: on a first run the key is made there.
    const secretKey = billing ? sealingKey(config) : null;
    if (secretKey) {
      const loaded = await loadFromStripe(s, input, secretKey, phase);
      await scorePredictions(s, { orgId: loaded.org.id, jobId: loaded.recomputeJobId, today: input.today }, phase);
      const retrain = await s.runner.run('predictions.recompute', { org: loaded.org.id, retrain: true });
      return { ...loaded, retrainJobId: retrain.job_id };
    }
    phase(`loading ${input.customers.toLocaleString('en-US')} customers with 36 months of history…`);
    // Through a running server, a unit per step (modules/demo/service.ts): one transaction would
    // hold the embedded database, and every tenant's requests, for the whole load.
    const loaded =
      s.via === 'server'
        ? await loadDemoInUnits(s.runner, input, {
            onChunk: (customers) =>
              phase(`loading… ${customers.toLocaleString('en-US')} of ${input.customers.toLocaleString('en-US')} customers`),
          })
        : await s.runner.run('demo.load', input);
    if (truthFile) phase(`writing the truth to ${truthFile}…`);
    if (truthFile) await writeTruth(truthFile, (after) => s.runner.run('demo.truth', { orgId: loaded.org.id, after, limit: TRUTH_PAGE }));
    await scorePredictions(s, { orgId: loaded.org.id, jobId: loaded.recomputeJobId, today: input.today }, phase);
    const retrain = await s.runner.run('predictions.recompute', { org: loaded.org.id, retrain: true });
    return { ...loaded, retrainJobId: retrain.job_id, billingConnectorId: null, applied: 0 };
  });
  phase('');
  const base = consoleBase(config).replace(/\/+$/, '');
  const webhook = webhookUrl(result.connector.id, base);
  const signInLink = signInLinkUrl(consoleBase(config), result.signInToken);
  cmd.print(
    {
      org_id: result.org.id,
      org: result.org.name,
      key_id: result.key.id,
      secret: result.secret,
      connector_id: result.connector.id,
      webhook_url: webhook,
      retrain_job_id: result.retrainJobId,
      admin_user_id: result.admin.id,
      admin_email: result.admin.email,
      sign_in_link: signInLink,
      pending_actions: result.pendingActions,
      billing_connector_id: result.billingConnectorId,
      billing_events_applied: result.applied,
      ...result.counts,
    },
    (r) =>
      [
        r.billing_connector_id
          ? `demo organisation "${r.org}" (${r.org_id}) from a Stripe account: ${r.customers} customers, ${r.contracts} subscriptions and ${r.invoices} invoices backfilled; ${r.billing_events_applied} events applied`
          : `demo organisation "${r.org}" (${r.org_id}): ${r.customers} customers, ${r.contracts} contracts, ${r.invoices} invoices, ${r.tickets} tickets`,
        ...(r.billing_connector_id
          ? [`what the sync did: revintel billing status ${r.billing_connector_id}   (and the console's Settings → Billing)`]
          : []),
        ...(truthFile ? [`truth: ${r.truth} rows written to ${truthFile}`] : []),
        `predictions scored; a model is being trained on its history (revintel jobs show ${r.retrain_job_id})`,
        ...(r.billing_connector_id
          ? []
          : [`${r.pending_actions} agent actions proposed from its latest churn-signal tickets wait in the console's inbox`]),
        '',
        `  API key: ${r.secret}`,
        '',
        `Console: sign in as ${r.admin_email} with this one-time link (valid 24 h; it sets the password):`,
        `  ${r.sign_in_link}`,
        '',
        // URLs quoted: `?` and `&` are special to the shell (zsh refuses an unmatched `?` glob).
        `Try: curl -H "Authorization: Bearer ${r.secret}" '${base}/api/customers?sort=arr'`,
        `     curl -H "Authorization: Bearer ${r.secret}" '${base}/api/tickets?churn_signal=cancellation'`,
        `Post a ticket to its help desk (no signature needed):`,
        `     curl -H 'content-type: application/json' -d '${JSON.stringify({ ticket: EXAMPLE_TICKET }).replaceAll("'", "'\\''")}' '${r.webhook_url}'`,
      ].join('\n'),
  );
}

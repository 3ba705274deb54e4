// POST /api/webhooks/billing?connectorId=… (docs/billing.md "Webhooks"): a billing connector's
// Stripe or Chargebee events, on the shared signed-webhook path. The connector named in the query is
// counted at once on its own budget; the body is read within the webhook limit, proved by the
// connector's scheme (signatures.ts), checked against its platform's schema of its kind
// (payloads.ts), stored once with its `billing.apply` job, and answered 200 once committed.
import { t } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { createGroupCommit } from '../../db/group-commit.ts';
import { AppError } from '../../lib/errors.ts';
import { parseJsonBody } from '../../lib/json.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import type { WebhookBudgets } from '../signed-webhooks/budgets.ts';
import { type SignedWebhookReceiver, signedWebhook, signedWebhookModule } from '../signed-webhooks/index.ts';
import type { BillingConnectorLookup, BillingSender } from './connector-lookup.ts';
import { billingCredentialsAt } from './connectors.ts';
import { type BillingEventToStore, type StoredBillingEvent, storeBillingEvents } from './events.ts';
import { checkBillingEvent, type BillingEventBody } from './payloads.ts';
import { billingVerifier } from './signatures.ts';

/** What the platform is answered: it only looks at the status; the rest is for whoever replays. */
export const BillingWebhookAck = t.Object(
  {
    ok: t.Literal(true),
    status: t.Union([t.Literal('received'), t.Literal('duplicate'), t.Literal('ignored')]),
    event_id: t.String(),
  },
  { additionalProperties: false },
);

export const BILLING_WEBHOOK_ROUTE = {
  method: 'POST',
  path: '/api/webhooks/billing',
  auth: 'platform-signature',
  verifiedBy: 'billing',
  counted: 'connector',
  body: 'webhook',
  response: BillingWebhookAck,
  envelope: false,
  tag: 'billing',
  checkedQuery: t.Object({ connectorId: t.String({ minLength: 1, maxLength: 100 }) }),
  errors: [400, 404],
  summary: "A billing connector's Stripe or Chargebee event (?connectorId=…)",
} as const satisfies RouteDeclaration;

export interface BillingWebhookDeps {
  database: Database;
  config: Pick<
    Config,
    'billingToleranceS' | 'stripeApiBase' | 'secretKey' | 'publicUrl' | 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook'
  >;
  budgets: WebhookBudgets;
  /** The connectors as this process knows them (kept two seconds; cleared on a change here). */
  connectors: BillingConnectorLookup;
  clock?: () => number;
  /** After a commit that queued the apply job: the job loop looks at once. */
  wakeJobs?: () => void;
}

/** A proven, checked event, with its body's text as received (stored as it came). */
interface BillingDelivery {
  body: BillingEventBody;
  text: string;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The receiver of the billing webhook (app.ts hands it a POST directly, as it does the ticket
 * webhook's): the connector from the cache, its events stored by group commit (db/group-commit.ts),
 * so a burst costs a few transactions rather than one per delivery. */
export function createBillingWebhookReceiver(deps: BillingWebhookDeps): SignedWebhookReceiver {
  const { db } = deps.database;
  const clock = deps.clock ?? Date.now;
  const verifier = billingVerifier({ toleranceSeconds: deps.config.billingToleranceS, clock });
  const writer = createGroupCommit<BillingEventToStore, StoredBillingEvent>({
    // One statement stores the batch and queues its apply run (events.ts): no transaction to open.
    writeBatch: (events) => storeBillingEvents(db, events, { stripeApiBase: deps.config.stripeApiBase }),
    onCommitted: (stored) => {
      // Only a commit that queued the apply job wakes the job loop: each wake costs the database a
      // look for due jobs (two on the embedded one, which runs them between deliveries), and while
      // one is queued, every commit of a burst would wake the loop for nothing.
      if (stored.some((s) => s.applyQueued)) deps.wakeJobs?.();
    },
    sizeOf: (event) => event.text?.length ?? 0,
    parallel: deps.database.kind === 'postgres' ? 2 : 1,
  });

  return signedWebhook<BillingSender, BillingDelivery>(
    {
      route: BILLING_WEBHOOK_ROUTE,
      async identify(request) {
        const connectorId = new URL(request.url).searchParams.get('connectorId');
        if (!connectorId) return new AppError('bad_request', 'Query parameter "connectorId" is required');
        const found = connectorId.length <= 100 ? deps.connectors.find(connectorId) : null;
        const connector = found instanceof Promise ? await found : found;
        return connector ?? new AppError('not_found', `Billing connector ${connectorId.slice(0, 100)} not found`);
      },
      verify(delivery, connector, now) {
        if (!connector) return { ok: false, reason: 'no connector' };
        // A secret this server cannot open refuses everything (never accepts unproven events).
        const unreadable = { ok: false, reason: 'the connector secret cannot be read by this server' } as const;
        if (!connector.secrets) return unreadable;
        let opened: ReturnType<typeof billingCredentialsAt>;
        try {
          opened = billingCredentialsAt(connector.row, connector.secrets, now);
        } catch {
          return unreadable;
        }
        return verifier.verify(delivery, delivery.rawBody, opened);
      },
      refusal: (reason) => new AppError('unauthorized', `Invalid billing webhook credentials: ${reason}`),
      parse(delivery, _now, connector) {
        if (!connector) throw new Error('the billing webhook parses only deliveries of a known connector');
        let text: string;
        try {
          text = fatalUtf8.decode(delivery.rawBody);
        } catch {
          throw new AppError('malformed_json', 'Request body is not valid UTF-8 JSON');
        }
        return { body: checkBillingEvent(connector.row.platform, parseJsonBody(text)), text };
      },
      async handle({ body, text }, { identified: connector }) {
        if (!connector) throw new Error('the billing webhook stores only deliveries of a known connector');
        const stored = await writer.write({ connector: connector.row, body, source: 'webhook', text });
        const status = !stored.created ? 'duplicate' : stored.state === 'ignored' ? 'ignored' : 'received';
        return { body: JSON.stringify({ ok: true, status, event_id: body.event.id }) };
      },
      // Nothing was stored: both platforms deliver again on a non-2xx.
      unavailable: { message: 'The event could not be recorded: try again', headers: { 'retry-after': '5' } },
    },
    { budgets: deps.budgets, config: deps.config, clock },
  );
}

/** The route, for the route table (a GET is told 405, not 404); the server hands a POST straight to
 * the receiver (app.ts). */
export const billingWebhookModule = (receiver: SignedWebhookReceiver, states: RequestStates) =>
  signedWebhookModule('revintel/billing-webhook', receiver, states);

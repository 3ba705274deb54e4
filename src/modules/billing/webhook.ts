// POST /api/webhooks/billing?connectorId=… (docs/billing.md "Webhooks"): a billing connector's
// Stripe or Chargebee events, on the shared signed-webhook path. The connector named in the query is
// counted at once on its own budget; the body is read within the webhook limit, proved by the
// connector's scheme (signatures.ts), checked against its platform's schema of its kind
// (payloads.ts), stored once with its `billing.apply` job, and answered 200 at once.
import { eq } from 'drizzle-orm';
import { t } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { billingConnectors, type BillingConnector } from '../../db/schema/index.ts';
import { transaction } from '../../db/transaction.ts';
import { AppError } from '../../lib/errors.ts';
import { parseJsonBody } from '../../lib/json.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import type { RequestStates } from '../../plugins/request-state.ts';
import type { WebhookBudgets } from '../signed-webhooks/budgets.ts';
import { signedWebhook, signedWebhookModule } from '../signed-webhooks/index.ts';
import { openBillingConnector } from './connectors.ts';
import { storeBillingEvent } from './events.ts';
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
  states: RequestStates;
  config: Pick<
    Config,
    'billingToleranceS' | 'stripeApiBase' | 'secretKey' | 'publicUrl' | 'bodyLimitApi' | 'bodyLimitImport' | 'bodyLimitWebhook'
  >;
  budgets: WebhookBudgets;
  clock?: () => number;
  /** After a commit that queued the apply job: the job loop looks at once. */
  wakeJobs?: () => void;
}

export function billingWebhookModule(deps: BillingWebhookDeps) {
  const { db } = deps.database;
  const clock = deps.clock ?? Date.now;
  const verifier = billingVerifier({ toleranceSeconds: deps.config.billingToleranceS, clock });

  const receiver = signedWebhook<BillingConnector, BillingEventBody>(
    {
      route: BILLING_WEBHOOK_ROUTE,
      async identify(request) {
        const connectorId = new URL(request.url).searchParams.get('connectorId');
        if (!connectorId) return new AppError('bad_request', 'Query parameter "connectorId" is required');
        const [connector] =
          connectorId.length <= 100 ? await db.select().from(billingConnectors).where(eq(billingConnectors.id, connectorId)) : [];
        return connector ?? new AppError('not_found', `Billing connector ${connectorId.slice(0, 100)} not found`);
      },
      verify(delivery, connector, now) {
        if (!connector) return { ok: false, reason: 'no connector' };
        let opened: ReturnType<typeof openBillingConnector>;
        try {
          opened = openBillingConnector(connector, deps.config.secretKey, now);
        } catch {
          // A secret this server cannot open refuses everything (never accepts unproven events).
          return { ok: false, reason: 'the connector secret cannot be read by this server' };
        }
        return verifier.verify(delivery, delivery.rawBody, opened);
      },
      refusal: (reason) => new AppError('unauthorized', `Invalid billing webhook credentials: ${reason}`),
      parse(delivery, _now, connector) {
        if (!connector) throw new Error('the billing webhook parses only deliveries of a known connector');
        let text: string;
        try {
          text = new TextDecoder('utf-8', { fatal: true }).decode(delivery.rawBody);
        } catch {
          throw new AppError('malformed_json', 'Request body is not valid UTF-8 JSON');
        }
        return checkBillingEvent(connector.platform, parseJsonBody(text));
      },
      async handle(body, { identified: connector }) {
        if (!connector) throw new Error('the billing webhook stores only deliveries of a known connector');
        const stored = await transaction(db, (tx) =>
          storeBillingEvent(tx, { connector, body, source: 'webhook', stripeApiBase: deps.config.stripeApiBase }),
        );
        if (stored.created && stored.state === 'pending') deps.wakeJobs?.();
        const status = !stored.created ? 'duplicate' : stored.state === 'ignored' ? 'ignored' : 'received';
        return { body: JSON.stringify({ ok: true, status, event_id: body.event.id }) };
      },
      // Nothing was stored: both platforms deliver again on a non-2xx.
      unavailable: { message: 'The event could not be recorded: try again', headers: { 'retry-after': '5' } },
    },
    { budgets: deps.budgets, config: deps.config, clock },
  );
  return signedWebhookModule('revintel/billing-webhook', receiver, deps.states);
}

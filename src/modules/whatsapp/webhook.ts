// GET and POST /api/webhooks/messaging (docs/chat-platforms.md "WhatsApp"): Meta's
// WhatsApp Cloud API webhook.
// GET is the subscription handshake: `hub.mode=subscribe` and `hub.verify_token` equal (in constant
// time) to WHATSAPP_VERIFY_TOKEN echo `hub.challenge` as text/plain; anything else is 403, missing
// parameters 400.
// POST carries messages and statuses: `X-Hub-Signature-256` (HMAC-SHA256 of the raw bytes with
// WHATSAPP_APP_SECRET or _PREVIOUS, constant time) is checked before anything is parsed, else 401.
// Each message and status is stored once (by its wamid; a status by wamid and status) with a
// `whatsapp.inbound` job in one transaction, and Meta gets its 200 at once: a redelivery — Meta
// retries for days — finds the rows and queues nothing more.
import { Elysia, t } from 'elysia';
import type { Config } from '../../config.ts';
import type { Database, Db } from '../../db/client.ts';
import { enqueueJob } from '../../queue/job-queue.ts';
import { sameSecret } from '../../lib/digest.ts';
import { AppError } from '../../lib/errors.ts';
import type { RouteDeclaration } from '../../lib/routes.ts';
import type { RequestState, RequestStates } from '../../plugins/request-state.ts';
import { storeOnce as storeInbound } from '../chat/inbound.ts';
import type { WebhookBudgets } from '../signed-webhooks/budgets.ts';
import { signedWebhook } from '../signed-webhooks/index.ts';
import { hmacSha256Matches } from '../signed-webhooks/verification.ts';
import { deliveryDigest, SMALL_DELIVERY, storeDelivery } from './batch.ts';
import { whatsappInboundJob } from './inbound.ts';
import { type WhatsAppInstallation, whatsappInstallationByNumber } from './installations.ts';
import { bodyText, type Item, itemsOf, parseBody } from './items.ts';

export const MESSAGING_PATH = '/api/webhooks/messaging';

/** Bodies above this many bytes let waiting requests in between the steps of reading them. */
const LARGE_BODY = 256 * 1024;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export const MESSAGING_ROUTES = {
  // The handshake proves itself with the verify token; it comes rarely, from Meta's addresses, so
  // the anonymous budget is right for it.
  verify: {
    method: 'GET',
    path: MESSAGING_PATH,
    auth: 'none',
    counted: 'address',
    body: 'none',
    response: t.String(),
    envelope: false,
    summary: "Meta's webhook verification: echoes hub.challenge when hub.verify_token is WHATSAPP_VERIFY_TOKEN",
  },
  receive: {
    method: 'POST',
    path: MESSAGING_PATH,
    auth: 'platform-signature',
    verifiedBy: 'whatsapp',
    counted: 'installation',
    body: 'webhook',
    response: t.Object({}, { additionalProperties: true }),
    envelope: false,
    summary: 'WhatsApp messages and statuses (X-Hub-Signature-256 with WHATSAPP_APP_SECRET)',
  },
} as const satisfies Record<string, RouteDeclaration>;

export type SignatureVerdict = { ok: true } | { ok: false; reason: string };

/** Meta's `X-Hub-Signature-256: sha256=<hex>` over the raw body, against each configured secret,
 * in constant time. */
export function verifyMetaSignature(rawBody: Uint8Array, header: string | null, secrets: string[]): SignatureVerdict {
  if (!header) return { ok: false, reason: 'X-Hub-Signature-256 is required' };
  if (secrets.length === 0) return { ok: false, reason: 'WHATSAPP_APP_SECRET is not configured' };
  const given = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!given) return { ok: false, reason: 'X-Hub-Signature-256 is not sha256=<hex HMAC-SHA256>' };
  return hmacSha256Matches(secrets, [rawBody], Buffer.from(given[1]!, 'hex'))
    ? { ok: true }
    : { ok: false, reason: 'the signature does not match' };
}

/** The handshake's answer: the challenge, or the error. */
export function verifyHandshake(params: URLSearchParams, verifyToken: string | null): string {
  const mode = params.get('hub.mode');
  const token = params.get('hub.verify_token');
  const challenge = params.get('hub.challenge');
  for (const [name, value] of [
    ['hub.mode', mode],
    ['hub.verify_token', token],
    ['hub.challenge', challenge],
  ] as const) {
    if (value === null || value === '') throw new AppError('validation_failed', `Invalid field "${name}": the query parameter is required`);
  }
  if (challenge!.length > 512) throw new AppError('validation_failed', 'Invalid field "hub.challenge": at most 512 characters');
  if (!verifyToken) throw new AppError('forbidden', 'WHATSAPP_VERIFY_TOKEN is not configured: the subscription is refused');
  const tokenOk = sameSecret(token!, verifyToken);
  if (mode !== 'subscribe' || !tokenOk)
    throw new AppError('forbidden', 'hub.mode must be "subscribe" and hub.verify_token the configured verify token');
  return challenge!;
}

/** Stores an item once, with its job when it is to be acted on; false when stored before. */
async function storeOnce(db: Db, item: Item, installation: WhatsAppInstallation | null): Promise<boolean> {
  const acted = installation !== null && item.type !== 'other';
  const detail = !installation
    ? `phone number id ${item.phoneNumberId || '(none)'} is not installed`
    : item.type === 'other'
      ? 'field not handled'
      : null;
  const id = await storeInbound(db, {
    platform: 'whatsapp',
    dedupeKey: item.dedupeKey,
    installation,
    type: item.type,
    outcome: acted ? 'received' : 'ignored',
    detail,
    body: installation ? item.body : null,
  });
  if (!id) return false;
  if (acted) await enqueueJob(db, whatsappInboundJob, { eventId: id }, { orgId: installation.org_id, dedupeKey: id });
  return true;
}

/** The phone number an unproven body names, for the budget of refused signatures. */
function claimedNumber(bytes: Uint8Array): string | null {
  try {
    const id = String(itemsOf(parseBody(bodyText(bytes)))[0]?.phoneNumberId ?? '');
    return id ? `whatsapp:${id}` : null;
  } catch {
    return null;
  }
}

export interface MessagingDeps {
  database: Database;
  states: RequestStates;
  budgets: WebhookBudgets;
  config: Pick<
    Config,
    | 'bodyLimitApi'
    | 'bodyLimitImport'
    | 'bodyLimitWebhook'
    | 'publicUrl'
    | 'whatsappAppSecret'
    | 'whatsappAppSecretPrevious'
    | 'whatsappVerifyToken'
  >;
  wakeJobs?: () => void;
}

/** A proven delivery: its text (stored as it came when large), its items, and its bytes' digest. */
interface Delivery {
  text: string;
  items: Item[];
  bytes: Uint8Array;
}

export function messagingModule(deps: MessagingDeps) {
  const secrets = [deps.config.whatsappAppSecret, deps.config.whatsappAppSecretPrevious].filter((s): s is string => !!s);
  const { db } = deps.database;

  const reply = (state: RequestState, body: string, contentType: string) =>
    new Response(body, { headers: { 'content-type': contentType, ...state.headers, 'x-request-id': state.id } });

  /** Items to act on stored with their jobs, one short transaction; a large delivery as it came,
   * one event per number with its one job (batch.ts), its text in short transactions, the job
   * working through it. Items for numbers no one installed: one row per number. */
  async function store(delivery: Delivery, installations: Map<string, WhatsAppInstallation | null>): Promise<number> {
    const { items } = delivery;
    let stored = 0;
    if (items.length <= SMALL_DELIVERY) {
      await db.transaction(async (tx) => {
        for (const item of items) if (await storeOnce(tx, item, installations.get(item.phoneNumberId) ?? null)) stored++;
      });
      return stored;
    }
    const digest = deliveryDigest(delivery.bytes);
    for (const [phoneNumberId, installation] of installations) {
      const count = items.reduce((n, item) => (item.phoneNumberId === phoneNumberId ? n + 1 : n), 0);
      if (installation) {
        if (await storeDelivery(db, installation, { text: delivery.text, digest, items: count, phoneNumberId })) stored++;
      } else if (
        await storeOnce(
          db,
          { phoneNumberId, dedupeKey: `unknown:${phoneNumberId.slice(0, 60)}:${digest}`, type: 'other', body: null },
          null,
        )
      )
        stored++;
    }
    return stored;
  }

  const receiver = signedWebhook<WhatsAppInstallation, Delivery>(
    {
      route: MESSAGING_ROUTES.receive,
      verify: (delivery) => verifyMetaSignature(delivery.rawBody, delivery.headers.get('x-hub-signature-256'), secrets),
      refusal: (reason) => new AppError('unauthorized', `Invalid X-Hub-Signature-256: ${reason}`),
      claimed: (delivery) => claimedNumber(delivery.rawBody),
      async parse({ rawBody: bytes }) {
        const text = bodyText(bytes);
        // A large body's parsing is tens of milliseconds of this thread, which on the embedded
        // database every tenant's requests share: requests waiting meanwhile go first, after it
        // and after the items are read.
        const large = bytes.length > LARGE_BODY;
        const parsed = parseBody(text);
        if (large) await nextTurn();
        const items = itemsOf(parsed);
        if (large) await nextTurn();
        return { text, items, bytes };
      },
      async senders({ items }) {
        const found: WhatsAppInstallation[] = [];
        for (const id of new Set(items.map((item) => item.phoneNumberId))) {
          const installation = id ? await whatsappInstallationByNumber(db, id) : null;
          if (installation) found.push(installation);
        }
        return found;
      },
      async handle(delivery, { senders }) {
        const byNumber = new Map(senders.map((installation) => [installation.external_id, installation]));
        const installations = new Map<string, WhatsAppInstallation | null>();
        for (const item of delivery.items) installations.set(item.phoneNumberId, byNumber.get(item.phoneNumberId) ?? null);
        if ((await store(delivery, installations)) > 0) deps.wakeJobs?.();
        return { body: '{}' };
      },
      // Nothing was stored: Meta delivers it again later.
      unavailable: { message: 'The event could not be recorded: try again', headers: { 'retry-after': '5' } },
    },
    { budgets: deps.budgets, config: deps.config },
  );

  return new Elysia({ name: 'revintel/messaging' })
    .get(MESSAGING_PATH, ({ request }) =>
      reply(
        stateOf(deps.states, request),
        verifyHandshake(new URL(request.url).searchParams, deps.config.whatsappVerifyToken),
        'text/plain;charset=utf-8',
      ),
    )
    .post(MESSAGING_PATH, ({ request }) => receiver.receive(request, stateOf(deps.states, request)));
}

function stateOf(states: RequestStates, request: Request): RequestState {
  const state = states.get(request);
  if (!state) throw new Error(`no request state for ${MESSAGING_PATH}`);
  return state;
}

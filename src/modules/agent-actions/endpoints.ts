// The organisation's receivers of outbound events (`revintel endpoints add|list|remove`) and the
// operator's view of the outbox (`revintel outbox list|retry`), as admin units: the secret arrives
// sealed by the CLI (its plaintext never crosses the admin socket nor reaches the database).
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { isoTime } from '../../db/keyset.ts';
import { OUTBOUND_EVENT_TYPES, type DeliveryStatus } from '../../db/schema/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { recordAudit } from '../audit/service.ts';
import { findOrg } from '../orgs/service.ts';
import { endpointUrlProblem, listDeliveries, presentDelivery, refusedAsWritten, retryDeliveries } from './outbox.ts';
import type { Settings } from '../../settings.ts';
import { listChatSends, retryChatSends } from '../chat/outbox.ts';
import { CHAT_PLATFORMS } from '../chat/platforms.ts';

export interface EndpointView {
  id: string;
  org_id: string;
  url: string;
  events: string[] | null;
  created_at: string;
  removed_at: string | null;
}

const SELECT = sql`select id, org_id, url, events, ${isoTime(sql`created_at`)} as created_at, ${isoTime(sql`removed_at`)} as removed_at from webhook_endpoints`;

export const endpointAdminUnits = {
  'endpoints.add': async (
    db: Db,
    input: { id: string; org: string; url: string; events: string[] | null; secretSealed: string; actor: string },
    settings: Settings,
  ) => {
    const org = await findOrg(db, input.org);
    const unknown = input.events?.find((e) => !(OUTBOUND_EVENT_TYPES as readonly string[]).includes(e));
    if (unknown)
      throw new AppError('validation_failed', `--events: unknown event type "${unknown}" (one of ${OUTBOUND_EVENT_TYPES.join(', ')})`);
    // The CLI checked the URL (and what its name resolves to); the server that owns the database
    // checks it again as written, under its own ALLOW_PRIVATE_ENDPOINTS.
    const problem = endpointUrlProblem(input.url);
    if (problem) throw new AppError('unprocessable', problem);
    const refused = refusedAsWritten(new URL(input.url), settings.actions.allowPrivateEndpoints);
    if (refused) throw new AppError('unprocessable', `--url: ${refused.message}`);
    await db.execute(sql`
      insert into webhook_endpoints (id, org_id, url, events, secret_sealed)
      values (${input.id}, ${org.id}, ${input.url}, ${input.events ? JSON.stringify(input.events) : null}::jsonb, ${input.secretSealed})`);
    await recordAudit(db, {
      orgId: org.id,
      actor: input.actor,
      action: 'endpoint.created',
      targetType: 'endpoint',
      targetId: input.id,
      details: { url: input.url, events: input.events },
    });
    const [row] = rowsOf<EndpointView>(await db.execute(sql`${SELECT} where id = ${input.id}`));
    return row!;
  },
  'endpoints.list': async (db: Db, input: { org?: string }) => {
    const orgId = input.org ? (await findOrg(db, input.org)).id : null;
    return rowsOf<EndpointView>(
      await db.execute(sql`${SELECT} where removed_at is null and (${orgId}::text is null or org_id = ${orgId}) order by created_at, id`),
    );
  },
  'endpoints.remove': async (db: Db, input: { id: string; actor: string }) => {
    const [row] = rowsOf<{ org_id: string }>(
      await db.execute(
        sql`update webhook_endpoints set removed_at = now(), updated_at = now() where id = ${input.id} and removed_at is null returning org_id`,
      ),
    );
    if (!row) throw notFound(`Endpoint ${input.id}`);
    await recordAudit(db, {
      orgId: row.org_id,
      actor: input.actor,
      action: 'endpoint.removed',
      targetType: 'endpoint',
      targetId: input.id,
    });
    // Its pending deliveries will find it removed and stop.
    return { id: input.id, removed: true };
  },
  'outbox.list': async (db: Db, input: { org?: string; status?: DeliveryStatus; limit: number }) => {
    const orgId = input.org ? (await findOrg(db, input.org)).id : undefined;
    // Outbound events and chat sends (Slack messages) together, newest first.
    const events = (await listDeliveries(db, { orgId, status: input.status, limit: input.limit }))
      .slice(0, input.limit)
      .map(presentDelivery);
    const chat = await listChatSends(db, CHAT_PLATFORMS, { orgId, status: input.status, limit: input.limit });
    return [...events, ...chat]
      .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1))
      .slice(0, input.limit);
  },
  'outbox.retry': async (db: Db, input: { ids?: string[]; org?: string; actor: string }) => {
    const orgId = input.org ? (await findOrg(db, input.org)).id : undefined;
    const eventIds = input.ids?.filter((id) => !id.startsWith('chs_'));
    const chatIds = input.ids?.filter((id) => id.startsWith('chs_'));
    const retried = [
      ...(eventIds?.length === 0 ? [] : await retryDeliveries(db, { ids: eventIds, orgId })),
      ...(chatIds?.length === 0 ? [] : await retryChatSends(db, { ids: chatIds, orgId })),
    ];
    for (const id of retried)
      await recordAudit(db, {
        orgId: orgId ?? null,
        actor: input.actor,
        action: 'outbox.retried',
        targetType: id.startsWith('chs_') ? 'chat_send' : 'outbound_delivery',
        targetId: id,
      });
    return { retried };
  },
};

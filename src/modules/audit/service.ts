import { auditLog } from '../../db/schema/index.ts';
import type { Db } from '../../db/client.ts';

type AuditAction =
  | 'org.created'
  | 'org.updated'
  | 'key.created'
  | 'key.revoked'
  | 'connector.created'
  | 'connector.updated'
  | 'connector.secret_rotated'
  | 'event.replayed'
  | 'job.retried'
  | 'agent_action.decided'
  | 'csm.created'
  | 'csm.updated'
  | 'action_rules.updated'
  | 'endpoint.created'
  | 'chat_installation.created'
  | 'chat_installation.removed'
  | 'endpoint.removed'
  | 'outbox.retried'
  | 'user.created'
  | 'user.role_changed'
  | 'user.disabled'
  | 'user.enabled'
  | 'user.link_issued'
  | 'user.signed_in'
  | 'user.signed_out_everywhere'
  | 'billing_connector.created'
  | 'billing_connector.updated'
  | 'billing_connector.deleted'
  | 'billing_event.replayed';

interface AuditInput {
  orgId: string | null;
  actor: string;
  action: AuditAction;
  targetType:
    | 'organisation'
    | 'api_key'
    | 'connector'
    | 'ticket_event'
    | 'job'
    | 'agent_action'
    | 'csm'
    | 'action_rules'
    | 'endpoint'
    | 'outbound_delivery'
    | 'chat_installation'
    | 'chat_send'
    | 'user'
    | 'billing_connector';
  targetId: string;
  details?: Record<string, unknown>;
}

/** Call inside the transaction of the change it records, so the trail never disagrees with the data. */
export async function recordAudit(db: Db, entry: AuditInput): Promise<void> {
  await db.insert(auditLog).values({ ...entry, details: entry.details ?? {} });
}

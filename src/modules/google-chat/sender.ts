// Google Chat's sender (the chat core's port, chat/port.ts): a copy can go to an organisation with an
// installed space while the app has its service account (GCHAT_SERVICE_ACCOUNT_FILE); its post and,
// after a decision taken anywhere, its update are rows of the chat outbox (google-chat/transport.ts
// sends them). The copy a click decided is not patched: the click's own answer updated it.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { installedPlatformSender, queueChatSend } from '../chat/outbox.ts';
import type { ChatPlatform, CopyUpdate } from '../chat/port.ts';
import { attemptGoogleChatSend } from './transport.ts';

/** After a decision (API, another platform, expiry) or a snooze's end: every Google Chat card
 * already posted is patched to show it, through the space that holds it; after a snooze, a message
 * beside it reminds the CSM (editing a card notifies nobody). */
export async function queueGoogleChatUpdates(db: Db, input: CopyUpdate): Promise<number> {
  const copies = rowsOf<{
    id: string;
    target: string | null;
    platform_message_id: string;
    installation_id: string | null;
    customer_name: string;
  }>(
    await db.execute(sql`
      select n.id, n.target, n.platform_message_id,
        (select c.name from agent_actions a join customers c on c.org_id = a.org_id and c.id = a.customer_id where a.org_id = n.org_id and a.id = n.action_id) as customer_name,
        (select i.id from chat_installations i where i.org_id = n.org_id and i.platform = 'google_chat' and i.external_id = n.platform_channel and i.removed_at is null) as installation_id
      from action_notifications n
      where n.org_id = ${input.orgId} and n.action_id = ${input.actionId} and n.platform = 'google_chat' and n.status in ('sent', 'updated') and n.platform_message_id is not null
      order by n.id`),
  );
  let queued = 0;
  for (const copy of copies) {
    if (copy.id === input.via?.notificationId) {
      await db.execute(sql`update action_notifications set status = 'updated', updated_at = now() where id = ${copy.id}`);
      continue;
    }
    if (!copy.installation_id) continue; // the space was removed: nothing can edit its cards
    await queueChatSend(db, {
      platform: 'google_chat',
      orgId: input.orgId,
      installationId: copy.installation_id,
      kind: 'update',
      notificationId: copy.id,
      actionId: input.actionId,
      request: { name: copy.platform_message_id },
    });
    if (input.reminder) {
      const text = `The snooze is over: the action for ${copy.customer_name} (${input.actionId}) waits for a decision again${copy.target ? ` (${copy.target})` : ''}.`;
      await queueChatSend(db, {
        platform: 'google_chat',
        orgId: input.orgId,
        installationId: copy.installation_id,
        kind: 'reply',
        actionId: input.actionId,
        request: { text },
      });
    }
    queued++;
  }
  return queued;
}

const installed = installedPlatformSender('google_chat', queueGoogleChatUpdates);

/** Google Chat behind the chat core's port (chat/platforms.ts): its copies need the app's service
 * account besides the space. */
export const googleChatPlatform: ChatPlatform = {
  ...installed,
  callOf: (kind) => (kind === 'update' ? 'spaces.messages.patch' : 'spaces.messages.create'),
  available: async (db, orgId, settings) => settings.gchatServiceAccountFile !== null && (await installed.available(db, orgId, settings)),
  attempt: (pending, settings) => attemptGoogleChatSend(pending, settings),
  // The card just posted is patched to show the decision taken meanwhile.
  async decidedBeforePosted(db, copy) {
    if (!copy.messageId) return;
    await queueChatSend(db, {
      platform: 'google_chat',
      orgId: copy.orgId,
      installationId: copy.installationId,
      kind: 'update',
      notificationId: copy.notificationId,
      actionId: copy.actionId,
      request: { name: copy.messageId },
    });
  },
};

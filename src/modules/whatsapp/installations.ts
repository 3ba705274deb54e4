// WhatsApp installations (`revintel chat add whatsapp`): a WhatsApp Business phone number
// (Meta's `phone_number_id`, in `external_id`) belongs to one organisation, with its access token
// sealed under SECRET_KEY and bound to the installation's id, as the Slack bot token is.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';

export interface WhatsAppInstallation {
  id: string;
  org_id: string;
  /** Meta's phone_number_id: the path of every send and the `metadata` of every webhook. */
  external_id: string;
}

/** The active installation of a phone number id, or null. */
export async function whatsappInstallationByNumber(db: Db, phoneNumberId: string): Promise<WhatsAppInstallation | null> {
  const [row] = rowsOf<WhatsAppInstallation>(
    await db.execute(sql`select id, org_id, external_id from chat_installations where platform = 'whatsapp' and external_id = ${phoneNumberId} and removed_at is null`),
  );
  return row ?? null;
}

/** The organisation's active WhatsApp installation (the first one added), or null. */
export async function whatsappInstallationOfOrg(db: Db, orgId: string): Promise<WhatsAppInstallation | null> {
  const [row] = rowsOf<WhatsAppInstallation>(
    await db.execute(sql`
      select id, org_id, external_id from chat_installations
      where platform = 'whatsapp' and org_id = ${orgId} and removed_at is null order by created_at, id limit 1`),
  );
  return row ?? null;
}

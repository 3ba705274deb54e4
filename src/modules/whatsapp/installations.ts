// WhatsApp installations (`revintel chat add whatsapp`): a WhatsApp Business phone number
// (Meta's `phone_number_id`, in `external_id`) belongs to one organisation, with its access token
// sealed under SECRET_KEY and bound to the installation's id, as the Slack bot token is.
import type { Db } from '../../db/client.ts';
import { installationByExternalId, installationOfOrg } from '../chat/installations.ts';

export interface WhatsAppInstallation {
  id: string;
  org_id: string;
  /** Meta's phone_number_id: the path of every send and the `metadata` of every webhook. */
  external_id: string;
}

/** The active installation of a phone number id, or null. */
export const whatsappInstallationByNumber = (db: Db, phoneNumberId: string) =>
  installationByExternalId(db, 'whatsapp', phoneNumberId) as Promise<WhatsAppInstallation | null>;

/** The organisation's active WhatsApp installation (the first one added), or null. */
export const whatsappInstallationOfOrg = (db: Db, orgId: string) =>
  installationOfOrg(db, 'whatsapp', orgId) as Promise<WhatsAppInstallation | null>;

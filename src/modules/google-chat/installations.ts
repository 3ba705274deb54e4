// Google Chat installations (`revintel chat add google-chat --org ORG --space spaces/…`): which space
// belongs to which organisation, kept in `chat_installations` with the space's name as
// `external_id`. No token of their own: the app speaks as its service account everywhere.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';

export interface GoogleChatInstallation {
  id: string;
  org_id: string;
  /** The space's name, `spaces/…`. */
  external_id: string;
}

/** A space's name as Google writes it. */
export const SPACE_NAME = /^spaces\/[A-Za-z0-9_-]{1,128}$/;

/** The active installation of a space, or null. */
export async function googleChatInstallationBySpace(db: Db, space: string): Promise<GoogleChatInstallation | null> {
  const [row] = rowsOf<GoogleChatInstallation>(
    await db.execute(sql`select id, org_id, external_id from chat_installations where platform = 'google_chat' and external_id = ${space} and removed_at is null`),
  );
  return row ?? null;
}

/** The organisation's active Google Chat installation (the first space added), or null. */
export async function googleChatInstallationOfOrg(db: Db, orgId: string): Promise<GoogleChatInstallation | null> {
  const [row] = rowsOf<GoogleChatInstallation>(
    await db.execute(sql`
      select id, org_id, external_id from chat_installations
      where platform = 'google_chat' and org_id = ${orgId} and removed_at is null order by created_at, id limit 1`),
  );
  return row ?? null;
}

// Google Chat installations (`revintel chat add google-chat --org ORG --space spaces/…`): which space
// belongs to which organisation, kept in `chat_installations` with the space's name as
// `external_id`. No token of their own: the app speaks as its service account everywhere.
import type { Db } from '../../db/client.ts';
import { installationByExternalId, installationOfOrg } from '../chat/installations.ts';

export interface GoogleChatInstallation {
  id: string;
  org_id: string;
  /** The space's name, `spaces/…`. */
  external_id: string;
}

/** A space's name as Google writes it. */
export const SPACE_NAME = /^spaces\/[A-Za-z0-9_-]{1,128}$/;

/** The active installation of a space, or null. */
export const googleChatInstallationBySpace = (db: Db, space: string) =>
  installationByExternalId(db, 'google_chat', space) as Promise<GoogleChatInstallation | null>;

/** The organisation's active Google Chat installation (the first one added), or null. */
export const googleChatInstallationOfOrg = (db: Db, orgId: string) =>
  installationOfOrg(db, 'google_chat', orgId) as Promise<GoogleChatInstallation | null>;

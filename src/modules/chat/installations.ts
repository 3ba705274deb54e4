// Chat installations (docs/chat-platforms.md; `revintel chat add|list|remove`): which Slack
// workspace belongs to which organisation, with its bot token sealed under SECRET_KEY by the CLI
// and bound to the installation's id (as connector secrets are). The table keeps the platform's own
// id in `external_id`, so Google Chat spaces and WhatsApp numbers fit beside Slack team ids.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client.ts';
import { isoTime } from '../../db/keyset.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { recordAudit } from '../audit/service.ts';
import { findOrg } from '../orgs/service.ts';
import type { ChatPlatform } from '../../db/schema/index.ts';

export interface InstallationView {
  id: string;
  org_id: string;
  platform: string;
  external_id: string;
  created_at: string;
}

const SELECT = sql`select id, org_id, platform, external_id, ${isoTime(sql`created_at`)} as created_at from chat_installations`;

/** An installation as the platforms' webhooks and senders need it. */
export interface ChatInstallation {
  id: string;
  org_id: string;
  /** The platform's id of it: a Slack team id, a Google Chat space's name, a WhatsApp phone number id. */
  external_id: string;
  credentials_sealed: string | null;
  details: Record<string, unknown>;
}

const INSTALLATION = sql`select id, org_id, external_id, credentials_sealed, details from chat_installations`;

/** The active installation of a platform's workspace, space or number, or null. */
export async function installationByExternalId(db: Db, platform: ChatPlatform, externalId: string): Promise<ChatInstallation | null> {
  const [row] = rowsOf<ChatInstallation>(
    await db.execute(sql`${INSTALLATION} where platform = ${platform} and external_id = ${externalId} and removed_at is null`),
  );
  return row ?? null;
}

/** The organisation's active installation of a platform (the first added), or null. */
export async function installationOfOrg(db: Db, platform: ChatPlatform, orgId: string): Promise<ChatInstallation | null> {
  const [row] = rowsOf<ChatInstallation>(
    await db.execute(
      sql`${INSTALLATION} where platform = ${platform} and org_id = ${orgId} and removed_at is null order by created_at, id limit 1`,
    ),
  );
  return row ?? null;
}

/** A Slack installation (at most one per organisation). */
export type SlackInstallation = ChatInstallation & { details: { bot_user_id?: string } };
export const slackInstallationByTeam = (db: Db, teamId: string) =>
  installationByExternalId(db, 'slack', teamId) as Promise<SlackInstallation | null>;
export const slackInstallationOfOrg = (db: Db, orgId: string) => installationOfOrg(db, 'slack', orgId) as Promise<SlackInstallation | null>;

export const chatAdminUnits = {
  'chat.add': async (
    db: Db,
    input: {
      id: string;
      org: string;
      platform: ChatPlatform;
      externalId: string;
      credentialsSealed: string | null;
      actor: string;
    },
  ) => {
    const org = await findOrg(db, input.org);
    const [taken] = rowsOf<{ id: string; org_id: string }>(
      await db.execute(
        sql`select id, org_id from chat_installations where platform = ${input.platform} and external_id = ${input.externalId} and removed_at is null`,
      ),
    );
    if (taken)
      throw new AppError(
        'conflict',
        `${input.platform} ${input.externalId} is already installed (${taken.id}, organisation ${taken.org_id}); remove it first`,
      );
    // A CSM's Slack user id belongs to one workspace (or one Enterprise Grid): approvals go through
    // the organisation's one Slack installation, so a second is refused rather than left unused.
    if (input.platform === 'slack') {
      const [own] = rowsOf<{ id: string; external_id: string }>(
        await db.execute(
          sql`select id, external_id from chat_installations where platform = 'slack' and org_id = ${org.id} and removed_at is null`,
        ),
      );
      if (own)
        throw new AppError(
          'conflict',
          `organisation ${org.id} already has Slack workspace ${own.external_id} (${own.id}); an organisation sends through one workspace: remove it first to switch`,
        );
    }
    await db.execute(sql`
      insert into chat_installations (id, org_id, platform, external_id, credentials_sealed)
      values (${input.id}, ${org.id}, ${input.platform}, ${input.externalId}, ${input.credentialsSealed})`);
    await recordAudit(db, {
      orgId: org.id,
      actor: input.actor,
      action: 'chat_installation.created',
      targetType: 'chat_installation',
      targetId: input.id,
      details: { platform: input.platform, external_id: input.externalId },
    });
    const [row] = rowsOf<InstallationView>(await db.execute(sql`${SELECT} where id = ${input.id}`));
    return row!;
  },
  'chat.list': async (db: Db, input: { org?: string }) => {
    const orgId = input.org ? (await findOrg(db, input.org)).id : null;
    return rowsOf<InstallationView>(
      await db.execute(sql`${SELECT} where removed_at is null and (${orgId}::text is null or org_id = ${orgId}) order by created_at, id`),
    );
  },
  'chat.remove': async (db: Db, input: { id: string; actor: string }) => {
    const [row] = rowsOf<{ org_id: string }>(
      await db.execute(
        sql`update chat_installations set removed_at = now(), updated_at = now(), credentials_sealed = null where id = ${input.id} and removed_at is null returning org_id`,
      ),
    );
    if (!row) throw notFound(`Chat installation ${input.id}`);
    await recordAudit(db, {
      orgId: row.org_id,
      actor: input.actor,
      action: 'chat_installation.removed',
      targetType: 'chat_installation',
      targetId: input.id,
    });
    return { id: input.id, removed: true };
  },
};

// The port every chat platform implements (Slack, Google Chat, WhatsApp: one folder each under
// modules/, listed in platforms.ts, the only file of the core that imports them). What the core asks of a platform: whether an organisation can
// be sent copies there, queueing a copy's post and the updates of every copy after a decision (all
// in the caller's transaction, as rows of the chat outbox), and one attempt of one outbox row.
// The inbound side — verify a delivery, parse a click or a reply — is each platform's signed
// webhook (modules/signed-webhooks), storing what it gets once (inbound.ts) and deciding through
// decisions.ts.
import type { Db } from '../../db/client.ts';
import type { ChatPlatform as ChatPlatformName, ChatSendKind } from '../../db/schema/index.ts';
import type { AttemptResult } from '../../queue/outbox-attempts.ts';
import type { ActionSettings } from '../agent-actions/settings.ts';
import type { ActionFacts } from './facts.ts';

export type { ChatPlatformName };

/** What a CSM decides on an action, from any platform or the API. */
export type Decision = 'approve' | 'reject' | 'snooze' | 'cancel';

/** What the copies of an action are updated after: a decision (made by a click on `via`, whose
 * platform may answer it in place), an expiry, or a snooze that ended (`reminder`: the copies get
 * their buttons back and the CSM is told, since editing a message alone notifies nobody). */
export interface CopyUpdate {
  orgId: string;
  actionId: string;
  via?: { notificationId: string; responseUrl: string | null } | null;
  reminder?: boolean;
}

/** The outbound half of a platform, as agent actions use it. */
export interface ChatSender {
  /** The organisation can be sent copies here now (an installation, and what else it needs). */
  available(db: Db, orgId: string, settings: ActionSettings): Promise<boolean>;
  /** Queues the post of one copy of an action. */
  queueSend(db: Db, input: { orgId: string; actionId: string; notificationId: string }): Promise<void>;
  /** Queues the update of every copy already posted; how many copies there were. */
  queueUpdates(db: Db, input: CopyUpdate): Promise<number>;
}

/** A row of the chat outbox as an attempt needs it (Slack's and Google Chat's). */
export interface Pending {
  id: string;
  org_id: string;
  platform: ChatPlatformName;
  installation_id: string;
  /** The platform's id of the installation (Slack team, Google Chat space). */
  installation_external_id: string;
  credentials_sealed: string | null;
  kind: ChatSendKind;
  request: Record<string, unknown>;
  notification_id: string | null;
  action_id: string | null;
  /** A post: the copy's recipient (null: looked up by the CSM's e-mail) and nonce. */
  target: string | null;
  csm_email: string | null;
  nonce: string | null;
  action_status: string | null;
  /** What the message shows (posts and updates). */
  facts: ActionFacts | null;
}

/** One attempt's outcome, and for a post where the message is (its channel and ts, or Google's
 * space and message name) and, for Slack, whom it went to. */
export type SendAnswer = AttemptResult & { target?: string; channel?: string; ts?: string };

/** A chat platform: its sender, and one attempt of one of its rows of the outbox. A platform whose
 * rows need more than `Pending` (WhatsApp's 24-hour window) has no `attempt`: it brings its own
 * rows (`OwnOutboxRows`, given to the `chat.send` job in platforms.ts). */
export interface ChatPlatform extends ChatSender {
  /** The platform's API call a row of this kind makes (`chat.postMessage`, a response_url…), as
   * the operator's outbox listing names it. */
  callOf(kind: ChatSendKind, request: Record<string, unknown>): string;
  attempt: ((pending: Pending, settings: ActionSettings) => Promise<SendAnswer>) | null;
  /** A copy just posted to `target`, a recipient the platform looked up (Slack's user found by the
   * CSM's e-mail): remember it, if the platform matches the CSM's clicks by it. */
  postedTo?(db: Db, copy: { orgId: string; notificationId: string; target: string }): Promise<void>;
  /** A copy just posted whose action was decided meanwhile: queue what shows the decision. */
  decidedBeforePosted(
    db: Db,
    copy: { orgId: string; actionId: string; installationId: string; notificationId: string; messageId: string | null },
  ): Promise<void>;
}

/** What an attempt did to its row: still pending (a retry is queued), delivered or dead. */
export interface RecordedSend {
  status: 'pending' | 'delivered' | 'dead';
  attempts: number;
}

/** The outbox rows of a platform that loads, sends and records them itself: `load` and `record`
 * run as units of the `chat.send` job (each its own transaction, on the side owning the database),
 * `attempt` between them in the worker. */
export interface OwnOutboxRows<Row, Answer extends AttemptResult> {
  load(db: Db, args: { orgId: string; sendId: string }): Promise<Row | null>;
  attempt(row: Row, settings: ActionSettings): Promise<Answer>;
  record(db: Db, args: { orgId: string; sendId: string; answer: Answer; now: string }): Promise<RecordedSend>;
}

// What Slack sends to the team-chat webhook, by kind: the Events API's JSON (url_verification,
// event_callback) and interactivity's form field `payload` (block_actions). Only the fields we read
// are named; the rest pass through and are stored as they came.
import { t } from 'elysia';
import { payloadCheck } from '../signed-webhooks/payload.ts';

const text = t.Optional(t.String());

export const SlackUrlVerification = t.Object({ type: t.Literal('url_verification'), challenge: text });

export const SlackBlockActions = t.Object({
  type: t.Literal('block_actions'),
  team: t.Optional(t.Object({ id: text })),
  user: t.Optional(t.Object({ id: text, team_id: text })),
  actions: t.Optional(t.Array(t.Object({ action_id: text, value: text, action_ts: text }))),
  trigger_id: text,
  response_url: text,
  container: t.Optional(t.Object({ channel_id: text })),
  channel: t.Optional(t.Object({ id: text })),
});

export const SlackEventCallback = t.Object({
  type: t.Literal('event_callback'),
  team_id: text,
  event_id: text,
  authorizations: t.Optional(t.Array(t.Object({ is_bot: t.Optional(t.Boolean()), user_id: text }))),
  event: t.Optional(
    t.Object({
      type: text,
      user: text,
      text,
      channel: text,
      ts: text,
      thread_ts: text,
      event_ts: text,
      bot_id: text,
      subtype: text,
    }),
  ),
});

/** Any other kind (view_submission, shortcut…): stored, not acted on. */
export const SlackOther = t.Object({
  type: text,
  team: t.Optional(t.Object({ id: text })),
  team_id: text,
  event_id: text,
  trigger_id: text,
});

export type SlackPayload =
  | { kind: 'url_verification'; payload: typeof SlackUrlVerification.static }
  | { kind: 'block_actions'; payload: typeof SlackBlockActions.static }
  | { kind: 'event_callback'; payload: typeof SlackEventCallback.static }
  | { kind: 'other'; payload: typeof SlackOther.static };

const checks = {
  url_verification: payloadCheck(SlackUrlVerification, 'a Slack url_verification'),
  block_actions: payloadCheck(SlackBlockActions, 'a Slack block_actions interaction'),
  event_callback: payloadCheck(SlackEventCallback, 'a Slack event_callback'),
  other: payloadCheck(SlackOther, 'a Slack event'),
};

/** A JSON object from Slack as its kind's payload; the 400 naming the wrong field otherwise. */
export function slackPayloadOf(body: Record<string, unknown>): SlackPayload {
  switch (body.type) {
    case 'url_verification':
      return { kind: 'url_verification', payload: checks.url_verification(body) };
    case 'block_actions':
      return { kind: 'block_actions', payload: checks.block_actions(body) };
    case 'event_callback':
      return { kind: 'event_callback', payload: checks.event_callback(body) };
    default:
      return { kind: 'other', payload: checks.other(body) };
  }
}

/** The workspace a payload comes from. */
export function slackTeamOf(body: { team?: { id?: string }; team_id?: string; user?: { team_id?: string } }): string {
  return body.team?.id ?? body.team_id ?? body.user?.team_id ?? '';
}

import { describe, expect, test } from 'bun:test';
import { CHAT_PLATFORMS } from '../../src/modules/chat/platforms.ts';
import { CHAT_SEND_KINDS } from '../../src/db/schema/index.ts';

// The operator's outbox listing names each row's call by its platform (`revintel outbox list`'s
// url column): what an operator searches the platform's docs and logs for.
describe('each chat platform names the call an outbox row makes', () => {
  test('Slack: Web API methods, or the click’s response_url when the row answers through it', () => {
    const slack = CHAT_PLATFORMS.slack;
    expect(slack.callOf('post', { channel: 'C1' })).toBe('chat.postMessage');
    expect(slack.callOf('reply', { channel: 'C1', thread_ts: '1.2' })).toBe('chat.postMessage');
    expect(slack.callOf('update', { channel: 'C1', ts: '1.2' })).toBe('chat.update');
    expect(slack.callOf('update', { response_url: 'https://hooks.slack.com/actions/T/1/x' })).toBe('https://hooks.slack.com/actions/T/1/x');
    expect(slack.callOf('ephemeral', { channel: 'C1', user: 'U1' })).toBe('chat.postEphemeral');
  });

  test('Google Chat: create, or patch for an update; WhatsApp: messages', () => {
    expect(CHAT_PLATFORMS.google_chat.callOf('post', {})).toBe('spaces.messages.create');
    expect(CHAT_PLATFORMS.google_chat.callOf('update', { name: 'spaces/A/messages/B' })).toBe('spaces.messages.patch');
    for (const kind of CHAT_SEND_KINDS) expect(CHAT_PLATFORMS.whatsapp.callOf(kind, {})).toBe('messages');
  });
});

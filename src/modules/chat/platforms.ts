// Every chat platform, by name: the exhaustive registry the core sends through. A new platform is
// its folder under modules/ (its sender, its transport, its signed webhook) and one line here;
// agent actions and the outbox know platforms only through this table.
import { googleChatPlatform } from '../google-chat/sender.ts';
import { slackPlatform } from '../slack/sender.ts';
import { whatsappPlatform } from '../whatsapp/sender.ts';
import type { ChatPlatform, ChatPlatformName } from './port.ts';

export const CHAT_PLATFORMS: Record<ChatPlatformName, ChatPlatform> = {
  slack: slackPlatform,
  google_chat: googleChatPlatform,
  whatsapp: whatsappPlatform,
};

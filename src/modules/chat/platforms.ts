// Every chat platform, by name: the exhaustive registry the core sends through, and the only file
// of the core that imports the platforms. A new platform is its folder under modules/ (its sender,
// its transport, its signed webhook) and one line here; agent actions and the outbox know platforms
// only through this table (the outbox's job receives it below).
import { googleChatPlatform } from '../google-chat/sender.ts';
import { slackPlatform } from '../slack/sender.ts';
import { whatsappOutboxRows, whatsappPlatform } from '../whatsapp/sender.ts';
import { chatSendJobOf } from './outbox.ts';
import type { ChatPlatform, ChatPlatformName } from './port.ts';

export const CHAT_PLATFORMS: Record<ChatPlatformName, ChatPlatform> = {
  slack: slackPlatform,
  google_chat: googleChatPlatform,
  whatsapp: whatsappPlatform,
};

/** `chat.send`, sending through the platforms above (WhatsApp's rows by its own units). */
export const chatSendJob = chatSendJobOf(CHAT_PLATFORMS, whatsappOutboxRows);

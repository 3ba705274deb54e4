// The agent actions' settings (docs/agent-actions.md → Settings), read from the configuration and
// passed down with the prediction settings as one value (src/settings.ts).
import type { Config } from '../../config.ts';

export interface ActionSettings {
  /** ACTION_TTL_HOURS: an action not decided by then expires (the clock restarts when a snooze ends). */
  ttlHours: number;
  /** REJECT_COOLDOWN_DAYS: after a rejection, the same type for the same customer is refused (API,
   * unless `force`) or only counted (rules) for this long. */
  rejectCooldownDays: number;
  /** ALLOW_PRIVATE_ENDPOINTS: outbound events may go to loopback and private addresses. */
  allowPrivateEndpoints: boolean;
  /** SECRET_KEY: opens the endpoints' signing secrets (null: nothing can be signed). */
  secretKey: string | null;
  /** SLACK_API_BASE: where Slack's Web API is (no trailing slash). */
  slackApiBase: string;
  /** DISCOUNT_MAX_NO_MANAGER: a discount above this percentage needs a manager. */
  discountMaxNoManager: number;
  /** GCHAT_API_BASE: where Google Chat's REST API is (no trailing slash). */
  gchatApiBase: string;
  /** GOOGLE_TOKEN_URL: where the service account's JWT is exchanged for an access token. */
  googleTokenUrl: string;
  /** GCHAT_SERVICE_ACCOUNT_FILE: the Chat app's service-account key file (null: no Google Chat copies). */
  gchatServiceAccountFile: string | null;
  /** WHATSAPP_API_BASE: Meta's Graph API, versioned (no trailing slash). */
  whatsappApiBase: string;
  /** WHATSAPP_APPROVAL_TEMPLATE, WHATSAPP_TEMPLATE_LANGUAGE: the approval sent outside the window. */
  whatsappApprovalTemplate: string;
  whatsappTemplateLanguage: string;
}

export const DEFAULT_ACTION_SETTINGS: ActionSettings = {
  ttlHours: 72,
  rejectCooldownDays: 14,
  allowPrivateEndpoints: false,
  secretKey: null,
  slackApiBase: 'https://slack.com/api',
  discountMaxNoManager: 15,
  gchatApiBase: 'https://chat.googleapis.com/v1',
  googleTokenUrl: 'https://oauth2.googleapis.com/token',
  gchatServiceAccountFile: null,
  whatsappApiBase: 'https://graph.facebook.com/v21.0',
  whatsappApprovalTemplate: 'revintel_approval',
  whatsappTemplateLanguage: 'en',
};

export const actionSettingsOf = (config: Config, secretKey: string | null = config.secretKey): ActionSettings => ({
  ttlHours: config.actionTtlHours,
  rejectCooldownDays: config.rejectCooldownDays,
  allowPrivateEndpoints: config.allowPrivateEndpoints,
  secretKey,
  slackApiBase: config.slackApiBase.replace(/\/+$/, ''),
  discountMaxNoManager: config.discountMaxNoManager,
  gchatApiBase: config.gchatApiBase.replace(/\/+$/, ''),
  googleTokenUrl: config.googleTokenUrl,
  gchatServiceAccountFile: config.gchatServiceAccountFile,
  whatsappApiBase: config.whatsappApiBase.replace(/\/+$/, ''),
  whatsappApprovalTemplate: config.whatsappApprovalTemplate,
  whatsappTemplateLanguage: config.whatsappTemplateLanguage,
});

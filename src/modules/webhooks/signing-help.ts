// How each platform signs a ticket delivery, in words a person setting up a connector can follow:
// what signatures.ts checks, per platform (docs/tickets.md "Connecting a platform"). Pure data, so the
// console's connector page shows it without the server's code. A test holds each header to the ones
// signatures.ts reads (signatureHeadersOf).
import type { Platform } from '../tickets/platforms.ts';

export interface SigningHelp {
  /** The header the platform's own signature arrives in (null: the platform does not sign). */
  header: string | null;
  /** What that header holds. */
  scheme: string;
  /** Where the secret comes from and where it goes. */
  secret: string;
}

/** The scheme every platform may use, and the only one of the generic connector. */
export const HUB_SIGNATURE: SigningHelp = {
  header: 'x-hub-signature-256',
  scheme: 'sha256= followed by the lowercase hex HMAC-SHA256 of the raw request body, keyed with the secret',
  secret: 'Set the secret here (or have one generated) and give the sender the same one.',
};

const TOKEN_INSTEAD =
  'It cannot sign: give the connector a token (revintel connectors update CONNECTOR --token T) and have it send Authorization: Bearer T, or have your template sign with x-hub-signature-256.';

export const SIGNING_HELP: Record<Platform, SigningHelp> = {
  zendesk: {
    header: 'X-Zendesk-Webhook-Signature',
    scheme: 'base64 HMAC-SHA256 of the X-Zendesk-Webhook-Signature-Timestamp value followed by the raw body',
    secret: "Zendesk makes the secret: copy the webhook's signing secret from Zendesk and paste it here as the new secret.",
  },
  freshdesk: { header: null, scheme: 'no signature of its own', secret: TOKEN_INSTEAD },
  intercom: {
    header: 'X-Hub-Signature',
    scheme: 'sha1= followed by the hex HMAC-SHA1 of the raw body',
    secret: "Intercom signs with your app's client secret: paste it here as the new secret.",
  },
  hubspot: {
    header: 'X-HubSpot-Signature-v3',
    scheme: 'base64 HMAC-SHA256 of the method, the webhook URL, the raw body and X-HubSpot-Request-Timestamp',
    secret:
      "HubSpot signs with your app's client secret: paste it here. The URL is signed too, so the server's PUBLIC_URL must be the address HubSpot calls.",
  },
  front: {
    header: 'X-Front-Signature',
    scheme: 'base64 HMAC-SHA256 of X-Front-Request-Timestamp, a colon, then the raw body',
    secret: "Front signs with your application's signing key: paste it here as the new secret.",
  },
  helpscout: {
    header: 'X-HelpScout-Signature',
    scheme: 'base64 HMAC-SHA1 of the raw body',
    secret: "Type the same secret key here and in Help Scout's webhook settings.",
  },
  jira: {
    header: 'X-Hub-Signature',
    scheme: 'sha256= followed by the hex HMAC-SHA256 of the raw body',
    secret: "Type the same secret here and in Jira's webhook settings.",
  },
  linear: {
    header: 'Linear-Signature',
    scheme: "hex HMAC-SHA256 of the raw body; the body's webhookTimestamp must be within 60 seconds",
    secret: "Linear makes the secret: copy the webhook's signing secret from Linear and paste it here.",
  },
  github: {
    header: 'X-Hub-Signature-256',
    scheme: 'sha256= followed by the hex HMAC-SHA256 of the raw body',
    secret: "Type the same secret here and in the GitHub webhook's Secret field.",
  },
  salesforce: {
    header: 'x-hub-signature-256',
    scheme: "sha256= followed by the hex of Crypto.generateMac('hmacSHA256', body, secret) in your Apex callout",
    secret: 'Set the secret here and in the callout (or give the connector a token and send Authorization: Bearer T).',
  },
  gorgias: { header: null, scheme: 'no signature of its own', secret: TOKEN_INSTEAD },
  zoho: { header: null, scheme: 'no signature of its own', secret: TOKEN_INSTEAD },
  generic: HUB_SIGNATURE,
};

// The support platforms a connector can be for (docs/tickets.md "Connecting a platform"). `generic`
// auto-detects common field names; `salesforce` means JSON from a Flow/Apex callout (SOAP outbound
// messages are not supported).
export const PLATFORMS = [
  'zendesk',
  'freshdesk',
  'intercom',
  'hubspot',
  'front',
  'helpscout',
  'jira',
  'linear',
  'github',
  'salesforce',
  'gorgias',
  'zoho',
  'generic',
] as const;

export type Platform = (typeof PLATFORMS)[number];

export const isPlatform = (value: string): value is Platform => (PLATFORMS as readonly string[]).includes(value);

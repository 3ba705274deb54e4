// One adapter per support platform (platforms.ts), each falling back to the generic detection.
import type { Platform } from '../platforms.ts';
import { freshdeskAdapter } from './freshdesk.ts';
import { frontAdapter } from './front.ts';
import { genericAdapter } from './generic.ts';
import { githubAdapter } from './github.ts';
import { gorgiasAdapter } from './gorgias.ts';
import { helpscoutAdapter } from './helpscout.ts';
import { hubspotAdapter } from './hubspot.ts';
import { intercomAdapter } from './intercom.ts';
import { jiraAdapter } from './jira.ts';
import { linearAdapter } from './linear.ts';
import { salesforceAdapter } from './salesforce.ts';
import type { AdapterInput, AdapterResult, PlatformAdapter } from './types.ts';
import { zendeskAdapter } from './zendesk.ts';
import { zohoAdapter } from './zoho.ts';

const ADAPTERS: Record<Platform, PlatformAdapter> = {
  zendesk: zendeskAdapter,
  freshdesk: freshdeskAdapter,
  intercom: intercomAdapter,
  hubspot: hubspotAdapter,
  front: frontAdapter,
  helpscout: helpscoutAdapter,
  jira: jiraAdapter,
  linear: linearAdapter,
  github: githubAdapter,
  salesforce: salesforceAdapter,
  gorgias: gorgiasAdapter,
  zoho: zohoAdapter,
  generic: genericAdapter,
};

export const adapterFor = (platform: Platform): PlatformAdapter => {
  // A platform outside the list is a bug in the caller, not a bad body.
  if (!Object.hasOwn(ADAPTERS, platform)) throw new Error(`no ticket adapter for platform "${String(platform)}"`);
  return ADAPTERS[platform];
};

/** The tickets in a webhook body (or an imported item) from `platform`, or why there are none. */
export const extractTickets = (platform: Platform, input: AdapterInput): AdapterResult => adapterFor(platform).extract(input);

export { MAX_TICKETS_PER_BODY, normalisePriority, normaliseStatus, parseTimestamp, stripHtml, toText } from './fields.ts';

// The renewal rules (modules/agent-actions/rules.ts): contracts without auto-renew ending within a
// rule's days propose its action, once per contract end.
import { t } from 'elysia';
import { utcToday } from '../../lib/today.ts';
import { fireRenewalsDue } from '../../modules/agent-actions/rules.ts';
import { defineJobKind } from '../kind.ts';

export const renewalsDueJob = defineJobKind({
  kind: 'actions.renewals-due',
  payload: t.Object({}),
  schedule: { everySeconds: 3600 },
  retry: { maxAttempts: 3 },
  perform: async (db) => ({ fired: await fireRenewalsDue(db, utcToday()) }),
});

// Snoozed agent actions whose snooze ended wait for a decision again (modules/agent-actions/service.ts).
import { t } from 'elysia';
import { wakeSnoozedActions } from '../../modules/agent-actions/service.ts';
import { defineJobKind } from '../kind.ts';

export const wakeActionsJob = defineJobKind({
  kind: 'actions.wake',
  payload: t.Object({}),
  schedule: { everySeconds: 60 },
  retry: { maxAttempts: 3 },
  perform: async (db) => ({ woken: await wakeSnoozedActions(db) }),
});

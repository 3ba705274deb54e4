// Snoozed agent actions whose snooze ended wait for a decision again (modules/agent-actions/service.ts),
// a batch per unit every minute (queue/batches.ts).
import { sweepKind } from '../../../queue/batches.ts';
import { wakeSnoozedActions } from '../service.ts';

export const wakeActionsJob = sweepKind('actions.wake', 'woken', (db, now, limit, settings) =>
  wakeSnoozedActions(db, now, limit, settings.actions),
);

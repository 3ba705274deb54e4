// Agent actions not decided within ACTION_TTL_HOURS expire (modules/agent-actions/service.ts), a
// batch per unit every minute (queue/batches.ts).
import { sweepKind } from '../../../queue/batches.ts';
import { expireActions } from '../service.ts';

export const expireActionsJob = sweepKind('actions.expire', 'expired', expireActions);

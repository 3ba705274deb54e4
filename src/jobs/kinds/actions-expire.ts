// Agent actions not decided within ACTION_TTL_HOURS expire (modules/agent-actions/service.ts).
import { t } from 'elysia';
import { expireActions } from '../../modules/agent-actions/service.ts';
import { defineJobKind } from '../kind.ts';

export const expireActionsJob = defineJobKind({
  kind: 'actions.expire',
  payload: t.Object({}),
  schedule: { everySeconds: 60 },
  retry: { maxAttempts: 3 },
  perform: async (db) => ({ expired: await expireActions(db) }),
});

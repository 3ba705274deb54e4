// Forgets Idempotency-Key answers past their replay window (keys are also reclaimed on use; this
// keeps the table from growing with keys nobody sends again).
import { t } from 'elysia';
import { purgeExpiredIdempotencyKeys } from '../../modules/idempotency/service.ts';
import { defineJobKind } from '../kind.ts';

export const idempotencyPurge = defineJobKind({
  kind: 'idempotency.purge',
  payload: t.Object({}),
  schedule: { everySeconds: 600 },
  retry: { maxAttempts: 3 },
  perform: async (db) => ({ deleted: await purgeExpiredIdempotencyKeys(db) }),
});

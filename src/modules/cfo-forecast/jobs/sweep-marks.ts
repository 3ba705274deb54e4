// Every 30 s: for each organisation with stored month sums or forecast features and customers
// marked since, asks for the debounced job that stores them (a no-op where one is queued already),
// so the stored rows catch up after writes without waiting for a read to find the marks — a large
// import or billing sync would otherwise leave its first reads on the live query. Organisations
// without stored rows (no CFO read yet) are left alone: their marks wait for the first build.
import { Type as t } from '@sinclair/typebox';
import { queryText } from '../../../db/client.ts';
import { defineJobKind } from '../../../queue/job-kind.ts';
import { markDebounced } from '../../../queue/job-queue.ts';
import { monthSumsJob } from '../../cfo-history/jobs/month-sums.ts';
import { FOLD_DEBOUNCE_S } from '../../cfo-history/sums-reader.ts';
import { FEATURES_DEBOUNCE_S } from '../book-reader.ts';
import { forecastFeaturesJob } from './forecast-features.ts';

export const sweepCfoMarksJob = defineJobKind({
  kind: 'cfo.sweep-marks',
  payload: t.Object({}),
  schedule: { everySeconds: 30 },
  retry: { maxAttempts: 3 },
  perform: async (db) => {
    const sums = await queryText<{ org_id: string }>(
      db,
      'select s.org_id from cfo_sums_state s where exists (select 1 from cfo_sums_changes m where m.org_id = s.org_id) order by 1',
      [],
    );
    for (const { org_id: orgId } of sums) await markDebounced(db, monthSumsJob, 'cfo.month-sums', FOLD_DEBOUNCE_S, { orgId });
    const features = await queryText<{ org_id: string; grace_days: number }>(
      db,
      `select s.org_id, s.grace_days from cfo_features_state s
       where exists (select 1 from cfo_feature_changes m where m.org_id = s.org_id) order by 1`,
      [],
    );
    for (const { org_id: orgId, grace_days: graceDays } of features)
      await markDebounced(db, forecastFeaturesJob, 'cfo.forecast-features', FEATURES_DEBOUNCE_S, { orgId, payload: { graceDays } });
    return { sums: sums.length, features: features.length };
  },
});

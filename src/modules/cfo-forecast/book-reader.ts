// Reads the forecast's book from the stored features (stored-features.ts) when they are as of today,
// and asks the job to bring them up to date when they are not or when customers are marked.
import { markDebounced } from '../../queue/job-queue.ts';
import { bookAt, type BookReader } from './forecast.ts';
import { forecastFeaturesJob } from './jobs/forecast-features.ts';
import { featuresStanding, MAX_MARKED_FEATURES, storedBook } from './stored-features.ts';

/** How long after a read that found marks the job runs: a burst of writes makes one. */
export const FEATURES_DEBOUNCE_S = 5;

/** A BookReader over the stored features: the stored book when current, else bookAt's. */
export function storedBooks(): BookReader {
  return async (db, input) => {
    const standing = await featuresStanding(db, { orgId: input.orgId, today: input.day, graceDays: input.graceDays });
    const ask = (delaySeconds: number) =>
      markDebounced(db, forecastFeaturesJob, 'cfo.forecast-features', delaySeconds, {
        orgId: input.orgId,
        payload: { graceDays: input.graceDays },
      });
    if (!standing.current) {
      await ask(0);
      return bookAt(db, input);
    }
    if (standing.marks > 0) await ask(FEATURES_DEBOUNCE_S);
    if (standing.marks > MAX_MARKED_FEATURES) return bookAt(db, input);
    return storedBook(db, { orgId: input.orgId, today: input.day, graceDays: input.graceDays, model: input.model });
  };
}

// How the CFO's stored rows (month sums, forecast features) are brought up to date: part after part,
// each one unit of work (one transaction), until no part is due. The same loop for both stores; each
// store says what one of its parts does.
import { nextSizeByTime } from '../../db/units-of-work.ts';

/** What one part did. */
export interface RefreshPart {
  /** `marking`: customers up to `after` marked, the stored day not moved yet; `marked`: the last of
   * them marked and the stored day moved to today; `folded`: marked customers folded in. */
  step: 'marking' | 'marked' | 'folded';
  customers: number;
  /** Another part is due. */
  more: boolean;
  /** Where the next marking part starts (customer ids after it). */
  after: string | null;
}

/** Runs parts until none is due: 'rebuilt' if they moved the stored day, else 'folded'. */
export async function refreshInParts(part: (after: string | null) => Promise<RefreshPart>): Promise<'folded' | 'rebuilt'> {
  let done: 'folded' | 'rebuilt' = 'folded';
  let after: string | null = null;
  for (;;) {
    const result = await part(after);
    if (result.step === 'marked') done = 'rebuilt';
    if (!result.more) return done;
    after = result.after;
  }
}

/** A job's refresh: folds of `fixedSize` customers, or, without it, sized by time towards
 * `sizing.targetMs` from the parts that had their fill (a last, smaller one says nothing). */
export async function refreshSizedByTime(
  sizing: { targetMs: number; min: number; max: number },
  fixedSize: number | undefined,
  part: (limit: number, after: string | null) => Promise<RefreshPart & { ms: number }>,
): Promise<{ done: 'folded' | 'rebuilt'; parts: number }> {
  let limit = fixedSize ?? sizing.min * 4;
  let parts = 0;
  const done = await refreshInParts(async (after) => {
    const result = await part(limit, after);
    parts++;
    if (fixedSize === undefined && result.step === 'folded' && result.customers === limit) limit = nextSizeByTime(limit, result.ms, sizing);
    return result;
  });
  return { done, parts };
}

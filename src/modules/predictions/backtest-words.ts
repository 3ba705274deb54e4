// What a backtest's figures mean, in words, said once for the CLI and the console: the model's AUC
// against the scorecard's on the same rows, and one sentence per warning. Pure functions of a
// backtest's metrics (no server code), so the console imports them too.

export interface AucFigures {
  auc?: number | null;
  auc_ci95?: [number, number] | null;
  prior_auc?: number | null;
  prior_auc_ci95?: [number, number] | null;
  lost_history?: { contracts: number; with_lost_history: number } | null;
}

const fixed = (x: number) => x.toFixed(3);
export const interval = (ci: [number, number] | null | undefined) => (ci ? `${fixed(ci[0])}–${fixed(ci[1])}` : '—');

/** How the model did against the scorecard (the untrained fixed points) on the same rows; null
 * when there is no AUC to compare (too few churn events). */
export function againstScorecard(m: AucFigures, modelKind: string | null | undefined): string | null {
  if (m.auc === null || m.auc === undefined || m.prior_auc === null || m.prior_auc === undefined) return null;
  const figures = `AUC ${fixed(m.auc)} against the scorecard's ${fixed(m.prior_auc)}`;
  if (modelKind === 'prior' || modelKind === 'prior_recalibrated') {
    return `This model is the scorecard${modelKind === 'prior_recalibrated' ? ', recalibrated,' : ''} (too little churn history to train one): it ranks customers as the scorecard does (${figures}).`;
  }
  if (m.auc <= m.prior_auc)
    return `The trained model did not beat the scorecard on these rows (${figures}): it ranks churners no better than the fixed points.`;
  if (m.auc_ci95 && m.auc_ci95[0] <= m.prior_auc) {
    return `The trained model scored above the scorecard (${figures}), but within this test's uncertainty (95 % interval ${interval(m.auc_ci95)}).`;
  }
  return `The trained model beat the scorecard on these rows (${figures}; 95 % interval ${interval(m.auc_ci95)}).`;
}

/** One sentence explaining a backtest's warning. */
export function explainWarning(warning: string, m: AucFigures): string {
  switch (warning) {
    case 'no_revision_history': {
      const lost = m.lost_history;
      const share = lost ? `${lost.with_lost_history} of ${lost.contracts} contracts` : 'Many contracts';
      return `${share} were changed before revintel recorded them (a cancellation without its notice day, or an amount none of their earlier invoices charged), so this backtest reads their past as their present and may look better than the model will do.`;
    }
    case 'insufficient_events':
      return 'Fewer than 10 churn events in the test rows: too few to measure a ranking, so no AUC is given.';
    default:
      return warning.replace(/_/g, ' ');
  }
}

// The settings running code reads (docs/predictions.md and docs/agent-actions.md → Settings), built
// from the configuration once by whoever starts the work — `serve` for its routes, admin socket and
// embedded units; the worker threads from their init message; the CLI — and passed down as a value:
// the app's modules get it with their deps, a job's handler as `ctx.settings`, a `perform` and every
// unit of work as their last argument (the runner that runs them holds it). Nothing reads settings
// from a process-wide variable, so two apps or loops with different settings can share a process
// (tests do).
import type { Config } from './config.ts';
import { type ActionSettings, actionSettingsOf, DEFAULT_ACTION_SETTINGS } from './modules/agent-actions/settings.ts';
import { DEFAULT_PREDICTION_SETTINGS, type PredictionSettings, predictionSettingsOf } from './modules/predictions/settings.ts';

export interface Settings {
  predictions: PredictionSettings;
  actions: ActionSettings;
}

export const DEFAULT_SETTINGS: Settings = { predictions: DEFAULT_PREDICTION_SETTINGS, actions: DEFAULT_ACTION_SETTINGS };

/** The settings of `config`; `secretKey` when the key in force is not the configured one (the
 * embedded database's key made at first start). */
export const settingsOf = (config: Config, secretKey: string | null = config.secretKey): Settings => ({
  predictions: predictionSettingsOf(config),
  actions: actionSettingsOf(config, secretKey),
});

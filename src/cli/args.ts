// Shared by every sub-command: flag parsing (node:util parseArgs), --help, --json, the settings
// flags (PORT <-> --port), and how failures end the process.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { userInfo } from 'node:os';
import { ConfigError, flagName, loadConfig, SETTING_NAMES, type Config, type SettingName } from '../config.ts';
import { AppError } from '../lib/errors.ts';

export class UsageError extends Error {}

/** The options every database command shares, for its --help. */
export const DATABASE_OPTIONS_HELP = `Options:
  --json               machine-readable output
  --database-url URL   PostgreSQL (default: the embedded database in --data-dir)
  --data-dir DIR       embedded database directory (default ./data)
  -h, --help           this help`;

type Options = NonNullable<ParseArgsConfig['options']>;

const SETTING_FLAGS: Options = Object.fromEntries(SETTING_NAMES.map((name) => [flagName(name), { type: 'string' as const }]));

export interface Command<V> {
  values: V & { json?: boolean; help?: boolean };
  positionals: string[];
  config: () => Config;
  json: boolean;
  /** Prints `data` as JSON with --json, or `human(data)` otherwise. */
  print: <T>(data: T, human: (data: T) => string) => void;
}

export function parseCommand<O extends Options>(argv: string[], options: O, help: string) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...SETTING_FLAGS, ...options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${help}`);
  }
  const values = parsed.values as Record<string, unknown>;
  if (values.help) {
    console.log(help.trim());
    process.exit(0);
  }
  const json = Boolean(values.json);
  const settingFlags: Partial<Record<SettingName, string>> = {};
  for (const name of SETTING_NAMES) {
    const value = values[flagName(name)];
    if (typeof value === 'string') settingFlags[name] = value;
  }
  return {
    values: values as Record<string, string | boolean | undefined>,
    positionals: parsed.positionals,
    json,
    config: () => loadConfig(process.env, settingFlags),
    print<T>(data: T, human: (data: T) => string) {
      console.log(json ? JSON.stringify(data, null, 2) : human(data));
    },
  };
}

/** Who did it, for the audit log. */
export const cliActor = () => `cli:${process.env.SUDO_USER || process.env.USER || userInfo().username}`;

export function requireString(values: Record<string, unknown>, name: string, help: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required\n\n${help}`);
  return value;
}

export function optionalLimit(values: Record<string, unknown>, name: string): number | null | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (raw === 'plan' || raw === 'none' || raw === '') return null; // back to the plan's limit
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new UsageError(`--${name} must be a positive integer (or "plan" to use the plan's limit), got "${raw}"`);
  }
  return Number(raw);
}

/** Ends the process for a failed command: usage and config errors exit 2, the rest 1. */
export function exitWith(error: unknown, json: boolean): never {
  const code = error instanceof UsageError || error instanceof ConfigError ? 2 : 1;
  const message = error instanceof Error ? error.message : String(error);
  if (json) {
    const errorCode = error instanceof AppError ? error.code : error instanceof ConfigError ? 'invalid_config' : error instanceof UsageError ? 'usage' : 'error';
    console.error(JSON.stringify({ success: false, error: message, code: errorCode }));
  } else {
    console.error(`revintel: ${message}`);
  }
  process.exit(code);
}

/** Plain text tables for humans. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : v instanceof Date ? v.toISOString() : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}

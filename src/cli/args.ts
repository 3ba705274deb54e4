// Shared by every sub-command: flag parsing (node:util parseArgs), --help, --json, the settings
// flags (PORT <-> --port), and how failures end the process. Every command's --help is made by
// helpText from its options' specs and the settings table (config.ts), so each option shows its
// description and its default the same way.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { userInfo } from 'node:os';
import { ConfigError, flagName, loadConfig, settingHelp, SETTING_NAMES, type Config, type SettingName } from '../config.ts';
import { AppError } from '../lib/errors.ts';

export class UsageError extends Error {}

/** One option of a command: how it parses, and what its --help says. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's name in the help (`ORG`); a string option without one shows `VALUE`. */
  value?: string;
  description: string;
  /** What holds without the option. */
  default?: string;
}
export type OptionSpecs = Record<string, OptionSpec>;

/** The settings a database command reads: where the database is. */
export const DATABASE_SETTINGS: readonly SettingName[] = ['DATABASE_URL', 'DATA_DIR'];

export interface HelpSpec {
  /** What follows "Usage: " (more lines indented by the caller). */
  usage: string;
  /** What the command does, its sub-commands and their arguments. */
  about?: string;
  options?: OptionSpecs;
  /** Settings the command reads, shown as flags with their variable and default. */
  settings?: readonly SettingName[];
}

const COLUMN = 30;
const WIDTH = 100;

/** `text` wrapped at WIDTH, its lines after the first indented to COLUMN. */
function wrapped(text: string, first: string): string {
  const lines: string[] = [];
  let line = first.length > COLUMN - 2 ? `${first}\n${' '.repeat(COLUMN)}` : first.padEnd(COLUMN);
  let width = line.length - line.lastIndexOf('\n') - 1;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (width > COLUMN && width + 1 + word.length > WIDTH) {
      lines.push(line.trimEnd());
      line = ' '.repeat(COLUMN);
      width = COLUMN;
    }
    const gap = width > COLUMN ? ' ' : '';
    line += gap + word;
    width += gap.length + word.length;
  }
  lines.push(line.trimEnd());
  return lines.join('\n');
}

const optionLine = (name: string, spec: OptionSpec) => {
  const flag = `${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
  return wrapped(`${spec.description}${spec.default !== undefined ? ` (default: ${spec.default})` : ''}`, `  ${flag}`);
};

/** A command's --help: usage, what it does, then every option with its description and default. */
export function helpText(spec: HelpSpec): string {
  const own = Object.entries(spec.options ?? {}).map(([name, option]) => optionLine(name, option));
  const settings = (spec.settings ?? []).map((name) => {
    const setting = settingHelp(name);
    return optionLine(flagName(name), {
      type: 'string',
      value: name,
      description: setting.description.replace(/\.$/, ''),
      default: setting.default,
    });
  });
  const common = [
    optionLine('json', { type: 'boolean', description: 'print the result as JSON (errors too, on stderr)' }),
    optionLine('help', { type: 'boolean', short: 'h', description: 'this help' }),
  ];
  return [
    `Usage: ${spec.usage.trim()}`,
    ...(spec.about ? ['', spec.about.replace(/^\n+|\s+$/g, '')] : []),
    '',
    'Options:',
    ...own,
    ...settings,
    ...common,
    ...(spec.settings && spec.settings.length < SETTING_NAMES.length
      ? ['', 'Every setting of "revintel serve --help" is taken too, as a flag or its variable.']
      : []),
    '',
  ].join('\n');
}

type Options = NonNullable<ParseArgsConfig['options']>;

const SETTING_FLAGS: Options = Object.fromEntries(SETTING_NAMES.map((name) => [flagName(name), { type: 'string' as const }]));

/** parseArgs's own messages quote unevenly (`as in '-- "--frob"`): ours name the option once. */
function usageMessage(error: Error & { code?: string }): string {
  const option = /'(-{1,2}[^'\s<]+)/.exec(error.message)?.[1] ?? 'an option';
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option "${option}" (a value that starts with "-" goes after "--")`;
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
    return /does not take/.test(error.message) ? `option "${option}" takes no value` : `option "${option}" needs a value`;
  return error.message;
}

export interface Command<V> {
  values: V & { json?: boolean; help?: boolean };
  positionals: string[];
  config: () => Config;
  json: boolean;
  /** Prints `data` as JSON with --json, or `human(data)` otherwise. */
  print: <T>(data: T, human: (data: T) => string) => void;
}

export function parseCommand(argv: string[], options: OptionSpecs, help: string) {
  const parsing: Options = Object.fromEntries(
    Object.entries(options).map(([name, spec]) => [name, { type: spec.type, ...(spec.short ? { short: spec.short } : {}) }]),
  );
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...SETTING_FLAGS, ...parsing, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(`${usageMessage(error as Error)}\n\n${help}`);
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
    const errorCode =
      error instanceof AppError
        ? error.code
        : error instanceof ConfigError
          ? 'invalid_config'
          : error instanceof UsageError
            ? 'usage'
            : 'error';
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
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}

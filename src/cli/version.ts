import { VERSION } from '../version.ts';
import { helpText, parseCommand } from './args.ts';

export function versionCommand(argv: string[]) {
  const cmd = parseCommand(argv, {}, helpText({ usage: 'revintel version [--json]', about: 'Prints the version of this binary.' }));
  cmd.print({ version: VERSION, bun: Bun.version }, (v) => `revintel ${v.version} (bun ${v.bun})`);
}

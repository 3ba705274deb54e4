import { VERSION } from '../version.ts';
import { parseCommand } from './args.ts';

export function versionCommand(argv: string[]) {
  const cmd = parseCommand(argv, {}, 'Usage: revintel version [--json]');
  cmd.print({ version: VERSION, bun: Bun.version }, (v) => `revintel ${v.version} (bun ${v.bun})`);
}

// Writes build/console.pack: the console's bundle (src/console, built by Bun.build) as one JSON
// file that src/modules/console/embedded-asset.ts embeds in the binary. Prints its size.
import { mkdirSync } from 'node:fs';
import { buildConsole, bundleSize } from '../src/modules/console/bundle.ts';

export const CONSOLE_PACK_PATH = new URL('../build/console.pack', import.meta.url).pathname;

export async function writeConsolePack(): Promise<void> {
  const bundle = await buildConsole();
  mkdirSync(new URL('../build/', import.meta.url).pathname, { recursive: true });
  await Bun.write(CONSOLE_PACK_PATH, JSON.stringify(bundle));
  const size = bundleSize(bundle);
  console.log(
    `console: ${Object.keys(bundle.assets).join(', ')}: ${(size.raw / 1024).toFixed(1)} KiB, ${(size.gzip / 1024).toFixed(1)} KiB gzipped`,
  );
}

if (import.meta.main) await writeConsolePack();

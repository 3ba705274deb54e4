// The console's bundle: src/console (Preact + uPlot, TSX) built with Bun.build into hashed assets
// and an index.html that names them. `bun run build` writes it to build/console.pack for the binary
// to embed; a server run from source builds it at its first console request (about 100 ms).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface ConsoleFile {
  /** `text/javascript;charset=utf-8`, `text/css;charset=utf-8`. */
  type: string;
  body: string;
}

export interface ConsoleBundle {
  /** The page every console route answers. */
  index: string;
  /** By URL path: `/assets/app-<hash>.js`. */
  assets: Record<string, ConsoleFile>;
}

const SOURCE = new URL('../../console/', import.meta.url).pathname;
const ENTRY = join(SOURCE, 'app.tsx');

/** Whether a file of src/console changed after `since` (ms): a server run from source then builds
 * the console again at the next page request (a few stat calls, on page requests only). */
export function consoleSourceChangedSince(since: number): boolean {
  for (const entry of readdirSync(SOURCE, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && statSync(join(entry.parentPath, entry.name)).mtimeMs > since) return true;
  }
  return false;
}

/** The page: nothing inline (the CSP allows scripts and styles from this origin only). */
function indexHtml(script: string, styles: string[]): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>revintel</title>
<link rel="icon" href="/favicon.ico" sizes="32x32">
${styles.map((href) => `<link rel="stylesheet" href="${href}">`).join('\n')}
<script type="module" src="${script}"></script>
</head>
<body>
<div id="app"><noscript>The revintel console needs JavaScript.</noscript></div>
</body>
</html>
`;
}

export async function buildConsole(): Promise<ConsoleBundle> {
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: 'browser',
    format: 'esm',
    minify: true,
    sourcemap: 'none',
    publicPath: '/assets/',
    naming: { entry: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]' },
    define: { 'process.env.NODE_ENV': '"production"' },
    throw: false,
  });
  if (!result.success) throw new Error(`console build failed: ${result.logs.map((log) => String(log)).join('\n')}`);
  const assets: Record<string, ConsoleFile> = {};
  let script: string | undefined;
  const styles: string[] = [];
  for (const output of result.outputs) {
    const name = output.path.replace(/^.*\//, '');
    const path = `/assets/${name}`;
    const type = name.endsWith('.js') ? 'text/javascript; charset=utf-8' : name.endsWith('.css') ? 'text/css; charset=utf-8' : output.type;
    assets[path] = { type, body: await output.text() };
    if (output.kind === 'entry-point' && name.endsWith('.js')) script = path;
    else if (name.endsWith('.css')) styles.push(path);
  }
  if (!script) throw new Error('console build produced no script');
  return { index: indexHtml(script, styles), assets };
}

/** Bytes of the console's own code, raw and gzipped (docs/console.md). */
export function bundleSize(bundle: ConsoleBundle): { raw: number; gzip: number } {
  let raw = 0;
  let gzip = 0;
  for (const body of [bundle.index, ...Object.values(bundle.assets).map((file) => file.body)]) {
    const bytes = Buffer.from(body);
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip };
}

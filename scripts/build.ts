// bun run build: dist/revintel, one executable with the worker, the migrations, PGlite's wasm,
// an empty-cluster snapshot and the web console inside. Runs from any directory with nothing beside it.
import { writeConsolePack } from './console-pack.ts';
import { ensureSnapshot } from './pgdata-snapshot.ts';

const started = performance.now();
await ensureSnapshot(true);
await writeConsolePack();

const args = [
  'build',
  '--compile',
  // Full --minify breaks Elysia and the bearer plugin (seen here); these two are safe.
  '--minify-whitespace',
  '--minify-syntax',
  '--sourcemap=none',
  '--bytecode',
  // The binary must not pick up a stray .env or bunfig.toml from whatever directory it runs in.
  '--no-compile-autoload-dotenv',
  '--no-compile-autoload-bunfig',
  '--asset=./drizzle',
  // Bun answers a request whose headers pass 16 KiB with a bare 431 before our code sees it: let
  // up to 128 KiB through, so the app refuses a long URL (414) or header (431) in the envelope.
  `--compile-exec-argv=--max-http-header-size=${128 * 1024} --smol`,
  './src/index.ts',
  './src/jobs/worker.ts',
  '--outfile',
  'dist/revintel',
];
const proc = Bun.spawn(['bun', ...args], {
  cwd: new URL('..', import.meta.url).pathname,
  env: { ...process.env, NODE_ENV: 'production' },
  stdout: 'inherit',
  stderr: 'inherit',
});
const code = await proc.exited;
if (code !== 0) process.exit(code);
const size = Bun.file(new URL('../dist/revintel', import.meta.url).pathname).size;
console.log(`dist/revintel: ${(size / 1024 / 1024).toFixed(1)} MiB in ${Math.round(performance.now() - started)} ms`);

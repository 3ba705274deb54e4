// Browser tests of the console: Debian's Chromium driven by playwright-core (no downloaded browser),
// against the server started in-process on a free port, screenshots at two widths in
// test-output/screenshots/ (ignored by git).
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createLogger } from '../../src/lib/log.ts';
import type { Config } from '../../src/config.ts';
import { tempDir, testConfig } from './harness.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
/** CI sets CONSOLE_BROWSER_REQUIRED=1: there a missing browser fails the suite instead of skipping it. */
export const BROWSER_REQUIRED = process.env.CONSOLE_BROWSER_REQUIRED === '1';
export const hasChromium = existsSync(CHROMIUM);

const SCREENSHOTS = new URL('../../test-output/screenshots/', import.meta.url).pathname;
const WORKER_URL = new URL('../../src/jobs/worker.ts', import.meta.url);

/** Flags for this machine's closed network (no Google lookups, no background connections); as
 * root, Chromium needs --no-sandbox. */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
}

export interface ConsoleServer {
  server: RunningServer;
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

/** `revintel serve` in this process (embedded database in a new directory, the worker thread);
 * `overrides`: settings such as a fake platform's base URL. */
export async function startConsoleServer(overrides: Partial<Config> = {}): Promise<ConsoleServer> {
  const root = tempDir('revintel-console-');
  const dataDir = join(root, 'data');
  const config = testConfig({ port: 0, host: '127.0.0.1', dataDir, databaseUrl: null, shutdownTimeoutMs: 2_000, ...overrides });
  const server = await startServer(config, { workerUrl: WORKER_URL, log: createLogger('silent') });
  const url = server.url.href.replace(/\/$/, '');
  return {
    server,
    url,
    dataDir,
    stop: async () => {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

const AXE = new URL('../../node_modules/axe-core/axe.min.js', import.meta.url).pathname;

/** axe-core's WCAG 2.1 A and AA rules (labels, contrast, roles, names) on the page as it is:
 * one line per violation, its rule, and the first elements it names. Run through the DevTools
 * protocol, so the page's CSP (no inline script) does not stop it. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(await Bun.file(AXE).text());
  const violations = await page.evaluate(async () => {
    const { axe, document } = globalThis as unknown as {
      axe: {
        run(context: unknown, options: unknown): Promise<{ violations: { id: string; help: string; nodes: { target: unknown[] }[] }[] }>;
      };
      document: unknown;
    };
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map(
      (v) =>
        `${v.id}: ${v.help} (${v.nodes
          .slice(0, 3)
          .map((n) => JSON.stringify(n.target))
          .join(', ')})`,
    );
  });
  return violations;
}

/** Full-page screenshots at 1280 and 375 px wide: test-output/screenshots/<name>-<width>.png,
 * after checking at each width that the page fits the screen and passes axe (a failure names what). */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const original = page.viewportSize() ?? { width: 1280, height: 800 };
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 800 });
    // Charts follow their container's size in a ResizeObserver: let two frames pass.
    await page.evaluate(() => {
      const { requestAnimationFrame: frame } = globalThis as unknown as { requestAnimationFrame(callback: () => void): number };
      return new Promise<void>((resolve) => frame(() => frame(resolve)));
    });
    // Readable at a phone's width: nothing but a table's own scroll area is wider than the screen.
    const pageWidth = await page.evaluate(
      () => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth,
    );
    if (pageWidth > width) throw new Error(`${name} at ${width} px is ${pageWidth} px wide: something overflows the screen`);
    const violations = await accessibilityViolations(page);
    if (violations.length > 0) throw new Error(`${name} at ${width} px breaks WCAG 2.1 AA rules:\n${violations.join('\n')}`);
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(original);
}

// The console's pages and assets (README "The console"): every client route answers the one page,
// uncached and under a CSP that allows nothing inline or foreign; its hashed assets are cached for
// ever with their content types; nothing about /api changes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { buildConsole, bundleSize, consoleSourceChangedSince } from '../../src/modules/console/bundle.ts';
import { CONSOLE_PAGES, consoleModule } from '../../src/modules/console/index.ts';
import { buildApp, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

describe('the console', () => {
  let database: TestDatabase;
  let built: ReturnType<typeof buildApp>;
  const get = (path: string) => built.app.handle(new Request(`http://localhost${path}`));
  beforeAll(async () => {
    database = await openTestDatabase('embedded');
    built = buildApp(database);
  });
  afterAll(() => database.dispose());

  test('every client route answers index.html, not cached, under a strict CSP', async () => {
    for (const path of [...CONSOLE_PAGES.map((route) => route.path.replace(':id', 'cus_123')), '/settings/api/']) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      const html = await res.text();
      expect(html).toMatch(/<script type="module" src="\/assets\/app-[a-z0-9]+\.js"><\/script>/);
      expect(html).not.toMatch(/<script>|<style>|style="|(src|href)="https?:/);
    }
  });

  test('assets are served with their types and cached for ever; an unknown one is a JSON 404', async () => {
    const html = await (await get('/')).text();
    const script = html.match(/src="(\/assets\/[^"]+\.js)"/)![1]!;
    const style = html.match(/href="(\/assets\/[^"]+\.css)"/)![1]!;
    const js = await get(script);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await js.text()).length).toBeGreaterThan(1000);
    const css = await get(style);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const missing = await get('/assets/app-nope.js');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('not_found');
  });

  test('the API keeps its answers: an unknown /api path is still a JSON 401 without a key', async () => {
    const res = await get('/api/nope');
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain('application/json');
    const outside = await get('/no-such-page');
    expect(outside.status).toBe(404);
    expect(outside.headers.get('content-type')).toContain('application/json');
  });

  test("the console's own code is small (a few hundred KB at most, gzipped)", async () => {
    const size = bundleSize(await buildConsole());
    expect(size.gzip).toBeLessThan(300 * 1024);
  });

  test('run from source, the bundle is made once, and again after a file of src/console changed', async () => {
    let builds = 0;
    let edited = false;
    const made = async () => ({ index: `<p>build ${++builds}</p>`, assets: {} });
    const module = consoleModule(made, () => edited);
    const page = async () => (await module.handle(new Request('http://localhost/cfo'))).text();
    expect(await page()).toBe('<p>build 1</p>');
    expect(await page()).toBe('<p>build 1</p>');
    edited = true;
    expect(await page()).toBe('<p>build 2</p>');
    expect(consoleSourceChangedSince(Date.now() + 60_000)).toBe(false);
    expect(consoleSourceChangedSince(0)).toBe(true);
  });
});

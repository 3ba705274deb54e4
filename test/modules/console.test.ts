// The console's pages and assets (docs/console.md): every client route answers the one page,
// uncached and under a CSP that allows nothing inline or foreign; its hashed assets are cached for
// ever with their content types; nothing about /api changes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { buildConsole, bundleSize, consoleSourceChangedSince } from '../../src/modules/console/bundle.ts';
import { CONSOLE_PAGES, consoleModule, consolePages } from '../../src/modules/console/index.ts';
import { buildApp, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

describe('the console', () => {
  let database: TestDatabase;
  let built: ReturnType<typeof buildApp>;
  const get = (path: string, headers: Record<string, string> = {}) => built.app.handle(new Request(`http://localhost${path}`, { headers }));
  /** What Chromium sends when a page is opened. */
  const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
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

  test('a page the console does not have, opened in a browser, is the console with a 404 (it shows its own "not found")', async () => {
    for (const path of ['/settings', '/login', '/customers/cus_1/nope', '/index.php']) {
      const res = await get(path, { accept: BROWSER_ACCEPT });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(await res.text()).toMatch(/<script type="module" src="\/assets\/app-[a-z0-9]+\.js">/);
    }
    // The API, assets, other methods and clients asking for JSON keep the JSON 404 (or 401, 405).
    const api = await get('/api/nope', { accept: BROWSER_ACCEPT });
    expect(api.headers.get('content-type')).toContain('application/json');
    const asset = await get('/assets/app-nope.js', { accept: BROWSER_ACCEPT });
    expect(asset.status).toBe(404);
    expect(asset.headers.get('content-type')).toContain('application/json');
    const json = await get('/settings', { accept: 'application/json' });
    expect(json.status).toBe(404);
    expect(((await json.json()) as { code: string }).code).toBe('not_found');
    const post = await built.app.handle(new Request('http://localhost/settings', { method: 'POST', headers: { accept: BROWSER_ACCEPT } }));
    expect(post.headers.get('content-type')).toContain('application/json');
  });

  test('/favicon.ico is an icon (32×32, image/x-icon) and the page links it', async () => {
    const res = await get('/favicon.ico');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/x-icon');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const view = new DataView(bytes.buffer);
    // ICONDIR (reserved 0, type 1 = icon, 1 image), then its entry: 32×32 at 32 bits, size and offset.
    expect([view.getUint16(0, true), view.getUint16(2, true), view.getUint16(4, true)]).toEqual([0, 1, 1]);
    expect([bytes[6], bytes[7], view.getUint16(12, true)]).toEqual([32, 32, 32]);
    expect(view.getUint32(14, true) + view.getUint32(18, true)).toBe(bytes.length);
    expect(await (await get('/')).text()).toContain('<link rel="icon" href="/favicon.ico"');
  });

  test("the console's own code is small (a few hundred KB at most, gzipped)", async () => {
    const size = bundleSize(await buildConsole());
    expect(size.gzip).toBeLessThan(300 * 1024);
  });

  test('run from source, the bundle is made once, and again after a file of src/console changed', async () => {
    let builds = 0;
    let edited = false;
    const made = async () => ({ index: `<p>build ${++builds}</p>`, assets: {} });
    const module = consoleModule(consolePages(made, () => edited));
    const page = async () => (await module.handle(new Request('http://localhost/cfo'))).text();
    expect(await page()).toBe('<p>build 1</p>');
    expect(await page()).toBe('<p>build 1</p>');
    edited = true;
    expect(await page()).toBe('<p>build 2</p>');
    expect(consoleSourceChangedSince(Date.now() + 60_000)).toBe(false);
    expect(consoleSourceChangedSince(0)).toBe(true);
  });
});

// The compiled binary against what only a real socket can send: a path as-is with a short Host, a
// body trickled in past the request deadline, a URL and headers past Bun's own 16 KiB limit.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { ensureBinary, runCli, startServe, type ServeProcess } from '../helpers/binary.ts';
import { tempDir } from '../helpers/harness.ts';

let cwd: string;
let server: ServeProcess;
let key: string;

beforeAll(async () => {
  ensureBinary();
  cwd = tempDir('revintel-e2e-');
  server = await startServe({ REQUEST_TIMEOUT_MS: '1500' }, { cwd });
  await runCli(['orgs', 'create', '--name', 'Hard', '--plan', 'enterprise'], {}, { cwd });
  key = (await runCli(['keys', 'create', '--org', 'Hard', '--name', 'e2e', '--json'], {}, { cwd })).json.secret;
}, 180_000);
afterAll(() => {
  server?.kill('SIGKILL');
  rmSync(cwd, { recursive: true, force: true });
});

/** Writes `head`, then each of `trickle` after `everyMs`, and gives back what the server answered. */
async function raw(head: string, trickle: string[] = [], everyMs = 0): Promise<string> {
  const { hostname, port } = new URL(server.url);
  let answer = '';
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data: (_s, data) => {
        answer += new TextDecoder().decode(data);
        if (/\r\n\r\n/.test(answer)) closed();
      },
      close: () => closed(),
    },
  });
  socket.write(head);
  for (const piece of trickle) {
    await Bun.sleep(everyMs);
    if (answer) break;
    socket.write(piece);
  }
  await Promise.race([done, Bun.sleep(10_000)]);
  socket.end();
  return answer;
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
const bodyOf = (answer: string) =>
  JSON.parse(
    answer
      .slice(answer.indexOf('\r\n\r\n') + 4)
      .replace(/^[0-9a-f]+\r\n/, '')
      .replace(/\r\n0\r\n\r\n$/, ''),
  );

describe('the binary at the socket', () => {
  test('a Host of one character and a path taken as-is: the gate judges the path the router serves', async () => {
    const answer = await raw(`GET /ab/api/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(statusOf(answer)).toBe(404);
    expect(bodyOf(answer).error).toBe('Route GET /ab/api/me not found');
  });

  test('Hosts Bun cannot place (none, "x/y", "a b") or URL parsers cannot read ("[", "[::1"): the request is served at its own path', async () => {
    const authorization = `Authorization: Bearer ${key}\r\n`;
    const cases: [string, number][] = [
      [`GET /healthz HTTP/1.0\r\n\r\n`, 200],
      [`GET /api/customers HTTP/1.1\r\nHost: x/y\r\nConnection: close\r\n\r\n`, 401],
      [`GET /api/customers?limit=1 HTTP/1.1\r\nHost: a b\r\n${authorization}Connection: close\r\n\r\n`, 200],
      [`GET /api/customers?limit=1 HTTP/1.1\r\nHost: [::1\r\n${authorization}Connection: close\r\n\r\n`, 200],
      [
        `POST /api/webhooks/tickets?connectorId=con_unknown HTTP/1.1\r\nHost: [\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
        404,
      ],
    ];
    for (const [request, status] of cases) {
      const answer = await raw(request);
      expect(`${request.split('\r\n')[0]} -> ${statusOf(answer)}`).toBe(`${request.split('\r\n')[0]} -> ${status}`);
      expect(bodyOf(answer)).toHaveProperty('success');
    }
  });

  test('an over-limit chunked body under a one-character Host is refused with 413 at once', async () => {
    const head = `PATCH /api/customers/cus_x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunk = `${(64 * 1024).toString(16)}\r\n${'a'.repeat(64 * 1024)}\r\n`;
    const answer = await raw(head, Array(20).fill(chunk), 5);
    expect(statusOf(answer)).toBe(413);
  });

  test('a body trickled in past REQUEST_TIMEOUT_MS is answered 503 in the envelope, not dropped', async () => {
    const head = `POST /api/customers HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`;
    const answer = await raw(head, Array(8).fill(' '), 500);
    expect(statusOf(answer)).toBe(503);
    expect(answer.toLowerCase()).toContain('x-request-id: ');
    expect(answer.toLowerCase()).toContain('retry-after: 5');
  });

  test('a URL past 16 KiB is a 414 and headers past it a 431, both in the envelope', async () => {
    const longUrl = await fetch(`${server.url}/api/customers?q=${'a'.repeat(20_000)}`, { headers: { authorization: `Bearer ${key}` } });
    expect(longUrl.status).toBe(414);
    expect(((await longUrl.json()) as { code: string }).code).toBe('uri_too_long');
    const heavy = await fetch(`${server.url}/healthz`, { headers: { 'x-padding': 'p'.repeat(40_000) } });
    expect(heavy.status).toBe(431);
    expect(((await heavy.json()) as { code: string }).code).toBe('headers_too_large');
  });
});

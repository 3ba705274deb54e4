// Any Host header, sent through a raw socket to the server in-process: the answer is the envelope
// (with X-Request-Id) or Bun's own bare 400 for a request that is not valid HTTP — never a 5xx, and
// nothing the server logs as an error. Bun puts the Host in `request.url` as sent, so a port past
// 65535 or a bracketed literal that is no IPv6 address made every URL parser after it throw.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createLogger } from '../../src/lib/log.ts';
import { tempDir, testConfig } from '../helpers/harness.ts';
import { header, rawRequest, type RawResponse } from '../fuzz/raw-http.ts';

const WORKER_URL = new URL('../../src/jobs/worker.ts', import.meta.url);

let server: RunningServer;
let dir: string;
const errorLines: string[] = [];

beforeAll(async () => {
  dir = tempDir('revintel-host-');
  // At info, as served: the request's log line reads the URL too.
  const config = testConfig({ port: 0, host: '127.0.0.1', dataDir: join(dir, 'data'), shutdownTimeoutMs: 5_000 });
  server = await startServer(config, {
    workerUrl: WORKER_URL,
    log: createLogger('info', {}, (line) => void (line.includes('"level":"error"') && errorLines.push(line))),
  });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** One request as raw bytes; the answer, which must not be a 5xx nor a timeout. */
async function send(head: string, body = ''): Promise<RawResponse> {
  const answer = await rawRequest(server.port, Buffer.from(`${head}\r\n${body}`, 'latin1'));
  if ('error' in answer) throw new Error(`no answer: ${answer.error}`);
  return answer;
}

/** The envelope with its request id, or Bun's own bare 400. */
function expectTruthful(answer: RawResponse): void {
  expect(answer.status).toBeLessThan(500);
  if (answer.status === 400 && header(answer, 'x-request-id') === undefined) return; // Bun's own refusal
  expect(header(answer, 'x-request-id')).toMatch(/^req_/);
  const body = JSON.parse(answer.body.toString('utf8'));
  expect(typeof body.success).toBe('boolean');
  expect('data' in body && 'error' in body).toBe(true);
}

const HOSTS: [string, string | null][] = [
  ['a port past 65535', '127.0.0.1:99999'],
  ['a port of six digits', 'localhost:123456'],
  ['an IPv6 literal with a port past 65535', '[::1]:70000'],
  ['a bracketed literal that is no IPv6 address', '[1:2:3]'],
  ['an IPv6 literal', '[::1]:8080'],
  ['empty', ''],
  ['garbage', '\x01\x7f\xff'],
  ['very long', 'a'.repeat(5_000)],
  ['a port of letters', 'example.com:port'],
];

describe('any Host header (raw socket)', () => {
  for (const [what, host] of HOSTS) {
    for (const [method, target, body] of [
      ['GET', '/healthz?probe=1', ''],
      ['GET', '/api/customers?limit=1', ''],
      ['POST', '/api/webhooks/tickets?connectorId=con_unknown', '{}'],
      ['POST', '/api/webhooks/team-chat?x=1', '{}'],
    ] as const) {
      test(`${what}: ${method} ${target} is answered truthfully`, async () => {
        const lines = errorLines.length;
        const head = `${method} ${target} HTTP/1.1\r\n${host === null ? '' : `Host: ${host}\r\n`}Connection: close\r\n${body ? `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` : ''}`;
        expectTruthful(await send(head, body));
        expect(errorLines.slice(lines)).toEqual([]);
      });
    }
  }

  test('no Host at all (HTTP/1.0) with a query string: served at its path', async () => {
    const answer = await send('GET /healthz?probe=1 HTTP/1.0\r\n');
    expect(answer.status).toBe(200);
    expectTruthful(answer);
  });
});

// The throughput baseline: a plain Bun.serve with nothing in front of it, answering every request
// with the very bytes revintel answers GET /api/me with (same JSON body, same content type, the same
// static rate-limit and request-id headers, so both put the same response on the wire).
//
// No routing, no auth, no rate limiter, no logging, no database: the ceiling that Bun's HTTP server
// reaches on this machine with this load tool. revintel's figures are quoted as a ratio to it.
//
// Usage: bun bench/baseline.ts <response.json>   (PORT and HOST from the environment)
// <response.json> is { "body": string, "headers": Record<string, string> }, written by bench/run.ts
// from a real /api/me answer. The Response is built per request (as a handler would), not a
// pre-built static route, which Bun would serve from a cache.
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: bun bench/baseline.ts <response.json>');
  process.exit(2);
}
const { body, headers } = JSON.parse(readFileSync(file, 'utf8')) as { body: string; headers: Record<string, string> };

const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: process.env.HOST ?? '127.0.0.1',
  development: false,
  fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/readyz') return new Response('ok');
    return new Response(body, { headers });
  },
});

process.on('SIGTERM', () => {
  server.stop(true);
  process.exit(0);
});
process.on('SIGINT', () => {
  server.stop(true);
  process.exit(0);
});

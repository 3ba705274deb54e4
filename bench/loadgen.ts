// Fallback load generator, used by bench/run.ts only when `wrk` is not installed (or with
// --loadgen=bun). Runs as its own process so it does not share an event loop with the
// orchestrator or the server under test.
//
// Closed loop like wrk: N concurrent loops ("connections"), each sending its next request as soon as
// the previous answer's body has been read. Bun's fetch keeps connections alive and pools them per
// host, so N loops keep about N sockets busy. Every request's latency is recorded; p50/p99 are exact
// percentiles over all of them.
//
// It is slower than wrk (JavaScript client on the same 2 cores), so absolute figures are lower; the
// ratio to the baseline stays meaningful because both sides are measured with the same tool.
//
// Usage: bun bench/loadgen.ts --url URL --connections N --duration SECONDS [--header "Name: value"]
// Prints the same `BENCH_JSON {...}` line as bench/wrk-report.lua.
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    url: { type: 'string' },
    connections: { type: 'string', default: '64' },
    duration: { type: 'string', default: '10' },
    header: { type: 'string', multiple: true, default: [] },
  },
});
if (!values.url) {
  console.error('usage: bun bench/loadgen.ts --url URL [--connections N] [--duration S] [--header "Name: value"]');
  process.exit(2);
}

const url = values.url;
const connections = Number(values.connections);
const durationMs = Number(values.duration) * 1000;
const headers: Record<string, string> = {};
for (const h of values.header as string[]) {
  const i = h.indexOf(':');
  if (i > 0) headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
}

// Latencies in microseconds; grown as needed.
let latencies = new Float64Array(1 << 20);
let count = 0;
const errors = { connect: 0, read: 0, write: 0, status: 0, timeout: 0 };

const started = performance.now();
const deadline = started + durationMs;

async function loop() {
  while (performance.now() < deadline) {
    const t0 = performance.now();
    try {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status >= 400) errors.status++;
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') errors.timeout++;
      else errors.connect++;
      continue;
    }
    const t1 = performance.now();
    if (t1 > deadline) break; // only whole requests inside the window count, as with wrk
    if (count === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[count++] = (t1 - t0) * 1000;
  }
}

await Promise.all(Array.from({ length: connections }, loop));
const elapsedUs = (performance.now() - started) * 1000;

const sorted = latencies.subarray(0, count).sort();
const pct = (p: number) => (count ? sorted[Math.min(count - 1, Math.ceil((p / 100) * count) - 1)]! : 0);
console.log(
  'BENCH_JSON ' +
    JSON.stringify({
      requests: count,
      duration_us: Math.round(elapsedUs),
      p50_us: Math.round(pct(50)),
      p99_us: Math.round(pct(99)),
      max_us: Math.round(count ? sorted[count - 1]! : 0),
      errors,
    }),
);
process.exit(0);

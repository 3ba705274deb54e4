-- wrk script for bench/run.ts.
--
-- Sends the Authorization header taken from the BENCH_AUTHORIZATION environment variable (set by
-- run.ts; empty for none), and at the end prints one machine-readable line:
--   BENCH_JSON {"requests":…,"duration_us":…,"p50_us":…,"p99_us":…,"max_us":…,"errors":{…}}
-- Latencies are wrk's per-request latencies in microseconds (closed loop: one request in flight per
-- connection). errors.status counts answers with a status >= 400 (e.g. a 429 from the limiter).

local authorization = os.getenv("BENCH_AUTHORIZATION")
if authorization ~= nil and authorization ~= "" then
  wrk.headers["Authorization"] = authorization
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end

-- wrk script for bench/http_compact_wrk.sh: POSTs the seed 001 compaction
-- request in the file named by $CTXKIT_WRK_BODY (made by
-- bench/make_chat_history.mjs) to the URL wrk is given, and prints a
-- machine-readable summary at the end.

local path = os.getenv("CTXKIT_WRK_BODY")
if path == nil then
  error("set CTXKIT_WRK_BODY to the request body file")
end
local file = assert(io.open(path, "rb"))
local body = file:read("*a")
file:close()

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
if os.getenv("CTXKIT_WRK_TOKEN") ~= nil then
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("CTXKIT_WRK_TOKEN")
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local errors = summary.errors.connect + summary.errors.read +
      summary.errors.write + summary.errors.timeout
  io.write(string.format(
      "summary: requests=%d seconds=%.2f requests_per_second=%.0f " ..
      "p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f " ..
      "non_2xx=%d socket_errors=%d body_bytes=%d\n",
      summary.requests, seconds, summary.requests / seconds,
      latency:percentile(50) / 1000, latency:percentile(90) / 1000,
      latency:percentile(99) / 1000, latency.max / 1000,
      summary.errors.status, errors, #body))
end

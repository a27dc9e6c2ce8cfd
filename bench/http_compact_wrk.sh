#!/usr/bin/env bash
# POST /api/chat/compact (seed 001) with a 100-message history under load
# from wrk on loopback: requests per second and latency
# percentiles of `ctxkit serve`.
#
#   bench/http_compact_wrk.sh [CTXKIT] [DURATION] [THREADS] [CONNECTIONS]
#
# CTXKIT is the program (default build/release/ctxkit), DURATION wrk's -d
# (default 20s, at most 30s), THREADS and CONNECTIONS wrk's -t and -c
# (default 2 and 16). Needs wrk (Debian package wrk) and node.
#
# It writes the request body with bench/make_chat_history.mjs, starts
# `ctxkit serve --listen 127.0.0.1:0 --db <fresh store>` (the port is read
# from "ctxkit serve: listening on http://127.0.0.1:PORT" on its stderr),
# checks one request answers 200 with a compacted history, runs
#   wrk -t2 -c16 -d20s --latency -s bench/http_compact.lua URL
# then stops the server (SIGTERM to its pid) and removes the store. It
# prints wrk's report, a summary line, and the load average before and
# after; it exits 1 when the server fails to start, a request fails, or wrk
# saw errors.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
ctxkit="${1:-$root/build/release/ctxkit}"
duration="${2:-20s}"
threads="${3:-2}"
connections="${4:-16}"

for tool in wrk node curl; do
  command -v "$tool" >/dev/null || { echo "http_compact_wrk: $tool not found" >&2; exit 1; }
done
[ -x "$ctxkit" ] || { echo "http_compact_wrk: no program at $ctxkit" >&2; exit 1; }
seconds="${duration%s}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -gt 30 ] || [ "$seconds" -lt 1 ]; then
  echo "http_compact_wrk: DURATION must be 1s..30s" >&2
  exit 1
fi

work="$(mktemp -d "${CTXKIT_BENCH_DIR:-${TMPDIR:-/tmp}}/ctxkit-wrk-XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

node "$here/make_chat_history.mjs" --messages 100 >"$work/body.json"

"$ctxkit" serve --listen 127.0.0.1:0 --db "$work/db" >"$work/serve.out" 2>"$work/serve.log" &
server_pid=$!
port=""
for _ in $(seq 1 100); do
  port="$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$work/serve.log" | head -n 1)"
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "http_compact_wrk: the server did not start:" >&2
  cat "$work/serve.log" "$work/serve.out" >&2
  exit 1
fi
url="http://127.0.0.1:$port/api/chat/compact"

status="$(curl -sS -o "$work/reply.json" -w '%{http_code}' \
  -H 'Content-Type: application/json' --data-binary @"$work/body.json" "$url")"
if [ "$status" != 200 ] || ! grep -q '"compaction_info"' "$work/reply.json"; then
  echo "http_compact_wrk: a single request failed with HTTP $status:" >&2
  head -c 1000 "$work/reply.json" >&2
  exit 1
fi

echo "program: $ctxkit"
echo "body: $(wc -c <"$work/body.json") bytes, 100 messages; reply: $(wc -c <"$work/reply.json") bytes"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
CTXKIT_WRK_BODY="$work/body.json" wrk -t"$threads" -c"$connections" -d"$duration" \
  --latency -s "$here/http_compact.lua" "$url" | tee "$work/wrk.txt"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

summary="$(grep '^summary:' "$work/wrk.txt")"
rps="$(sed -n 's/.*requests_per_second=\([0-9.]*\).*/\1/p' <<<"$summary")"
p99="$(sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p' <<<"$summary")"
non2xx="$(sed -n 's/.*non_2xx=\([0-9]*\).*/\1/p' <<<"$summary")"
socket_errors="$(sed -n 's/.*socket_errors=\([0-9]*\).*/\1/p' <<<"$summary")"
echo "POST /api/chat/compact, 100 messages: ${rps} requests/s, p99 ${p99} ms (wrk -t$threads -c$connections -d$duration)"
if [ "$non2xx" != 0 ] || [ "$socket_errors" != 0 ]; then
  echo "http_compact_wrk: $non2xx non-2xx responses, $socket_errors socket errors" >&2
  exit 1
fi
if awk -v r="$rps" 'BEGIN { exit !(r >= 2000) }'; then
  echo "target (>= 2,000 requests/s): MET"
else
  echo "target (>= 2,000 requests/s): NOT MET"
fi

#!/bin/sh
# Runs node:test suites of tests/mcp for CTest.
#   run_suite.sh <node or empty> <ctxkit binary> <test file>...
# Exits 77 (the CTest SKIP_RETURN_CODE of these tests) with a visible reason
# when node or the npm packages are missing: `npm ci` in tests/mcp (as
# .ci/run does) installs the locked @modelcontextprotocol/sdk.
set -eu
node=$1
bin=$2
shift 2
cd "$(dirname "$0")"
if [ -z "$node" ] || ! command -v "$node" >/dev/null 2>&1; then
  echo "SKIPPED: node not found (install Node.js 20+ to run the MCP SDK suite)"
  exit 77
fi
if [ ! -f node_modules/@modelcontextprotocol/sdk/package.json ]; then
  echo "SKIPPED: tests/mcp/node_modules is missing; run 'npm ci' in $(pwd)"
  exit 77
fi
CTXKIT_BIN=$bin
export CTXKIT_BIN
exec "$node" --test --test-reporter=spec "$@"

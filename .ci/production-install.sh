#!/usr/bin/env bash
# Proves the production install the README describes: the committed tree in a
# temporary folder, `npm ci --omit=dev`, then `npx paygate serve` started with
# this machine's own Node.js and npm, on the embedded database and, when
# DATABASE_URL_FOR_CHECK is given, on that PostgreSQL database (after
# `npx paygate migrate`). Each must answer /readyz and exit 0 on SIGTERM.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/paygate-production-XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill -KILL -- "-$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "production install: system node $(node --version), npm $(npm --version), in $work"
git -C "$root" archive HEAD | tar -x -C "$work/"
cd "$work"
npm ci --omit=dev --no-audit --no-fund --loglevel=error
if [ -e node_modules/vitest ] || [ -e node_modules/typescript ]; then
  echo "production install: devDependencies were installed" >&2
  exit 1
fi

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

# Starts the given serve command in its own process group, waits for /readyz,
# then sends SIGTERM to the group (as systemd or `docker stop` with an init
# would) and expects the gateway to report a clean stop.
check_serve() {
  local label="$1"
  shift
  local port log="$work/serve-$label.log"
  port="$(free_port)"
  PORT="$port" setsid "$@" >"$log" 2>&1 &
  server_pid=$!
  local ready=""
  for _ in $(seq 1 120); do
    if ready="$(curl -sf "http://127.0.0.1:$port/readyz")"; then break; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    sleep 0.5
  done
  if [ -z "$ready" ]; then
    echo "production install ($label): /readyz never answered 200; output:" >&2
    cat "$log" >&2
    exit 1
  fi
  echo "production install ($label): /readyz -> $ready"
  kill -TERM -- "-$server_pid"
  for _ in $(seq 1 60); do
    pgrep -g "$server_pid" >/dev/null || break
    sleep 0.5
  done
  if pgrep -g "$server_pid" >/dev/null || ! grep -q '^paygate stopped$' "$log"; then
    echo "production install ($label): no clean stop within 30 s of SIGTERM; output:" >&2
    cat "$log" >&2
    exit 1
  fi
  server_pid=""
  echo "production install ($label): stopped cleanly on SIGTERM"
}

# `npx paygate serve` as the README says, and bin/paygate.js started by the
# system Node directly (it hands over to the pinned Node 24 runtime).
PAYGATE_DATA_DIR="$work/data" LOG_LEVEL=warn check_serve embedded-npx npx --no-install paygate serve
PAYGATE_DATA_DIR="$work/data" LOG_LEVEL=warn check_serve embedded-system-node node bin/paygate.js serve

if [ -n "${DATABASE_URL_FOR_CHECK:-}" ]; then
  # A server database needs a root key named by the operator (README, Deploying).
  root_key="$(npx --no-install paygate kms generate-key)"
  DATABASE_URL="$DATABASE_URL_FOR_CHECK" LOG_LEVEL=warn npx --no-install paygate migrate
  PAYGATE_ROOT_KEY="$root_key" DATABASE_URL="$DATABASE_URL_FOR_CHECK" LOG_LEVEL=warn check_serve postgres-npx npx --no-install paygate serve
fi
echo "production install: passed"

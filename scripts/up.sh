#!/usr/bin/env bash
# make up: the dev server (state kept in .baton/temporal.db) and a worker, in the foreground,
# for real use on one machine. Ctrl-C stops both. TEMPORAL_PORT moves the server (default 7233).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

port=${TEMPORAL_PORT:-7233}
mkdir -p .baton
export TEMPORAL_ADDRESS=127.0.0.1:$port

pids=()
trap 'stop_all "${pids[@]}"' EXIT INT TERM

start_temporal .baton/temporal.log --port "$port" --db-filename .baton/temporal.db
pids+=("$TEMPORAL_PID")
sed -n 's/^/  /p' .baton/temporal.log | grep -E 'Temporal server|Web UI' || true

echo "baton-worker: logs follow (server log: .baton/temporal.log). Ctrl-C stops both."
LOG_FORMAT=${LOG_FORMAT:-console} bin/baton-worker &
pids+=("$!")
wait "${pids[1]}"

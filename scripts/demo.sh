#!/usr/bin/env bash
# make demo: a real Temporal server, a baton worker, and a reply through them; then the Web UI.
# BATON_DEMO_PORT moves the server (default 7233; the Web UI is on port + 1000).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

port=${BATON_DEMO_PORT:-7233}
ui_port=$((port + 1000))
dir=.baton/demo
mkdir -p "$dir"
export TEMPORAL_ADDRESS=127.0.0.1:$port
export BATON_STORE=sqlite://$dir/baton.db
export LOG_FORMAT=console

pids=()
trap 'stop_all "${pids[@]}"' EXIT

echo "== Starting the Temporal dev server on $TEMPORAL_ADDRESS (log: $dir/temporal.log)"
start_temporal "$dir/temporal.log" --port "$port" --ui-port "$ui_port"
pids+=("$TEMPORAL_PID")

echo "== Starting baton-worker on task queue ${BATON_TASK_QUEUE:-baton} (log: $dir/worker.log)"
bin/baton-worker >"$dir/worker.log" 2>&1 &
pids+=("$!")

echo "== Asking a worker to answer"
bin/baton ping --timeout 60s

echo
echo "Web UI: http://127.0.0.1:$ui_port/namespaces/default/workflows"
if [[ -t 0 && "${BATON_DEMO_KEEP:-1}" == 1 ]]; then
  echo "The server and the worker keep running so you can look around. Press Ctrl-C to stop."
  wait "${pids[0]}" || true
else
  echo "(Not run from a terminal, so everything stops now: run 'make demo' in a terminal to keep it up.)"
fi

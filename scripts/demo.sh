#!/usr/bin/env bash
# make demo: a real Temporal server, a baton worker, the fake model provider scripted with an
# outage, and what baton makes of each failure; then the Web UI.
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

fake=127.0.0.1:$((port + 2000))
echo
echo "== Starting the fake model provider on $fake (script: scripts/demo-provider.json)"
bin/baton fake-provider --listen "$fake" --script scripts/demo-provider.json >"$dir/fake-provider.log" 2>&1 &
pids+=("$!")
cat >"$dir/openclaw.json5" <<JSON5
// The demo's OpenClaw-shaped config: every provider points at the fake provider.
{
  agents: { defaults: { model: { primary: "openai/gpt-5", fallbacks: ["anthropic/claude-sonnet-4-5"] } } },
  models: { providers: {
    openai: { baseUrl: "http://$fake/p/openai/v1", api: "openai-completions" },
    anthropic: { baseUrl: "http://$fake/p/anthropic", api: "anthropic-messages" },
  } },
}
JSON5
export BATON_CONFIG=$dir/openclaw.json5
echo sk-demo-openai-a | bin/baton auth add --provider openai --id openai:a >/dev/null
echo sk-demo-openai-b | bin/baton auth add --provider openai --id openai:b >/dev/null
echo sk-demo-anthropic | bin/baton auth add --provider anthropic >/dev/null
bin/baton auth list

echo
echo "== One attempt per profile, as failover would see each (the reply workflow that walks the chain comes next)"
for attempt in "openai:a openai/gpt-5" "openai:b openai/gpt-5" "anthropic:default anthropic/claude-sonnet-4-5"; do
  set -- $attempt
  bin/baton auth test "$1" --model "$2" --timeout 5s || true
done

echo
echo "Web UI: http://127.0.0.1:$ui_port/namespaces/default/workflows"
if [[ -t 0 && "${BATON_DEMO_KEEP:-1}" == 1 ]]; then
  echo "The server and the worker keep running so you can look around. Press Ctrl-C to stop."
  wait "${pids[0]}" || true
else
  echo "(Not run from a terminal, so everything stops now: run 'make demo' in a terminal to keep it up.)"
fi

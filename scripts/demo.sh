#!/usr/bin/env bash
# make demo: a real Temporal server, a baton worker, the fake model provider scripted with an
# outage of the primary model, and replies that fail over through it; then the Web UI.
# BATON_DEMO_PORT moves the server (default 7233; the Web UI is on port + 1000, the fake
# provider on port + 2000, baton serve and its operator page on port + 3000).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

port=${BATON_DEMO_PORT:-7233}
ui_port=$((port + 1000))
fake=127.0.0.1:$((port + 2000))
dir=.baton/demo
rm -rf "$dir"
mkdir -p "$dir"
export TEMPORAL_ADDRESS=127.0.0.1:$port
export BATON_STORE=sqlite://$dir/baton.db
export BATON_CONFIG=$dir/openclaw.json5
export LOG_FORMAT=console

pids=()
trap 'stop_all "${pids[@]}"' EXIT

echo "== Starting the Temporal dev server on $TEMPORAL_ADDRESS (log: $dir/temporal.log)"
start_temporal "$dir/temporal.log" --port "$port" --ui-port "$ui_port"
pids+=("$TEMPORAL_PID")

echo "== Starting the fake model provider on $fake, scripted by scripts/demo-provider.json:"
echo "   openai/gpt-5 rate-limits key openai:a and cuts the stream of key openai:b; anthropic answers"
bin/baton fake-provider --listen "$fake" --script scripts/demo-provider.json >"$dir/fake-provider.log" 2>&1 &
pids+=("$!")
cat >"$BATON_CONFIG" <<JSON5
// The demo's OpenClaw-shaped config: every provider points at the fake provider.
{
  agents: { defaults: { model: { primary: "openai/gpt-5", fallbacks: ["anthropic/claude-sonnet-4-5"] } } },
  models: { providers: {
    openai: { baseUrl: "http://$fake/p/openai/v1", api: "openai-completions" },
    anthropic: { baseUrl: "http://$fake/p/anthropic", api: "anthropic-messages" },
  } },
}
JSON5
echo sk-demo-openai-a | bin/baton auth add --provider openai --id openai:a >/dev/null
echo sk-demo-openai-b | bin/baton auth add --provider openai --id openai:b >/dev/null
echo sk-demo-anthropic | bin/baton auth add --provider anthropic >/dev/null

echo "== Starting baton-worker on task queue ${BATON_TASK_QUEUE:-baton} (log: $dir/worker.log)"
bin/baton-worker >"$dir/worker.log" 2>&1 &
pids+=("$!")
bin/baton ping --timeout 60s
serve=127.0.0.1:$((port + 3000))
BATON_WEB_UI=http://127.0.0.1:$ui_port bin/baton serve --listen "$serve" >"$dir/serve.log" 2>&1 &
pids+=("$!")
echo "== baton serve on http://$serve/v1; the operator page: http://$serve/ui/ (open it now: the outage happens on it)"

echo
echo "== A reply in session 'demo', streamed as it comes: the primary's first key is rate-limited, its"
echo "   second key's stream is cut mid-answer, and the fallback continues the answer where it stopped"
bin/baton reply --session demo "Hello?"
echo
echo "== The next turn sticks to the fallback (no notice, no retry of the broken primary)"
bin/baton reply --session demo "Still there?"
echo
echo "== The keys now (the rate-limited one cools down for 1 minute, for that model only)"
bin/baton auth list

echo
echo "== Five minutes later the primary is tried again; played here on a virtual clock (baton simulate):"
bin/baton simulate --brief testsuite/scenarios/public/01-rate-limit-rotate-fallback-recover.json

echo
echo "Web UI: http://127.0.0.1:$ui_port/namespaces/default/workflows (each reply is a workflow; its history shows every attempt)"
if [[ -t 0 && "${BATON_DEMO_KEEP:-1}" == 1 ]]; then
  echo "The server, the worker and the fake provider keep running so you can look around. Press Ctrl-C to stop."
  wait "${pids[0]}" || true
else
  echo "(Not run from a terminal, so everything stops now: run 'make demo' in a terminal to keep it up.)"
fi

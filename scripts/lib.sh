# Shared by demo.sh and up.sh: start bin/temporal-dev and wait until it serves, or say why not.

# start_temporal LOG ARGS...: starts the dev server in the background, sets TEMPORAL_PID. It runs
# in a session of its own, so that a Ctrl-C on the terminal reaches the worker only: stop_all
# then stops the server after the worker has drained (a worker reporting a finished attempt
# must find its server there).
start_temporal() {
  local log=$1; shift
  setsid bin/temporal-dev "$@" >"$log" 2>&1 &
  TEMPORAL_PID=$!
  for _ in $(seq 1 600); do
    if ! kill -0 "$TEMPORAL_PID" 2>/dev/null; then
      echo "The Temporal dev server stopped at start:" >&2
      tail -n 20 "$log" >&2
      return 1
    fi
    if grep -q '^Temporal server:' "$log"; then
      return 0
    fi
    sleep 0.1
  done
  echo "The Temporal dev server did not start within 60 s; its log is $log" >&2
  return 1
}

# stop_all PIDS...: interrupts the processes last started first, each after the one before has
# ended: the worker and serve drain before the server they report to stops.
stop_all() {
  local i
  for ((i = $# ; i >= 1 ; i--)); do
    kill -INT "${!i}" 2>/dev/null || true
    wait "${!i}" 2>/dev/null || true
  done
}

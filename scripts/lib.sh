# Shared by demo.sh and up.sh: start bin/temporal-dev and wait until it serves, or say why not.

# start_temporal LOG ARGS...: starts the dev server in the background, sets TEMPORAL_PID.
start_temporal() {
  local log=$1; shift
  bin/temporal-dev "$@" >"$log" 2>&1 &
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

# stop_all PIDS...: interrupts each process and waits for it.
stop_all() {
  local pid
  for pid in "$@"; do kill -INT "$pid" 2>/dev/null || true; done
  for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}

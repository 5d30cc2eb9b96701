#!/usr/bin/env bash
# Prints the URL of a PostgreSQL database for baton's store tests, installing PostgreSQL from
# Debian's packages and starting it on 127.0.0.1 when needed (root only). Idempotent.
# BATON_TEST_POSTGRES, when set, is printed as it is.
# `test-postgres.sh restart` restarts that PostgreSQL (baton chaos's fault; root only).
set -euo pipefail
if [[ "${1:-}" == restart ]]; then
  port=${BATON_TEST_POSTGRES_PORT:-5432}
  read -r version name < <(pg_lsclusters --no-header | awk -v p="$port" '$3 == p {print $1 " " $2; exit}')
  if [[ -z "${version:-}" ]]; then
    echo "test-postgres: no cluster on port $port to restart" >&2
    exit 1
  fi
  pg_ctlcluster "$version" "$name" restart -m fast >&2
  exit 0
fi
if [[ -n "${BATON_TEST_POSTGRES:-}" ]]; then
  echo "$BATON_TEST_POSTGRES"
  exit 0
fi
port=${BATON_TEST_POSTGRES_PORT:-5432}
url="postgres://baton:baton@127.0.0.1:$port/baton_test?sslmode=disable"

say() { echo "test-postgres: $*" >&2; }
as_postgres() { runuser -u postgres -- "$@"; }

if ! command -v pg_lsclusters >/dev/null 2>&1; then
  if [[ $(id -u) != 0 ]]; then
    say "PostgreSQL is not installed and this is not root: install postgresql, or set BATON_TEST_POSTGRES"
    exit 1
  fi
  say "installing PostgreSQL from Debian's packages"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi

cluster=$(pg_lsclusters --no-header | awk -v p="$port" '$3 == p {print $1 " " $2; exit}')
if [[ -z "$cluster" ]]; then
  version=$(ls /usr/lib/postgresql | sort -n | tail -1)
  say "creating cluster $version/baton on port $port"
  pg_createcluster --port "$port" --pgoption max_connections=300 "$version" baton >&2
  cluster="$version baton"
fi
read -r version name <<<"$cluster"
if ! pg_lsclusters --no-header | awk -v p="$port" '$3 == p && $4 == "online" {found=1} END {exit !found}'; then
  say "starting cluster $version/$name"
  pg_ctlcluster "$version" "$name" start >&2
fi
for _ in $(seq 1 50); do
  as_postgres psql -p "$port" -qtAc 'SELECT 1' >/dev/null 2>&1 && break
  sleep 0.2
done
# baton chaos runs two Temporal nodes, two workers and two serve against it: room for their pools
# (Debian's own cluster has 100).
if (($(as_postgres psql -p "$port" -qtAc 'SHOW max_connections') < 300)); then
  say "raising max_connections to 300 (restarts cluster $version/$name)"
  as_postgres psql -p "$port" -qc 'ALTER SYSTEM SET max_connections = 300' >&2
  pg_ctlcluster "$version" "$name" restart >&2
  for _ in $(seq 1 50); do
    as_postgres psql -p "$port" -qtAc 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.2
  done
fi
if [[ $(as_postgres psql -p "$port" -qtAc "SELECT 1 FROM pg_roles WHERE rolname = 'baton'") != 1 ]]; then
  as_postgres psql -p "$port" -qc "CREATE ROLE baton LOGIN SUPERUSER PASSWORD 'baton'" >&2
fi
if [[ $(as_postgres psql -p "$port" -qtAc "SELECT 1 FROM pg_database WHERE datname = 'baton_test'") != 1 ]]; then
  as_postgres psql -p "$port" -qc "CREATE DATABASE baton_test OWNER baton" >&2
fi
echo "$url"

#!/usr/bin/env bash
# Print the SQLAlchemy URL of a PostgreSQL server for the test suite, starting a private one
# (trust auth, 127.0.0.1:55432, data under $1) when none answers on 127.0.0.1:5432.
set -euo pipefail
statedir=${1:-.state}
if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
  exit 0
fi
port=55432
if ! pg_isready -q -h 127.0.0.1 -p "$port" 2>/dev/null; then
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  data=$(realpath -m "$statedir/pgdata")
  mkdir -p "$data"
  run() { if [ "$(id -u)" = 0 ]; then chown -R postgres: "$data"; su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
  [ -f "$data/PG_VERSION" ] || run "$bin/initdb -A trust -U postgres -D $data" >/dev/null
  run "$bin/pg_ctl -D $data -l $data/server.log -o '-p $port -k /tmp -c listen_addresses=127.0.0.1' -w start" >/dev/null
fi
echo "postgresql+psycopg://postgres@127.0.0.1:$port/postgres"

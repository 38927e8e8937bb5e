#!/bin/sh
# Initializes the cluster on first start (UTF-8, C.UTF-8 collation, as docs/operators.md,
# "Postgres" asks), then runs the server in the foreground as PID 1.
set -eu
user=${POSTGRES_USER:-postgres}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password=${POSTGRES_PASSWORD:-}
  [ -n "${POSTGRES_PASSWORD_FILE:-}" ] && password=$(cat "$POSTGRES_PASSWORD_FILE")
  [ -n "$password" ] || { echo "postgres: set POSTGRES_PASSWORD_FILE (or POSTGRES_PASSWORD)" >&2; exit 64; }
  pwfile=$(mktemp)
  printf '%s\n' "$password" > "$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  db=${POSTGRES_DB:-$user}
  if [ "$db" != postgres ]; then
    # A server on the socket alone, for as long as it takes to create the database.
    pg_ctl -D "$PGDATA" -w -o "-c listen_addresses='' -c unix_socket_directories=/var/run/postgresql" start >/dev/null
    psql -h /var/run/postgresql -U "$user" -d postgres -q -c "create database \"$db\""
    pg_ctl -D "$PGDATA" -w -m fast stop >/dev/null
  fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/var/run/postgresql -c wal_init_zero=off "$@"

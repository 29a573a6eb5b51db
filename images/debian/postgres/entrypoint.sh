#!/bin/sh
# Initialise $PGDATA on first start (as the postgres account), accept connections from the stack network, run the
# server in the foreground as PID 1's child-free replacement (exec), so `docker stop` reaches it.
set -eu
: "${PGDATA:=/var/lib/postgresql/data/pgdata}"
auth="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
mkdir -p "$PGDATA"
chown -R postgres:postgres "$(dirname "$PGDATA")"
chmod 0700 "$PGDATA"
as_pg() { setpriv --reuid postgres --regid postgres --init-groups -- "$@"; }
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ "$auth" != trust ] && [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "ingestbench-postgres: set POSTGRES_HOST_AUTH_METHOD=trust or POSTGRES_PASSWORD" >&2; exit 2
  fi
  pwfile=""
  if [ -n "${POSTGRES_PASSWORD:-}" ]; then
    pwfile="$(mktemp)"; printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"; chown postgres "$pwfile"
  fi
  as_pg initdb -D "$PGDATA" -U postgres -A "$auth" ${pwfile:+--pwfile="$pwfile"} >/dev/null
  [ -n "$pwfile" ] && rm -f "$pwfile"
  printf "listen_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
  printf 'host all all 0.0.0.0/0 %s\n' "$auth" >>"$PGDATA/pg_hba.conf"
fi
exec setpriv --reuid postgres --regid postgres --init-groups -- postgres -D "$PGDATA" "$@"

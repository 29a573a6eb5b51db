#!/bin/sh
# Run the server in the foreground as the clickhouse account, data in /var/lib/clickhouse (a volume or tmpfs).
# CLICKHOUSE_PASSWORD: the `default` user's password (the catalog always passes one: plugins/sinks/clickhouse/image.ts),
# written as its SHA-256 only (password_sha256_hex, which 18.16 reads; the package's empty <password> removed) into a
# 0600 users.d file, never echoed; without it the package's passwordless default user stays (older harness builds).
set -eu
mkdir -p /var/lib/clickhouse /var/log/clickhouse-server /etc/clickhouse-server/users.d
chown -R clickhouse:clickhouse /var/lib/clickhouse /var/log/clickhouse-server
if [ -n "${CLICKHOUSE_PASSWORD:-}" ]; then
  hash="$(printf '%s' "$CLICKHOUSE_PASSWORD" | sha256sum | cut -d' ' -f1)"
  users=/etc/clickhouse-server/users.d/ingestbench-password.xml
  ( umask 077; printf '<yandex><users><default><password remove="remove"/><password_sha256_hex>%s</password_sha256_hex></default></users></yandex>\n' "$hash" >"$users" )
  chown clickhouse:clickhouse "$users"
fi
unset CLICKHOUSE_PASSWORD
exec setpriv --reuid clickhouse --regid clickhouse --init-groups -- clickhouse-server --config-file=/etc/clickhouse-server/config.xml "$@"

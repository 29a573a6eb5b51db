#!/bin/sh
# Run the server in the foreground as the clickhouse account, data in /var/lib/clickhouse (a volume or tmpfs).
set -eu
mkdir -p /var/lib/clickhouse /var/log/clickhouse-server
chown -R clickhouse:clickhouse /var/lib/clickhouse /var/log/clickhouse-server
exec setpriv --reuid clickhouse --regid clickhouse --init-groups -- clickhouse-server --config-file=/etc/clickhouse-server/config.xml "$@"

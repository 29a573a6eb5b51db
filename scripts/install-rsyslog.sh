#!/usr/bin/env bash
# Unpack Debian's rsyslog and rsyslog-pgsql into a prefix (default /opt/ingestbench/rsyslog), beside syslog-ng.
#
# Why not `apt-get install rsyslog`: Debian's rsyslog and syslog-ng-core both provide and conflict on
# system-log-daemon, so apt removes one to install the other. ingestbench runs both collectors as plain processes
# (never as the system's log daemon), so rsyslog is unpacked rather than installed: its shared-library dependencies
# come from apt, its binary and modules from the pinned packages' own files. plugins/collectors/rsyslog/component.ts finds
# <prefix>/usr/sbin/rsyslogd and passes `-M <prefix>/usr/lib/<multiarch>/rsyslog`.
set -euo pipefail
prefix="${1:-${INGESTBENCH_RSYSLOG_PREFIX:-/opt/ingestbench/rsyslog}}"
export DEBIAN_FRONTEND=noninteractive
# the libraries rsyslogd, imtcp, mmpstrucdata, impstats and ompgsql link against (Depends of both packages)
apt-get install -y -qq -o DPkg::Lock::Timeout=300 libestr0 libfastjson4 liblognorm5 libsystemd0 libuuid1 libzstd1 zlib1g libpq5 >/dev/null
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root rsyslog rsyslog-pgsql)
rm -rf "$prefix"
mkdir -p "$prefix"
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
"$prefix/usr/sbin/rsyslogd" -v | head -n 1

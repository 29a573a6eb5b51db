#!/usr/bin/env bash
# The Debian packages the tests and the local benchmarks run for real, installed without starting their daemons.
#
# iproute2: ip netns, veth, tc; util-linux: setpriv, mount; procps: ps/pgrep for teardown checks; chromium: the
# report's browser test (driven by playwright-core, never a downloaded browser); clickhouse-server: the ClickHouse
# sink; syslog-ng with its sql() and http() modules, its examples module (example-msg-generator(), the collector's own
# load of `generator: none`) and the PostgreSQL libdbi driver: the collector pipelines;
# rsyslog: unpacked beside syslog-ng (scripts/install-rsyslog.sh says why); docker.io (Engine 20.10) and debootstrap:
# the docker platform's engine (started by scripts/docker-engine.sh, never by the package) and the base of the
# Debian-built images (scripts/build-images.sh).
#
# The packages' own daemons are not what ingestbench runs (it starts its own servers inside cgroups and namespaces),
# so none may start at install: invoke-rc.d and deb-systemd-invoke ask /usr/sbin/policy-rc.d, and exit 101 means
# "action forbidden". A policy-rc.d already present (container images ship one) is left as it is; one this script
# creates is removed when it ends. Nothing is stopped by name afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# ingestbench: no package daemon starts during apt-get install\nexit 101\n' >"$policy"
  chmod 0755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
apt-get install -y -qq -o DPkg::Lock::Timeout=300 iproute2 util-linux procps git ca-certificates chromium \
  clickhouse-server clickhouse-client syslog-ng-core syslog-ng-mod-sql syslog-ng-mod-http syslog-ng-mod-examples libdbd-pgsql \
  docker.io debootstrap >/dev/null
# gcc and libc6-dev: the cgo build of VictoriaLogs (scripts/build-victorialogs.sh: gozstd, as upstream's release build)
apt-get install -y -qq -o DPkg::Lock::Timeout=300 gcc libc6-dev >/dev/null
# Java 17 and Maven: scripts/build-opensearch.sh builds the OpenSearch sink's launcher from Maven Central
apt-get install -y -qq -o DPkg::Lock::Timeout=300 openjdk-17-jdk-headless maven >/dev/null
bash scripts/install-rsyslog.sh

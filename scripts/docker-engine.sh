#!/usr/bin/env bash
# A Docker engine of ingestbench's own, beside anything else on the machine: Debian's docker.io (Engine 20.10) with
# its own data root, exec root, socket and pid file, an address block of its own, and the host's firewall left alone.
#
#   bash scripts/docker-engine.sh start    # install docker.io if absent, start dockerd, wait for it; prints the DOCKER_HOST line
#   bash scripts/docker-engine.sh stop     # stop the dockerd this script started (by the pid in its pid file), and its containers
#   bash scripts/docker-engine.sh status   # exit 0 when it answers
#   eval "$(bash scripts/docker-engine.sh env)"   # DOCKER_HOST for this shell
#
# Why these flags:
# - --iptables=false --ip-masq=false: dockerd would otherwise rewrite the host's nat/filter tables (and set the
#   FORWARD policy to DROP), which breaks the local platform's veth links between network namespaces
#   (infra/local/netns.ts). Containers here talk over user-defined bridges and 127.0.0.1-published ports only.
# - --bip and --default-address-pool: the engine's bridges take addresses from 10.215.0.0/16, ingestbench's own
#   block beside the local platform's 10.213/10.214 (infra/local/netns.ts), never a range someone else uses.
# - the data root, exec root, socket and pid file under /var/lib/ingestbench and /run/ingestbench: a system docker
#   (if any) is neither used nor disturbed, and `stop` ends only the daemon whose pid this script recorded.
# Images are built from Debian packages by scripts/build-images.sh (no image registry is needed).
set -euo pipefail

DATA_ROOT="${INGESTBENCH_DOCKER_DATA_ROOT:-/var/lib/ingestbench/docker}"
RUN_DIR="${INGESTBENCH_DOCKER_RUN_DIR:-/run/ingestbench}"
SOCK="$RUN_DIR/docker.sock"
PIDFILE="$RUN_DIR/dockerd.pid"
LOG="$RUN_DIR/dockerd.log"
POOL="${INGESTBENCH_DOCKER_POOL:-10.215.0.0/16}"
BIP="${INGESTBENCH_DOCKER_BIP:-10.215.255.1/24}"
export DOCKER_HOST="unix://$SOCK"

answers() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

running_pid() {
  [ -s "$PIDFILE" ] || return 1
  local pid; pid="$(cat "$PIDFILE")"
  [ -d "/proc/$pid" ] && grep -q dockerd "/proc/$pid/comm" 2>/dev/null && echo "$pid"
}

start() {
  if ! command -v dockerd >/dev/null 2>&1; then
    # the package's own service must not start (a policy-rc.d denies it; scripts/install-system-packages.sh says why)
    local policy=/usr/sbin/policy-rc.d created=0
    if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod 0755 "$policy"; created=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 docker.io >/dev/null
    [ "$created" = 1 ] && rm -f "$policy"
  fi
  if running_pid >/dev/null && answers; then echo "export DOCKER_HOST=$DOCKER_HOST"; return 0; fi
  mkdir -p "$DATA_ROOT" "$RUN_DIR"
  rm -f "$SOCK"
  # setsid: the daemon outlives this script's shell and is not in its process group (a Ctrl-C of a caller does not
  # reach it); it is stopped by `stop`, by pid.
  setsid dockerd --data-root "$DATA_ROOT" --exec-root "$RUN_DIR/exec" --pidfile "$PIDFILE" -H "$DOCKER_HOST" \
    --iptables=false --ip-masq=false --bip "$BIP" --default-address-pool "base=$POOL,size=24" \
    --log-level warn >"$LOG" 2>&1 </dev/null &
  for _ in $(seq 1 120); do
    if answers; then echo "export DOCKER_HOST=$DOCKER_HOST"; return 0; fi
    sleep 0.5
  done
  echo "docker-engine: dockerd did not answer on $SOCK within 60 s; its log ($LOG):" >&2
  tail -n 20 "$LOG" >&2 || true
  return 1
}

stop() {
  local pid
  if ! pid="$(running_pid)"; then echo "docker-engine: not running (no live pid in $PIDFILE)"; return 0; fi
  # containers first (ours: this engine runs nothing else), then the daemon by its pid
  docker ps -q | xargs -r docker rm -f >/dev/null 2>&1 || true
  kill -TERM "$pid"
  for _ in $(seq 1 60); do [ -d "/proc/$pid" ] || { echo "docker-engine: stopped (pid $pid)"; return 0; }; sleep 0.5; done
  kill -KILL "$pid" 2>/dev/null || true
  echo "docker-engine: killed (pid $pid did not stop within 30 s)"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    # said on stderr: callers (.ci/run) test the exit status
    if answers; then echo "docker-engine: answering at $DOCKER_HOST" >&2
    else echo "docker-engine: not running (no answer at $DOCKER_HOST; start it: bash scripts/docker-engine.sh start)" >&2; exit 1
    fi ;;
  env) echo "export DOCKER_HOST=$DOCKER_HOST" ;;
  *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac

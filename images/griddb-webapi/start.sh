#!/bin/bash
# Entry point of ingestbench/griddb-webapi: one GridDB node, as a one-node cluster (FIXED_LIST), and the GridDB Web
# API (griddb/webapi) in front of it, in one container that ends when either of them ends.
#
#   start.sh          write the config (below); start the node (gs_startnode -w) and form the cluster
#                     (gs_joincluster -w); start the Web API; log "ready" once its checkConnection answers 200; then
#                     watch both: when one dies the other is stopped and the script exits 1. SIGTERM/SIGINT (docker
#                     stop): the Web API is stopped, then the cluster and the node (gs_stopcluster, gs_stopnode), exit 0.
#   start.sh render   only write the config files, then exit (the image build and the tests run it)
#   start.sh check    exit 0 when the Web API answers GET .../dbs/public/checkConnection with 200 (HEALTHCHECK)
#
# Env: the catalog's griddb entry (infra/catalog.ts) sets the first three.
#   GRIDDB_CLUSTER_NAME   cluster name (default myCluster): gs_cluster.json clusterName and repository.json name; the
#                         harness addresses /griddb/v2/<name>/... (sink param `cluster`). [A-Za-z0-9_]+ only: the
#                         Web API refuses names with '-', '.', '/' or '='.
#   GRIDDB_USERNAME, GRIDDB_PASSWORD   an existing administrator (admin or system, the package's) and the password
#                         gs_passwd gives it before the node starts (default admin / admin)
#   GRIDDB_NODE_ADDRESS   the node's address in the FIXED_LIST member list and repository.json (default: the first
#                         address `hostname -I` prints, the container's on its network, the VM's private one on azure)
#   GRIDDB_WEBAPI_PORT    Web API port (default 8081, the Web API reference's default)
#   GRIDDB_WEBAPI_MAX_REQUEST_MB   maxRequestSize, MB, 1..2048 (default 20, the reference's default): one row
#                         registration request above it is refused, so it caps a collector's chunk
#   GRIDDB_WEBAPI_HEAP    the Web API's -Xmx. Default: 1024m (griddb/webapi's systemd unit), lowered under a
#                         container memory cap to a quarter of it (at least 256m), so the node's own store memory
#                         (gs_node.json storeMemoryLimit, left at the package's value) fits beside it: 512m under 2 GiB
#   GS_HOME (/var/lib/gridstore), GS_WEBAPI_HOME (/opt/griddb-webapi), TEMPLATE_DIR (the directory of this script),
#   CGROUP_ROOT (/sys/fs/cgroup: memory.max on cgroup v2, memory/memory.limit_in_bytes on v1)
# Bad values fail before anything starts, naming the variable.
set -euo pipefail

GS_HOME=${GS_HOME:-/var/lib/gridstore}
GS_WEBAPI_HOME=${GS_WEBAPI_HOME:-/opt/griddb-webapi}
TEMPLATE_DIR=${TEMPLATE_DIR:-$(dirname "$(readlink -f "$0")")}
export GS_HOME GS_WEBAPI_HOME

cluster=${GRIDDB_CLUSTER_NAME:-myCluster}
user=${GRIDDB_USERNAME:-admin}
password=${GRIDDB_PASSWORD-admin} # set but empty is refused (validate)
webapi_port=${GRIDDB_WEBAPI_PORT:-8081}
max_request_mb=${GRIDDB_WEBAPI_MAX_REQUEST_MB:-20}
heap=${GRIDDB_WEBAPI_HEAP:-}
CGROUP_ROOT=${CGROUP_ROOT:-/sys/fs/cgroup}

log() { echo "griddb-webapi: $*" >&2; }
fail() {
  log "$*"
  exit 1
}

# The container's memory cap in MiB (cgroup v2, else v1), or nothing when uncapped.
memory_cap_mib() {
  local v=
  if [ -r "$CGROUP_ROOT/memory.max" ]; then
    v=$(cat "$CGROUP_ROOT/memory.max")
  elif [ -r "$CGROUP_ROOT/memory/memory.limit_in_bytes" ]; then
    v=$(cat "$CGROUP_ROOT/memory/memory.limit_in_bytes")
  fi
  # "max" (v2) or the page-rounded LONG_MAX (v1, ~8 EiB) mean no cap
  if [[ $v =~ ^[0-9]+$ ]] && ((${#v} < 19)); then echo $((v / 1048576)); fi
}

validate() {
  [[ $cluster =~ ^[A-Za-z0-9_]+$ ]] || fail "GRIDDB_CLUSTER_NAME='$cluster': only letters, digits and _ (the Web API refuses '-', '.', '/', '=')"
  [[ $user =~ ^[A-Za-z0-9_#]+$ ]] || fail "GRIDDB_USERNAME='$user': not a GridDB user name"
  [ -n "$password" ] || fail "GRIDDB_PASSWORD is empty"
  [[ $webapi_port =~ ^[1-9][0-9]{0,4}$ ]] && ((webapi_port <= 65535)) || fail "GRIDDB_WEBAPI_PORT='$webapi_port': not a TCP port"
  [[ $max_request_mb =~ ^[1-9][0-9]{0,3}$ ]] && ((max_request_mb <= 2048)) || fail "GRIDDB_WEBAPI_MAX_REQUEST_MB='$max_request_mb': an integer 1..2048 (the reference's range)"
  if [ -z "$heap" ]; then
    local cap
    cap=$(memory_cap_mib)
    heap=1024
    if [ -n "$cap" ] && ((cap / 4 < heap)); then heap=$((cap / 4 < 256 ? 256 : cap / 4)); fi
    heap=${heap}m
  fi
  [[ $heap =~ ^[1-9][0-9]*[kKmMgG]$ ]] || fail "GRIDDB_WEBAPI_HEAP='$heap': a JVM size like 1024m"
  address=${GRIDDB_NODE_ADDRESS:-$(hostname -I 2>/dev/null | awk '{print $1}')}
  [[ $address =~ ^([0-9]{1,3}\.){3}[0-9]{1,3}$ ]] || fail "GRIDDB_NODE_ADDRESS='$address': not an IPv4 address (set it when hostname -I has none)"
}

# A port of gs_node.json (GridDB's defaults when the file or the key is absent).
node_port() {
  local section=$1 default=$2
  if [ -f "$GS_HOME/conf/gs_node.json" ]; then
    jq -r --arg s "$section" --argjson d "$default" '.[$s].servicePort // $d' "$GS_HOME/conf/gs_node.json"
  else
    echo "$default"
  fi
}

# Write gs_cluster.json (cluster name, FIXED_LIST of this one node), repository.json and griddb_webapi.properties.
render() {
  validate
  local cluster_port sync_port system_port transaction_port sql_port conf=$GS_HOME/conf/gs_cluster.json
  cluster_port=$(node_port cluster 10010)
  sync_port=$(node_port sync 10020)
  system_port=$(node_port system 10040)
  transaction_port=$(node_port transaction 10001)
  sql_port=$(node_port sql 20001)
  [ -f "$conf" ] || fail "no $conf (the griddb package's cluster definition file)"
  # the multicast keys out (cluster, transaction and sql sections), one notificationMember in: the fixed list
  # method; the node finds itself in the list by its address
  jq --arg name "$cluster" --arg a "$address" \
    --argjson cp "$cluster_port" --argjson yp "$sync_port" --argjson sp "$system_port" --argjson tp "$transaction_port" --argjson qp "$sql_port" \
    '.cluster.clusterName = $name
     | del(.cluster.notificationAddress, .cluster.notificationPort, .cluster.notificationProvider)
     | del(.transaction.notificationAddress, .transaction.notificationPort, .sql.notificationAddress, .sql.notificationPort)
     | .cluster.notificationMember = [{cluster: {address: $a, port: $cp}, sync: {address: $a, port: $yp},
         system: {address: $a, port: $sp}, transaction: {address: $a, port: $tp}, sql: {address: $a, port: $qp}}]' \
    "$conf" >"$conf.tmp"
  mv "$conf.tmp" "$conf"

  mkdir -p "$GS_WEBAPI_HOME/conf" "$GS_WEBAPI_HOME/log"
  sed -e "s/@CLUSTER@/$cluster/g" -e "s/@ADDRESS@/$address/g" -e "s/@TRANSACTION_PORT@/$transaction_port/g" -e "s/@SQL_PORT@/$sql_port/g" \
    "$TEMPLATE_DIR/repository.json.in" >"$GS_WEBAPI_HOME/conf/repository.json"
  sed -e "s/@WEBAPI_PORT@/$webapi_port/g" -e "s/@MAX_REQUEST_MB@/$max_request_mb/g" \
    "$TEMPLATE_DIR/griddb_webapi.properties.in" >"$GS_WEBAPI_HOME/conf/griddb_webapi.properties"
  if grep -n '@[A-Z_]*@' "$GS_WEBAPI_HOME/conf/repository.json" "$GS_WEBAPI_HOME/conf/griddb_webapi.properties" >&2; then
    fail "a template placeholder was left unrendered"
  fi
  jq -e --arg name "$cluster" '.clusters | length == 1 and .[0].name == $name' "$GS_WEBAPI_HOME/conf/repository.json" >/dev/null ||
    fail "$GS_WEBAPI_HOME/conf/repository.json is not the one-cluster file expected"
  log "config: cluster $cluster, node $address:$transaction_port (FIXED_LIST), Web API port $webapi_port, heap $heap"
}

check() {
  local auth
  auth=$(printf '%s:%s' "$user" "$password" | base64 | tr -d '\n')
  wget -q --no-proxy -O /dev/null -T 5 --header "Authorization: Basic $auth" "http://127.0.0.1:$webapi_port/griddb/v2/$cluster/dbs/public/checkConnection"
}

# gsserver daemonizes (gs_startnode): its pid file, else the process named gsserver
gsserver_pid() {
  local f=$GS_HOME/conf/gsserver.pid p
  if [ -s "$f" ]; then
    cat "$f"
    return
  fi
  for p in /proc/[0-9]*; do
    if [ "$(cat "$p/comm" 2>/dev/null)" = gsserver ]; then
      echo "${p#/proc/}"
      return
    fi
  done
  return 1
}

webapi_pid=
node_pid=

stop_webapi() {
  [ -n "$webapi_pid" ] || return 0
  if kill -0 "$webapi_pid" 2>/dev/null; then
    kill -TERM "$webapi_pid" 2>/dev/null || true
    wait "$webapi_pid" 2>/dev/null || true
  fi
  webapi_pid=
}

stop_node() {
  [ -n "$node_pid" ] || return 0
  if kill -0 "$node_pid" 2>/dev/null; then
    gs_stopcluster -u "$user/$password" -w 60 || log "gs_stopcluster failed; stopping the node anyway"
    gs_stopnode -u "$user/$password" -w 60 || { log "gs_stopnode failed: SIGTERM to gsserver $node_pid"; kill -TERM "$node_pid" 2>/dev/null || true; }
  fi
  node_pid=
}

on_signal() {
  log "stopping (signal)"
  trap - TERM INT
  stop_webapi
  stop_node
  exit 0
}

run() {
  render
  trap on_signal TERM INT
  # the administrator's password, as griddb/griddb's start script sets it, before the node reads the password file
  gs_passwd "$user" -p "$password" >/dev/null || fail "gs_passwd $user failed: GRIDDB_USERNAME must be an existing administrator (admin or system)"
  gs_startnode -u "$user/$password" -w 120 || fail "gs_startnode failed (see $GS_HOME/log)"
  node_pid=$(gsserver_pid) || fail "gs_startnode returned but no gsserver process is running"
  # one node: the cluster forms when that node joins (gs_joincluster's default cluster size is 1)
  if ! gs_joincluster -c "$cluster" -u "$user/$password" -w 120; then
    stop_node
    fail "gs_joincluster -c $cluster failed (see $GS_HOME/log)"
  fi
  log "GridDB node $node_pid is in cluster $cluster"

  cd "$GS_WEBAPI_HOME"
  java "-Xmx$heap" -jar "$GS_WEBAPI_HOME/griddb-webapi.jar" "--server.port=$webapi_port" &
  webapi_pid=$!

  local ready=0 rc
  while :; do
    if ! kill -0 "$webapi_pid" 2>/dev/null; then
      rc=0
      wait "$webapi_pid" || rc=$?
      webapi_pid=
      log "the Web API exited ($rc): stopping GridDB"
      stop_node
      exit 1
    fi
    if ! kill -0 "$node_pid" 2>/dev/null; then
      node_pid=
      log "the GridDB node exited: stopping the Web API"
      stop_webapi
      exit 1
    fi
    if [ "$ready" = 0 ] && check; then
      ready=1
      log "ready: http://$address:$webapi_port/griddb/v2/$cluster/dbs/public"
    fi
    # sleep as a waited-for child, so SIGTERM runs the trap at once
    sleep 1 &
    wait $! || true
  done
}

case "${1:-run}" in
  run) run ;;
  render) render ;;
  check)
    validate
    check
    ;;
  *) fail "usage: start.sh [run|render|check]" ;;
esac

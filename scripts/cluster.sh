#!/usr/bin/env bash
# A local cluster to try, all on 127.0.0.1: three nats-servers forming a JetStream cluster
# (stream with 3 replicas), then three tachyon nodes following it: a primary (sequences), a
# standby (follows the stream, ready to take over) and a replica (follows and serves reads).
# Everything runs in the background; logs (<name>.log), pids (<name>.pid), the config and the
# data dirs live in the state dir. Needs a release build and /usr/sbin/nats-server.
#
#   scripts/cluster.sh start     start the cluster, wait until every node is ready, print URLs
#   scripts/cluster.sh status    which processes are alive, each tachyon node's /health/ready
#   scripts/cluster.sh stop      SIGTERM the tachyon nodes (then SIGKILL after 15 s), the NATS
#
# Environment (defaults):
#   TACHYON_CLUSTER_DIR=./tachyon-cluster     state dir (relative to the current dir)
#   TACHYON_BIN=<repo>/build/release/src/app/tachyon
#   TACHYON_CLUSTER_BASE_PORT=8080            primary 8080/8081 (http/admin), standby +10, replica +20
#   TACHYON_CLUSTER_NATS_PORT=14222           NATS client ports 14222-14224
#   TACHYON_CLUSTER_NATS_ROUTE_PORT=16222     NATS cluster route ports 16222-16224
#   TACHYON_CLUSTER_NATS_MONITOR_PORT=18222   NATS monitoring ports 18222-18224
#   NATS_SERVER=/usr/sbin/nats-server
#
# Example: scripts/cluster.sh start; kill -9 $(cat tachyon-cluster/primary.pid); scripts/cluster.sh status
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${TACHYON_CLUSTER_DIR:-./tachyon-cluster}"
bin="${TACHYON_BIN:-$repo/build/release/src/app/tachyon}"
nats_bin="${NATS_SERVER:-/usr/sbin/nats-server}"
base_port="${TACHYON_CLUSTER_BASE_PORT:-8080}"
nats_port="${TACHYON_CLUSTER_NATS_PORT:-14222}"
route_port="${TACHYON_CLUSTER_NATS_ROUTE_PORT:-16222}"
monitor_port="${TACHYON_CLUSTER_NATS_MONITOR_PORT:-18222}"
nodes=(primary standby replica)   # start order; stop goes the other way
nats_nodes=(nats-n1 nats-n2 nats-n3)

die() { echo "cluster.sh: $*" >&2; exit 1; }
usage() { echo "usage: scripts/cluster.sh start|stop|status (see the header of this script)" >&2; exit 2; }

# The http port of tachyon node $1 (0 primary, 1 standby, 2 replica); admin is the next one.
http_port() { echo $((base_port + 10 * $1)); }
nats_urls() {
  local i urls=()
  for i in 0 1 2; do urls+=("nats://127.0.0.1:$((nats_port + i))"); done
  (IFS=,; echo "${urls[*]}")
}

# Whether process $1 runs (an exited one not yet reaped, a zombie, does not).
alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ ${stat##*) } != Z* ]]
}

# The pid in <dir>/$1.pid if that process is alive and still ours (tachyon or nats-server).
live_pid() {
  local f="$dir/$1.pid" pid
  [[ -f $f ]] || return 1
  pid="$(cat "$f")"
  [[ $pid =~ ^[0-9]+$ ]] && alive "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qE 'tachyon|nats-server' || return 1
  echo "$pid"
}

# Runs "$@" detached (own session, stdin closed), output appended to <dir>/$1.log, pid in $1.pid.
launch() {
  local name="$1"; shift
  ( exec setsid "$@" </dev/null >>"$dir/$name.log" 2>&1 ) &
  echo $! >"$dir/$name.pid"
}

log_tail() { echo "--- last lines of $dir/$1.log:" >&2; tail -n 20 "$dir/$1.log" >&2 || true; }

# Waits (up to $3 s) until URL $2 answers HTTP 200 while process $1 is alive.
wait_ok() {
  local name="$1" url="$2" timeout="$3" t0=$SECONDS
  while (( SECONDS - t0 < timeout )); do
    live_pid "$name" >/dev/null || { log_tail "$name"; fail "$name exited during start"; }
    [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" || true)" == 200 ]] && return 0
    sleep 0.2
  done
  log_tail "$name"
  fail "$name not ready after ${timeout}s ($url)"
}

# A failed start stops what it started (logs stay in the state dir).
fail() { echo "cluster.sh: $*; stopping what was started (logs in $dir)" >&2; stop; exit 1; }

start_nats() {
  local i routes r
  for i in 0 1 2; do
    routes=()
    for r in 0 1 2; do (( r == i )) || routes+=("nats://127.0.0.1:$((route_port + r))"); done
    mkdir -p "$dir/nats-n$((i + 1))"
    launch "nats-n$((i + 1))" "$nats_bin" -a 127.0.0.1 -p $((nats_port + i)) -n "n$((i + 1))" -js \
      -sd "$dir/nats-n$((i + 1))" -l "$dir/nats-n$((i + 1)).log" --cluster_name tachyon \
      --cluster "nats://127.0.0.1:$((route_port + i))" --routes "$(IFS=,; echo "${routes[*]}")" \
      -m $((monitor_port + i))
  done
  # JetStream elects its meta leader about a second after the routes connect.
  for i in 0 1 2; do
    wait_ok "nats-n$((i + 1))" "http://127.0.0.1:$((monitor_port + i))/healthz" 30
  done
}

# The embedded defaults, with the stream replicated on all three nats-servers.
write_config() {
  cp "$repo/configs/tachyon.toml" "$dir/tachyon.toml"
  grep -q '^stream_replicas = 1' "$dir/tachyon.toml" || die "'stream_replicas = 1' not in configs/tachyon.toml"
  sed -i 's|^stream_replicas = 1.*|stream_replicas = 3|' "$dir/tachyon.toml"
}

start_node() {
  local i="$1" name="${nodes[$1]}" port durability=()
  port="$(http_port "$i")"
  # replicated (ack after the stream's ack) is for the primary and the standby; a replica keeps
  # the config's local durability.
  [[ $name == replica ]] || durability=(--durability replicated)
  mkdir -p "$dir/$name"
  launch "$name" "$bin" --config "$dir/tachyon.toml" --role "$name" --nats "$(nats_urls)" \
    "${durability[@]}" --data-dir "$dir/$name" --listen-address 127.0.0.1 \
    --port "$port" --admin-port $((port + 1))
  wait_ok "$name" "http://127.0.0.1:$port/health/ready" 30
  echo "$name ready"
}

print_urls() {
  local i port
  echo
  for i in 0 1 2; do
    port="$(http_port "$i")"
    printf '%-8s REST http://127.0.0.1:%s/api/v1/...  WebSocket ws://127.0.0.1:%s/stream\n' \
      "${nodes[$i]}" "$port" "$port"
    printf '%-8s admin http://127.0.0.1:%s/metrics  health http://127.0.0.1:%s/health/ready\n' \
      "" $((port + 1)) "$port"
  done
  echo "NATS     $(nats_urls)"
  echo
  echo "scripts/cluster.sh stop stops it; kill -9 \$(cat $dir/primary.pid) kills the primary and lets the standby take over."
}

start() {
  [[ -x $bin ]] || die "no tachyon binary at $bin; build first: cmake --preset release && cmake --build --preset release"
  [[ -x $nats_bin ]] || die "no nats-server at $nats_bin (apt-get install nats-server, or set NATS_SERVER)"
  local name
  for name in "${nodes[@]}" "${nats_nodes[@]}"; do
    if live_pid "$name" >/dev/null; then die "$name already running; scripts/cluster.sh stop first"; fi
  done
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  # status reads the ports back from here.
  printf 'base_port=%s\nnats_port=%s\n' "$base_port" "$nats_port" >"$dir/ports"
  echo "starting 3 nats-servers and waiting for JetStream (state in $dir)"
  start_nats
  echo "nats cluster ready ($(nats_urls))"
  write_config
  local i
  for i in 0 1 2; do start_node "$i"; done
  print_urls
}

# SIGTERM the processes named "$@" together, SIGKILL those still running after 15 s; removes
# their pid files.
stop_all() {
  local name pid t0=$SECONDS
  declare -A pids=()
  for name in "$@"; do
    if pid="$(live_pid "$name")"; then pids[$name]=$pid; kill -TERM "$pid" 2>/dev/null || true; fi
  done
  for name in "$@"; do
    pid="${pids[$name]:-}"
    if [[ -n $pid ]]; then
      while alive "$pid" && (( SECONDS - t0 < 15 )); do sleep 0.1; done
      if alive "$pid"; then
        echo "$name did not stop in 15s: SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
      fi
      echo "$name stopped"
    fi
    rm -f "$dir/$name.pid"
  done
}

# The tachyon nodes one by one (replica, standby, primary), then the nats-servers together.
stop() {
  local i
  for (( i = ${#nodes[@]} - 1; i >= 0; i-- )); do stop_all "${nodes[$i]}"; done
  stop_all "${nats_nodes[@]}"
}

status() {
  local i name pid port
  # The ports this cluster was started with.
  if [[ -f $dir/ports ]]; then
    base_port="$(sed -n 's/^base_port=//p' "$dir/ports")"
    nats_port="$(sed -n 's/^nats_port=//p' "$dir/ports")"
  fi
  for i in 0 1 2; do
    name="${nodes[$i]}"
    port="$(http_port "$i")"
    if pid="$(live_pid "$name")"; then
      printf '%-8s pid %-7s ready: %s\n' "$name" "$pid" \
        "$(curl -s --max-time 2 "http://127.0.0.1:$port/health/ready" | tr -d '\n' || true)"
    else
      printf '%-8s not running\n' "$name"
    fi
  done
  for i in 0 1 2; do
    name="${nats_nodes[$i]}"
    if pid="$(live_pid "$name")"; then
      printf '%-8s pid %-7s nats://127.0.0.1:%s\n' "$name" "$pid" $((nats_port + i))
    else
      printf '%-8s not running\n' "$name"
    fi
  done
}

[[ $# -eq 1 ]] || usage
case "$1" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac

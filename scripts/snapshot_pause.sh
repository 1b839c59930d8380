#!/usr/bin/env bash
# Snapshots in the real server at scale: builds a data dir of 1M accounts and 100 markets x 10k
# resting orders (bench_store), starts tachyon on it (loopback ports), asks for N snapshots over
# the admin port with an operator token, one after the other, and prints what they cost the
# sequencer: with --from fork, the pauses the server logged for each fork() (p50 / p99 / max),
# its resident memory and page-table size; with --from replica (the server's default), the
# committer writes its replica and the sequencer is never stopped (the script checks that no
# pause was logged) and prints the write times. Then it restarts the server on that data dir N
# times (--starts) and prints how long each took to be ready (the server's "ready ... after
# start" line: engine recovery, read side). With --idle S it waits S seconds before each start:
# on a VM that hands freed memory back to its host, a start after a pause gets that memory back
# slowly (docs/PERFORMANCE.md, "Start-up on memory the host reclaimed"). --evict drops the newest
# snapshot from the page cache before each start (posix_fadvise DONTNEED), so that it is read
# from the disk (or the host's cache) again. --existing reuses the data dir a previous run built
# (no snapshots are taken).
#
#   scripts/snapshot_pause.sh [--from replica|fork] [--snapshots N] [--starts N] [--idle S]
#                             [--evict] [--dir DIR] [--no-build] [--existing]
set -euo pipefail
cd "$(dirname "$0")/.."
n=20 starts=5 dir=/tmp/tachyon-snapshot-pause build=1 from=fork idle=0 existing=0 evict=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --snapshots) n="$2"; shift 2 ;;
    --starts) starts="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --idle) idle="$2"; shift 2 ;;
    --existing) existing=1; shift ;;
    --evict) evict=1; shift ;;
    --from) from="$2"; shift 2 ;;
    *) echo "snapshot_pause.sh: unknown option $1 (see the header of this script)" >&2; exit 2 ;;
  esac
done
if [[ $build == 1 ]]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target tachyon tachyon-cli bench_store >/dev/null
fi
bin=build/release/src/app
if [[ $existing == 0 ]]; then
  rm -rf "$dir"
  echo "building the data dir (1M accounts, 1M resting orders) in $dir ..."
  TACHYON_BENCH_KEEP=1 build/release/bench/bench_store --snapshots-only --dir "$dir" >/dev/null
else
  ls "$dir"/snapshot-*.snap >/dev/null 2>&1 || { echo "--existing: no snapshot in $dir" >&2; exit 2; }
fi
[[ $from == fork || $from == replica ]] || { echo "--from is fork or replica" >&2; exit 2; }
printf '[store]\nsnapshot_from = "%s"\nsnapshot_every_txs = 0\nsnapshot_interval_s = 0\n' \
  "$from" >"$dir.toml"
# start_server LOG: starts tachyon on the data dir (pid in $pid) and waits until it is ready.
start_server() {
  "$bin/tachyon" --config "$dir.toml" --data-dir "$dir" --listen-address 127.0.0.1 --port 18480 \
    --admin-port 18481 >"$1" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null || true' EXIT
  for _ in $(seq 1 600); do
    grep -q "] ready " "$1" && return 0
    kill -0 $pid 2>/dev/null || { cat "$1"; exit 1; }
    sleep 0.05
  done
}
if [[ $existing == 0 ]]; then
log="$dir/server.log"
start_server "$log"
grep -E "recovered|listening|ready " "$log" | sed 's/^\[[^]]*\] \[[^]]*\] \[[^]]*\] /  /'
token=$("$bin/tachyon-cli" token --key-file "$dir/operator.key" --account 0 --api-key 0 --ttl 3600 |
  tail -1)
# the committer rebuilds its replica once the server is ready: snapshots are measured after that
for _ in $(seq 1 600); do
  grep -q "committer ready" "$log" && break
  sleep 0.1
done
grep "committer ready" "$log" | sed 's/^\[[^]]*\] \[[^]]*\] \[[^]]*\] /  /'
echo "memory: $(grep -E 'VmRSS|VmPTE' /proc/$pid/status | tr -s ' \t' ' ' | tr '\n' ' ')"
for i in $(seq 1 "$n"); do
  curl -s -X POST -H "Authorization: $token" http://127.0.0.1:18481/admin/snapshot >/dev/null
  # the next one only once this one is written (one snapshot at a time)
  for _ in $(seq 1 600); do
    [[ $(grep -c "written\|failed" "$log" || true) -ge $i ]] && break
    sleep 0.05
  done
done
kill -TERM $pid
wait $pid || true
trap - EXIT
written=$(grep -c "snapshot at seq .* written" "$log" || true)
failed=$(grep -c "snapshot writer .* failed\|write snapshot" "$log" || true)
if [[ $from == replica ]]; then
  pauses=$(grep -c "sequencer paused" "$log" || true)
  echo "snapshots from the committer's replica: $written written, $failed failed; sequencer" \
    "pauses logged: $pauses"
  grep -o "written from the committer's replica in [0-9.]* s" "$log" | awk '{print $7}' |
    sort -n | awk '{v[NR]=$1} END { if (NR == 0) { print "no snapshot was written"; exit 1 }
      printf "write time on the committer thread (s): p50 %.3f  max %.3f  min %.3f\n",
        v[int((NR - 1) * 0.50) + 1], v[NR], v[1] }'
else
grep -o "sequencer paused [0-9]* us" "$log" | awk '{print $3}' | sort -n | awk -v w="$written" \
  -v f="$failed" '{v[NR]=$1} END {
    if (NR == 0) { print "no snapshot was taken"; exit 1 }
    p50 = v[int((NR - 1) * 0.50) + 1]; p99 = v[int((NR - 1) * 0.99) + 1];
    printf "snapshots: %d taken, %d written, %d failed\n", NR, w, f;
    printf "sequencer pause (us): p50 %d  p99 %d  max %d  min %d\n", p50, p99, v[NR], v[1] }'
fi
fi
# Starts on the same data dir: each waits for the previous process to be gone (and --idle).
for i in $(seq 1 "$starts"); do
  slog="$dir/start-$i.log"
  [[ $idle == 0 ]] || sleep "$idle"
  if [[ $evict == 1 ]]; then
    snap=$(ls "$dir"/snapshot-*.snap | tail -1)
    python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$snap"
  fi
  start_server "$slog"
  kill -TERM $pid
  wait $pid || true
  trap - EXIT
  grep -o "ready [0-9.]* s after start.*" "$slog" | sed "s/^/start $i: /"
done

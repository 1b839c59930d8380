#!/usr/bin/env python3
"""Who takes the hot threads' cores: runs a command under a system-wide trace of the scheduler's
context switches (perf, sched:sched_switch) and lists, for the threads named THREAD, each time one
of them was preempted (taken off its core while still runnable), by the task that ran instead: how
often, and for how long until the thread ran again. A busy-polling thread's tail latency is these
gaps (docs/PERFORMANCE.md, "What preempts the hot threads").

Usage: scripts/offcpu.py THREAD [THREAD...] -- COMMAND [ARGS...]
  e.g. scripts/offcpu.py bench_ring -- build/release/bench/bench_ring 10000000
       scripts/offcpu.py apply sequencer -- build/release/bench/bench_apply 3 --warm-only
Needs root (or perf_event_paranoid <= -1) and perf (Debian: linux-perf).
"""
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

SWITCH = re.compile(r"^\s*\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch:\s+(.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


def main(argv):
    if "--" not in argv or argv.index("--") < 2 or argv.index("--") == len(argv) - 1:
        sys.stderr.write(__doc__)
        return 2
    cut = argv.index("--")
    threads, command = set(argv[1:cut]), argv[cut + 1:]
    if shutil.which("perf") is None:
        sys.stderr.write("offcpu: perf is not installed (Debian: apt-get install linux-perf)\n")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "sched.data")
        # Ctrl-C stops COMMAND (a server, say) and perf, not this script: the trace is read after.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        run = subprocess.run(["perf", "record", "-q", "-e", "sched:sched_switch", "-a", "-o", data,
                              "--"] + command,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if not os.path.exists(data):
            sys.stderr.write(f"offcpu: perf record failed ({run.returncode})\n")
            return 1
        text = subprocess.run(["perf", "script", "-i", data, "-F", "cpu,time,event,trace"],
                              capture_output=True, text=True).stdout
    off = {}  # cpu -> (time preempted, task that ran instead)
    gaps = collections.defaultdict(list)
    for line in text.splitlines():
        m = SWITCH.match(line)
        if not m:
            continue
        cpu, t = int(m.group(1)), float(m.group(2))
        f = dict(FIELD.findall(m.group(3)))
        prev, nxt, state = f.get("prev_comm"), f.get("next_comm"), f.get("prev_state", "")
        if nxt in threads and cpu in off:
            t0, who = off.pop(cpu)
            gaps[who].append((t - t0) * 1e6)
        if prev in threads and nxt not in threads and state.startswith("R"):
            off[cpu] = (t, nxt)
    if not gaps:
        print(f"no preemption of {', '.join(sorted(threads))} was traced")
        return 0
    print(f"Preemptions of {', '.join(sorted(threads))} while runnable, by the task that ran "
          "instead (µs until the thread ran again)\n")
    print("| task | times | median | max | total (ms) |\n|---|---|---|---|---|")
    rows = sorted(gaps.items(), key=lambda kv: -sum(kv[1]))
    for who, v in rows:
        v.sort()
        print(f"| {who} | {len(v)} | {v[len(v) // 2]:.0f} | {v[-1]:.0f} | {sum(v) / 1e3:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

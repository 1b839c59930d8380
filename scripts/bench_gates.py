#!/usr/bin/env python3
"""The gates of scripts/bench.sh, on figures a noisy 2-vCPU VM cannot blur.

  bench_gates.py <results dir> <baseline.json> [--update-baseline]

Reads what scripts/bench.sh left in the results dir, writes results.json (the gates, and every
binary's figures in one shape: binary, name, fields) and summary.txt there, prints the summary, and exits 1 when a gate fails. Each gate prints what it measured, its limit
and the baseline, so a red run says what moved:
  - allocations per tx: 0 in the engine's mixed stream, and 0 on the pipeline's sequencer and
    apply threads in its steady state (each thread's own count);
  - instructions per operation (callgrind) of the engine's mixed stream, the read model's apply and
    the codec: at most the baseline + 5%;
  - context switches per tx of the whole server at a fixed offered rate: at most the budget;
  - ratios measured in the same run: engine book vs std::map book, SpscRing vs
    boost::lockfree::spsc_queue, JsonWriter vs Boost.JSON, and the instructions of libsodium's
    Ed25519 check vs the table-driven one: at least a floor well under today's.
--update-baseline writes the measured instruction counts into the baseline (budgets and floors
stay as they are).
"""
import glob
import json
import os
import re
import sys


def read(path):
    with open(path) as f:
        return f.read()


def gbench_times(path):
    return {b["name"]: b["real_time"] for b in json.load(open(path))["benchmarks"]}


def gbench_field(path, name, field):
    return next(b[field] for b in json.load(open(path))["benchmarks"] if b["name"] == name)


def steady_allocs(text):
    """bench_pipeline's steady-state row: allocations per tx on the sequencer and the apply
    thread (each counted on its own thread; -1 when the thread was not found)."""
    part = text.split("## steady state", 1)[1].split("##", 1)[0]
    row = next(l for l in part.splitlines() if l.startswith("| none"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    return float(cells[-2]), float(cells[-1])


def instructions(out, workload):
    total = int(re.search(r"^summary: (\d+)", read(f"{out}/callgrind.{workload}"), re.M).group(1))
    ops = int(re.search(r"^ops (\d+)", read(f"{out}/callgrind_{workload}.txt"), re.M).group(1))
    return total / ops


def ring_ratio(text):
    m = re.search(r"\| tachyon SpscRing \| .* \| ([0-9.]+)x \|", text)
    return float(m.group(1))


def cell(text):
    """A table cell as a number when it is one ("54.5M (49.2M)" -> 54.5e6, "1.41x" -> 1.41)."""
    text = text.replace("**", "").strip()
    m = re.fullmatch(r"([-+]?[0-9]*\.?[0-9]+)\s*([kKMG]?)x?%?(\s*\(.*\))?", text)
    if not m:
        return text
    return float(m.group(1)) * {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]


def table_rows(binary, text):
    """Every markdown table of a binary's text output as benchmarks in one shape: the name is the
    binary, the table's heading and the row's leading text cells; the fields are the columns."""
    rows, heading, header = [], "", None
    for line in text.splitlines():
        if line.startswith("#"):
            heading, header = line.lstrip("# ").strip(), None
        elif line.startswith("|") and not line.startswith("|---"):
            cells = [c.replace("**", "").strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
                continue
            fields = {h: cell(c) for h, c in zip(header, cells)}
            key = [c for h, c in zip(header, cells) if isinstance(fields[h], str)]
            rows.append({"binary": binary, "name": " / ".join([heading] + key), "fields": fields})
        else:
            header = None if not line.strip() else header
    return rows


def all_benchmarks(out):
    """Every binary's figures: Google Benchmark's JSON as it is, the others' tables as rows."""
    found = []
    for path in sorted(glob.glob(f"{out}/*.txt")):
        binary = os.path.basename(path)[:-4]
        if os.path.exists(f"{out}/{binary}.json"):
            for b in json.load(open(f"{out}/{binary}.json"))["benchmarks"]:
                fields = {k: v for k, v in b.items() if isinstance(v, (int, float))}
                fields["time_unit"] = b.get("time_unit", "ns")
                found.append({"binary": binary, "name": b["name"], "fields": fields})
        elif binary != "summary":
            found.extend(table_rows(binary, read(path)))
    return found


def main():
    out, baseline_path = sys.argv[1], sys.argv[2]
    update = "--update-baseline" in sys.argv[3:]
    base = json.load(open(baseline_path))
    gates, info = [], []

    def gate(name, value, ok, limit, baseline=""):
        gates.append({"gate": name, "value": value, "limit": limit, "baseline": baseline,
                      "ok": bool(ok)})

    eng = gbench_times(f"{out}/bench_engine.json")
    eng_allocs = gbench_field(f"{out}/bench_engine.json", "mixed/engine/manual_time", "allocs_per_op")
    gate("allocs per tx, engine mixed stream", eng_allocs, eng_allocs == 0, "= 0")
    # Counted on the threads themselves, after the warm-up, in the workload where nothing
    # accumulates: what they allocate there they allocate per tx.
    for thread, v in zip(("sequencer", "apply"), steady_allocs(read(f"{out}/bench_pipeline.txt"))):
        gate(f"allocs per tx, {thread} thread (pipeline steady state)", v, v == 0, "= 0")

    counted = {}
    for w in ("engine", "apply", "codec"):
        v = instructions(out, w)
        counted[w] = round(v, 1)
        b = base["instructions_per_op"][w]
        gate(f"instructions per op, {w}", round(v, 1), v <= b * (1 + base["instructions_slack"]),
             f"<= {b * (1 + base['instructions_slack']):.1f}", b)

    ctx = json.load(open(f"{out}/ctx/ctx.json"))
    budget = base["ctx_switches_per_tx_budget"]
    gate(f"context switches per tx, server at {ctx['offered_tps']:.0f} tx/s", round(ctx["per_tx"], 2),
         ctx["per_tx"] <= budget, f"<= {budget}")

    floors = base["ratio_floors"]
    book = eng["mixed/std_map_book/manual_time"] / eng["mixed/engine_book/manual_time"]
    gate("engine book vs std::map book (mixed)", round(book, 2), book >= floors["book"],
         f">= {floors['book']}")
    ring = ring_ratio(read(f"{out}/bench_ring.txt"))
    gate("SpscRing vs boost spsc_queue (throughput)", ring, ring >= floors["ring"],
         f">= {floors['ring']}")
    js = gbench_times(f"{out}/bench_json.json")
    enc = js["BM_BookEncode_BoostJson/100"] / js["BM_BookEncode_JsonWriter/100"]
    gate("JsonWriter vs Boost.JSON (book encode, 100 levels)", round(enc, 2), enc >= floors["json"],
         f">= {floors['json']}")
    verify = instructions(out, "verify_libsodium") / instructions(out, "verify_tables")
    gate("Ed25519 check: libsodium vs key tables (instructions)", round(verify, 2),
         verify >= floors["verify"], f">= {floors['verify']}")
    info.append(("engine ns per mixed tx (this run, not gated)",
                 round(eng["mixed/engine/manual_time"], 1)))

    lines = ["| gate | measured | limit | baseline | |", "|---|---|---|---|---|"]
    for g in gates:
        lines.append(f"| {g['gate']} | {g['value']} | {g['limit']} | {g['baseline']} | "
                     f"{'ok' if g['ok'] else 'FAILED'} |")
    for name, v in info:
        lines.append(f"| {name} | {v} | | | |")
    summary = "\n".join(lines)
    print(summary)
    with open(f"{out}/summary.txt", "w") as f:
        f.write(summary + "\n")
    with open(f"{out}/results.json", "w") as f:
        json.dump({"gates": gates, "info": dict(info), "benchmarks": all_benchmarks(out)}, f,
                  indent=1)
    if update:
        base["instructions_per_op"] = counted
        with open(baseline_path, "w") as f:
            json.dump(base, f, indent=2)
            f.write("\n")
        print(f"baseline updated: {baseline_path}")
        return 0
    failed = [g for g in gates if not g["ok"]]
    for g in failed:
        print(f"GATE FAILED: {g['gate']}: measured {g['value']}, limit {g['limit']}"
              + (f", baseline {g['baseline']}" if g["baseline"] != "" else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The gates of scripts/bench.sh, on figures a noisy 2-vCPU VM cannot blur.

  bench_gates.py <results dir> <baseline.json> [--update-baseline]

Reads what scripts/bench.sh left in the results dir, writes results.json and summary.txt there,
prints the summary, and exits 1 when a gate fails. Each gate prints what it measured, its limit
and the baseline, so a red run says what moved:
  - allocations per tx: 0 in the engine's mixed stream; in the pipeline's steady state (sequencer
    and apply threads) at most the baseline's bound, far under one per tx (its pools grow now and
    then);
  - instructions per operation (callgrind) of the engine's mixed stream, the read model's apply and
    the codec: at most the baseline + 5%;
  - context switches per tx of the whole server at a fixed offered rate: at most the budget;
  - ratios measured in the same run: engine book vs std::map book, SpscRing vs
    boost::lockfree::spsc_queue, JsonWriter vs Boost.JSON: at least a floor well under today's.
--update-baseline writes the measured instruction counts into the baseline (budgets and floors
stay as they are).
"""
import json
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
    """allocs/tx of the steady-state table's rows (bench_pipeline)."""
    part = text.split("## steady state", 1)[1].split("##", 1)[0]
    rows = [l for l in part.splitlines() if l.startswith("| ") and not l.startswith("| durability")]
    return [float(r.strip("|").split("|")[-1]) for r in rows]


def instructions(out, workload):
    total = int(re.search(r"^summary: (\d+)", read(f"{out}/callgrind.{workload}"), re.M).group(1))
    ops = int(re.search(r"^ops (\d+)", read(f"{out}/callgrind_{workload}.txt"), re.M).group(1))
    return total / ops


def ring_ratio(text):
    m = re.search(r"\| tachyon SpscRing \| .* \| ([0-9.]+)x \|", text)
    return float(m.group(1))


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
    # The pipeline's threads allocate nothing per tx; its pools and tables grow now and then
    # (a few allocations in tens of thousands of txs), which one allocation per tx (1.0) is not.
    allocs = max(steady_allocs(read(f"{out}/bench_pipeline.txt")))
    gate("allocs per tx, pipeline steady state (sequencer, apply)", allocs,
         allocs <= base["pipeline_allocs_per_tx_max"], f"<= {base['pipeline_allocs_per_tx_max']}")

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
        json.dump({"gates": gates, "info": dict(info)}, f, indent=1)
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

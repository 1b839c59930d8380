#!/usr/bin/env python3
"""Counts the lines of every C++ function in src/ and include/ and checks two limits.

Functions are found by universal-ctags (`ctags --fields=+ne`: each function's first and last
line). A function's length is last - first + 1, lambdas and comments inside it included.
Limits (docs/ARCHITECTURE.md, "Code shape"):
  - hot path (the files in HOT: sequencer, engine, apply, read-side publication, fan-out, per-tx
    parsing and dry-run): at most HOT_LIMIT lines;
  - everywhere else: at most LIMIT lines.
Usage: function_lengths.py [--top N] [repo root]. Prints the N longest functions and every one
over its limit; exit 1 if any is over.
"""
import json
import os
import shutil
import subprocess
import sys

HOT_LIMIT = 70
LIMIT = 120
HOT = (
    "src/engine/", "include/tachyon/engine/",
    "src/pipe/pipeline", "src/pipe/book_caches", "src/pipe/read_model", "src/pipe/read_side",
    "src/pipe/probes", "src/pipe/account_table", "src/pipe/small_orders", "include/tachyon/pipe/",
    "src/api/ws_fanout", "src/api/tx_info", "src/api/dry_run", "src/api/send_tx",
    "src/codec/",
)
# In a hot folder but run only at start, shutdown or snapshot time.
COLD = ("src/engine/snapshot.cpp",)


def is_hot(path):
    return path.startswith(HOT) and not path.startswith(COLD)


def functions(root):
    files = []
    for top in ("src", "include"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(dirpath, n) for n in names if n.endswith((".cpp", ".hpp"))]
    ctags = shutil.which("ctags-universal") or "ctags"
    out = subprocess.run(
        [ctags, "--output-format=json", "--fields=+ne", "--kinds-c++=f", "--language-force=c++",
         "-o", "-"] + sorted(files), capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        tag = json.loads(line)
        if "end" not in tag or tag["name"].startswith("__anon"):
            continue  # a lambda is counted inside the function that holds it
        path = os.path.relpath(tag["path"], root)
        scope = tag.get("scope", "")
        name = f"{scope}::{tag['name']}" if scope else tag["name"]
        yield path, tag["line"], name, tag["end"] - tag["line"] + 1


def main() -> int:
    args = sys.argv[1:]
    top = 10
    if len(args) >= 2 and args[0] == "--top":
        top, args = int(args[1]), args[2:]
    root = os.path.abspath(args[0] if args else ".")
    fns = sorted(functions(root), key=lambda f: -f[3])
    over = []
    for path, line, name, n in fns:
        limit = HOT_LIMIT if is_hot(path) else LIMIT
        if n > limit:
            over.append((path, line, name, n, limit))
    print(f"{len(fns)} functions; the {min(top, len(fns))} longest:")
    for path, line, name, n in fns[:top]:
        hot = "hot" if is_hot(path) else ""
        print(f"  {n:4d}  {hot:3s}  {path}:{line}  {name}")
    for path, line, name, n, limit in over:
        print(f"over the limit ({n} > {limit}): {path}:{line} {name}")
    if over:
        return 1
    print(f"all within limits (hot path {HOT_LIMIT} lines, elsewhere {LIMIT})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

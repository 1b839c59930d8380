#!/usr/bin/env python3
"""Checks that every module includes only what docs/ARCHITECTURE.md's module table
("Module map") allows.

A module is a folder under include/tachyon/<module>/ and src/<module>/. For each file the check
follows its tachyon includes transitively (what a file includes, it depends on) and reports
every header of a module the table does not allow, with the chain that pulls it in.
Usage: check_modules.py [repo root]. Exit 1 on a violation.
"""
import os
import re
import sys

# module -> modules it may include (itself always). `api` may use the read side of pipe and the
# engine's pure validation and margin functions only: the headers listed in LIMITED.
ALLOWED = {
    "core": set(),
    "engine": {"core"},
    "codec": {"core", "engine"},
    "store": {"core", "engine", "codec"},
    "pipe": {"core", "engine", "codec", "store"},
    "cluster": {"core", "engine", "codec", "store"},
    "api": {"core", "codec", "engine", "pipe"},
    "obs": {"core"},
}
LIMITED = {
    "api": {
        "pipe": {"front.hpp", "read_side.hpp", "order_list.hpp", "small_orders.hpp",
                 "book_snapshot.hpp",
                 "published.hpp", "wait.hpp",
                 "epoch.hpp", "spsc_ring.hpp"},
        "engine": {"tx.hpp", "update.hpp", "margin.hpp", "order_checks.hpp", "order.hpp"},
    },
}
INCLUDE = re.compile(r'^\s*#\s*include\s+["<]tachyon/([a-z_]+)/([^">]+)[">]', re.M)


def main() -> int:
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    inc = os.path.join(root, "include", "tachyon")
    deps = {}  # "module/file" -> list of "module/file" it includes

    def includes(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            return [f"{m}/{h}" for m, h in INCLUDE.findall(f.read())]

    files = []  # (module, path, key)
    for module in ALLOWED:
        for base in (os.path.join(inc, module), os.path.join(root, "src", module)):
            for dirpath, _, names in os.walk(base):
                for n in sorted(names):
                    if n.endswith((".hpp", ".cpp", ".h", ".cc")):
                        p = os.path.join(dirpath, n)
                        files.append((module, p, os.path.relpath(p, root)))
    if not files:
        print(f"no module sources under {root}/include/tachyon and {root}/src: wrong root?")
        return 1
    for module, path, key in files:
        deps[key] = includes(path)

    def header_deps(h):  # "module/file.hpp" under include/tachyon
        if h not in deps:
            p = os.path.join(inc, h)
            deps[h] = includes(p) if os.path.exists(p) else []
        return deps[h]

    errors = []
    for module, path, key in files:
        seen = {}
        stack = [(h, [h]) for h in deps[key]]
        while stack:
            h, chain = stack.pop()
            if h in seen:
                continue
            seen[h] = chain
            stack.extend((d, chain + [d]) for d in header_deps(h))
        for h, chain in sorted(seen.items()):
            dep_module, name = h.split("/", 1)
            if dep_module == module:
                continue
            why = None
            if dep_module not in ALLOWED[module]:
                why = f"{module} may not use {dep_module}"
            elif dep_module in LIMITED.get(module, {}) and name not in LIMITED[module][dep_module]:
                why = f"{module} may use only {sorted(LIMITED[module][dep_module])} of {dep_module}"
            if why:
                errors.append(f"{key}: includes tachyon/{h} ({why}) via {' -> '.join(chain)}")
    for e in errors:
        print(e)
    print(f"{len(files)} files of {len(ALLOWED)} modules checked, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

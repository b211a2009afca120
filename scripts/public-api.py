#!/usr/bin/env python3
"""Counts the public declarations a wallet backend sees after `import DigitalCredentials` (or another
module): the module and every module it re-exports (`@_exported import`, followed transitively), from
the symbol graphs of `swift package dump-symbol-graph --skip-synthesized-members`. SPI symbols are not
in those graphs. Usage: scripts/public-api.py [MODULE] [--list]"""
import json, os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
module = args[0] if args else "DigitalCredentials"
subprocess.run(["swift", "package", "dump-symbol-graph", "--skip-synthesized-members"], cwd=root, check=True,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=root, capture_output=True, text=True).stdout.strip()
graphs = os.path.join(os.path.dirname(out), "symbolgraph")

def reexports(m):
    found = set()
    d = os.path.join(root, "Sources", m)
    for dirpath, _, files in os.walk(d):
        for f in files:
            if f.endswith(".swift"):
                for line in open(os.path.join(dirpath, f)):
                    g = re.match(r"\s*@_exported\s+(?:public\s+)?import\s+(\w+)", line)
                    if g: found.add(g.group(1))
    return found

modules, todo = set(), [module]
while todo:
    m = todo.pop()
    if m in modules: continue
    modules.add(m)
    todo.extend(reexports(m))

symbols = []
for m in sorted(modules):
    for f in os.listdir(graphs):
        if f == f"{m}.symbols.json" or f.startswith(f"{m}@"):
            for s in json.load(open(os.path.join(graphs, f)))["symbols"]:
                if s.get("accessLevel") in ("public", "open") and "spi" not in s:
                    symbols.append((m, s["kind"]["identifier"], ".".join(s["pathComponents"])))
print(f"import {module}: {len(symbols)} public declarations from {', '.join(sorted(modules))}")
by = {}
for m, _, _ in symbols: by[m] = by.get(m, 0) + 1
for m in sorted(by): print(f"  {m}: {by[m]}")
if "--list" in sys.argv:
    for m, k, p in sorted(symbols): print(f"{m}\t{k}\t{p}")

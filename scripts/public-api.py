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

KINDS = "(?:struct|class|enum|protocol|typealias|func|var|let)"

def reexports(m):
    """(module, symbol or None) pairs `m` re-exports: whole modules, or one declaration of a module
    (`@_exported import struct MdocCBOR.Certificate`)."""
    found = set()
    d = os.path.join(root, "Sources", m)
    for dirpath, _, files in os.walk(d):
        for f in files:
            if f.endswith(".swift"):
                for line in open(os.path.join(dirpath, f)):
                    g = re.match(r"\s*@_exported\s+(?:public\s+)?import\s+(?:" + KINDS + r"\s+)?(\w+)(?:\.(\w+))?", line)
                    if g: found.add((g.group(1), g.group(2)))
    return found

modules, only, todo = set(), {}, [module]
while todo:
    m = todo.pop()
    if m in modules: continue
    modules.add(m)
    for dep, symbol in reexports(m):
        if symbol is None:
            todo.append(dep)
            only.pop(dep, None)
        elif dep not in modules:
            only.setdefault(dep, set()).add(symbol)
for dep in [d for d in only if d in modules]: del only[dep]

symbols = []
for m in sorted(modules | set(only)):
    for f in os.listdir(graphs):
        if f == f"{m}.symbols.json" or f.startswith(f"{m}@"):
            for s in json.load(open(os.path.join(graphs, f)))["symbols"]:
                if s.get("accessLevel") in ("public", "open") and "spi" not in s:
                    if m in only and s["pathComponents"][0] not in only[m]: continue
                    symbols.append((m, s["kind"]["identifier"], ".".join(s["pathComponents"])))
modules |= set(only)
print(f"import {module}: {len(symbols)} public declarations from {', '.join(sorted(modules))}")
by = {}
for m, _, _ in symbols: by[m] = by.get(m, 0) + 1
for m in sorted(by): print(f"  {m}: {by[m]}" + (f" ({', '.join(sorted(only[m]))})" if m in only else ""))
types = [p for _, k, p in symbols if k in ("swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias")]
rules = [p for m, _, p in symbols if m != "MdocCBOR" and re.match(r"[A-Za-z0-9]*Rule(\.|$)", p) and p != "RefusalRule"]
lower = [p for m, _, p in symbols if m in only]
print(f"  types: {len(types)}; the refusal-rule enums (every refusal by name): {len(rules)}; re-exported"
      f" declarations of lower modules: {len(lower)}; the rest: {len(symbols) - len(rules) - len(lower)}")
if "--list" in sys.argv:
    for m, k, p in sorted(symbols): print(f"{m}\t{k}\t{p}")

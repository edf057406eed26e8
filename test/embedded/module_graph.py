#!/usr/bin/env python3
"""Module dependency graph of the core library, read from the built objects:
an edge a -> b when a.c.o uses a symbol b.c.o defines. Prints the graph and
exits 1 when modules depend on each other in a cycle (the layering of
docs/design.md (Architecture): records, store, plans, strategies, session, each on the ones
before). Also checks that no header under src/ includes a header that
includes it back. Usage: module_graph.py OBJ_DIR SRC_DIR"""
import os
import re
import subprocess
import sys

obj_dir, src_dir = sys.argv[1], sys.argv[2]
sources = {f[:-2] for f in os.listdir(src_dir) if f.endswith(".c")}
defs, uses = {}, {}
for f in sorted(os.listdir(obj_dir)):
    if not f.endswith(".c.o") or f[:-4] not in sources:
        continue  # stale objects of removed sources
    mod = f[:-4]
    out = subprocess.run(["nm", os.path.join(obj_dir, f)], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBR":
            defs[p[2]] = mod
        elif len(p) == 2 and p[0] == "U":
            uses.setdefault(mod, set()).add(p[1])
graph = {m: sorted({defs[u] for u in us if u in defs and defs[u] != m})
         for m, us in uses.items()}
headers = {}
for f in os.listdir(src_dir):
    if f.endswith(".h"):
        text = open(os.path.join(src_dir, f)).read()
        headers[f] = [h for h in re.findall(r'#include "([^"]+)"', text)
                      if not h.startswith("ctxc/")]


def cycles(g):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in g.get(v, []):
                out.append(sorted(comp))

    for v in list(g):
        if v not in index:
            visit(v)
    return out


for m in sorted(graph):
    print(f"{m}.c -> {' '.join(x + '.c' for x in graph[m]) or '-'}")
bad = [("modules", c) for c in cycles(graph)]
bad += [("headers", c) for c in cycles(headers)]
for kind, c in bad:
    print(f"CYCLE among {kind}: {' '.join(c)}")
print(f"module graph: {len(graph)} modules, {len(headers)} private headers, "
      f"{len(bad)} cycles")
sys.exit(1 if bad else 0)

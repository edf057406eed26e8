#!/usr/bin/env python3
"""Static stack of the public functions of a library built with
-fstack-usage -fcallgraph-info=su (the cortex-m4 tree: boards/mps2-an386/
CMakeLists.txt adds the flags).

    stack_static.py CI_DIR [FUNCTION[+CALLER:TARGET...]...]

Reads every *.ci (GCC's call graph with each function's frame from the
.su data) under CI_DIR and prints, per public function (ctxc_*, not
ctxc__*; or the FUNCTIONs given), its own frame and its worst case: the
frame plus the deepest chain of calls inside the library. The worst case is
only a lower bound when the chain meets
  - an indirect call (function pointers: strategies, estimators, writers,
    port hooks): the callee is unknown,
  - recursion: the depth is unknown (counted once),
  - a function outside the library (libc: memcpy, strlen...): its frame is
    not in the .ci files (counted as 0),
  - a dynamic frame (alloca/VLA; none expected: -Walloca -Wvla).
The notes column says which. "+CALLER:TARGET" resolves, for that row, the
indirect calls of CALLER (a function name; static ones match by name) as
calls of TARGET (e.g. the session's strategy call as the strategy's
compress function): the row is then a worst case for that configuration.
Exit 1 when no .ci file is found or a FUNCTION is not in the library.
"""
import glob
import os
import re
import sys

NODE = re.compile(r'^node: \{ title: "([^"]+)" label: "([^"]*)"')
EDGE = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
BYTES = re.compile(r'\\n(\d+) bytes \(([a-z, ]+)\)')


def load(ci_dir):
    frames, kinds, edges = {}, {}, {}
    files = sorted(glob.glob(os.path.join(ci_dir, "**", "*.ci"), recursive=True))
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = NODE.match(line)
                if m:
                    b = BYTES.search(m.group(2))
                    if b:
                        frames[m.group(1)] = int(b.group(1))
                        kinds[m.group(1)] = b.group(2)
                    continue
                m = EDGE.match(line)
                if m:
                    edges.setdefault(m.group(1), set()).add(m.group(2))
    return files, frames, kinds, edges


def short(title):
    return title.split(":")[-1]


def worst(fn, frames, kinds, edges, memo, onstack, resolve):
    """(bytes, notes set, chain list) of the deepest chain from fn."""
    if fn in memo:
        return memo[fn]
    notes = set()
    if kinds.get(fn, "static") != "static":
        notes.add("dynamic frame")
    onstack.add(fn)
    best, best_chain = 0, []
    callees = set(edges.get(fn, ()))
    if "__indirect_call" in callees and short(fn) in resolve:
        callees.discard("__indirect_call")
        callees |= set(resolve[short(fn)])
    for callee in sorted(callees):
        if callee == "__indirect_call":
            notes.add("indirect calls")
            continue
        if callee not in frames:
            notes.add("libc calls")
            continue
        if callee in onstack:
            notes.add("recursion")
            continue
        b, n, chain = worst(callee, frames, kinds, edges, memo, onstack,
                            resolve)
        notes |= n
        if b > best:
            best, best_chain = b, chain
    onstack.discard(fn)
    result = (frames[fn] + best, notes, [fn] + best_chain)
    # memoised only outside a cycle: a function met again while on the
    # stack was cut there, which is a property of this path only
    memo[fn] = result
    return result


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    files, frames, kinds, edges = load(sys.argv[1])
    if not files:
        sys.stderr.write("stack_static: no .ci files under %s (build the cross "
                         "tree: make cortex-m4)\n" % sys.argv[1])
        return 1
    wanted = sys.argv[2:]
    if not wanted:
        wanted = sorted(f for f in frames
                        if f.startswith("ctxc_") and not f.startswith("ctxc__"))
    print("| function | own frame | static worst case | lower bound because | deepest chain |")
    print("|---|---:|---:|---|---|")
    missing = 0
    by_name = {}
    for title in frames:
        by_name.setdefault(short(title), title)
    for arg in wanted:
        parts = arg.split("+")
        fn, resolve, label = parts[0], {}, "`%s`" % parts[0]
        for r in parts[1:]:
            caller, _, target = r.partition(":")
            resolve.setdefault(caller, []).append(by_name.get(target, target))
            label += " via `%s`" % target
        if fn not in frames or any(t not in frames for ts in resolve.values()
                                   for t in ts):
            print("| %s | - | - | not in the library | |" % label)
            missing += 1
            continue
        b, notes, chain = worst(fn, frames, kinds, edges, {}, set(), resolve)
        chain_text = " > ".join(short(c) for c in chain[:6])
        if len(chain) > 6:
            chain_text += " > ..."
        print("| %s | %d | %d | %s | %s |" % (
            label, frames[fn], b, ", ".join(sorted(notes)) or "exact", chain_text))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())

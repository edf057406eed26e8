#!/usr/bin/env python3
"""Whether a built library holds the work-area index code its configuration asks for.

    check_index_code.py NM LIBRARY

CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY=0 promises that the indexed paths of
the density step are compiled out (docs/footprint.md, "Flash and RAM of the library on
Cortex-M4"). The configuration is read from the library itself: every
object references the guard symbol ctxc_cfg_WORK_INDEX_SLOTS_PER_ENTRY_<n>
(include/ctxc/config_guard.h). In strategy_high_density's object:

- n == 0: none of the indexed path's functions is defined and none of the
  index lookups is called (exit 1 naming what is left);
- n > 0: the indexed path is there: every lookup below is called and at
  least one of the functions is defined (which of them are depends on
  inlining). Exit 1 otherwise: the names no longer say what the indexed
  code is, so the first case would prove nothing.

Exit 2 on usage or tool errors.
"""
import re
import subprocess
import sys

OBJECT = "strategy_high_density.c"
# functions of the indexed path (static: defined locally, maybe as a
# compiler clone name.isra.0 / name.constprop.0)
INDEXED_FUNCTIONS = ("key_find", "key_add", "key_match", "incl_count",
                     "incl_consume", "incl_walk", "index_prepare",
                     "index_keys", "index_call", "recency_pass")
# the index lookups it calls in other modules (not ctxc__ids_hash: the
# project's one hash, which the density memo's filters and the
# written-path table of the scans use too; the key table's own calls,
# ctxc__ids_find / _add / _init_for, still mark the indexed path)
INDEXED_CALLS = ("ctxc__ids_find", "ctxc__ids_add",
                 "ctxc__ids_init_for", "ctxc__pairs_find",
                 "ctxc__pairs_begin", "ctxc__tool_get")
GUARD = re.compile(r"^ctxc_cfg_WORK_INDEX_SLOTS_PER_ENTRY_(\d+)$")


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    nm, lib = argv[1], argv[2]
    try:
        out = subprocess.run([nm, "-A", "-P", lib], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"check_index_code: {nm} on {lib}: {e}", file=sys.stderr)
        return 2
    slots = None
    found = []
    seen_object = False
    for line in out.splitlines():
        # "lib.a[obj.c.obj]: symbol TYPE [value size]" (or "lib.a:obj.o:")
        head, _, rest = line.partition(": ")
        fields = rest.split()
        if len(fields) < 2:
            continue
        sym, kind = fields[0], fields[1]
        m = GUARD.match(sym)
        if m:
            slots = int(m.group(1))
        if OBJECT not in head:
            continue
        seen_object = True
        base = sym.split(".")[0]
        if kind in ("t", "T") and base in INDEXED_FUNCTIONS:
            found.append(f"defines {sym}")
        elif kind == "U" and sym in INDEXED_CALLS:
            found.append(f"calls {sym}")
    if slots is None or not seen_object:
        print(f"check_index_code: {lib}: no "
              f"{'configuration guard symbol' if slots is None else OBJECT}",
              file=sys.stderr)
        return 2
    print(f"check_index_code: {lib}: "
          f"CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY={slots}")
    if slots == 0 and found:
        print(f"FAIL: {OBJECT} keeps indexed code with the index compiled "
              f"out: {', '.join(found)}")
        return 1
    if slots > 0:
        missing = [c for c in INDEXED_CALLS if f"calls {c}" not in found]
        if not any(f.startswith("defines ") for f in found):
            missing.append("any of " + ", ".join(INDEXED_FUNCTIONS))
        if missing:
            print(f"FAIL: {OBJECT} with the index on lacks "
                  f"{'; '.join(missing)}: update the names this check uses")
            return 1
    print(f"OK: {OBJECT} "
          + ("has no indexed code" if slots == 0 else
             f"has the indexed path ({len(found)} markers)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

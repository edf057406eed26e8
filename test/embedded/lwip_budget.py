#!/usr/bin/env python3
"""The lwIP image's stack and TLS pool against their budgets.

    lwip_budget.py NM IMAGE LOG [--stack-budget=N] [--pool-budget=N]
                   [--just-under=stack|pool] [--production-store=BYTES]

IMAGE is the built ctxc_lwip.elf: its budgets are read from it with NM (the
stack: __stack_top__ - __stack_limit__, the linker script's stack of
MPS2_LWIP_STACK_BYTES; the TLS pool: the size of the array `tls_pool`,
MPS2_TLS_POOL_BYTES). LOG is the output of a run of the image (ctest
lwip_target writes it, test/embedded/lwip_budget.cmake; make
device-tables keeps its own): the high-water marks come from its
"budget:" lines (the largest when there are several), the parsed trust
store from its "trust store: N anchors parsed ... (B bytes in use)" line.

The rule (docs/device.md, "Budgets"): each budget holds its high-water
with a quarter of it on top, high-water x 5/4 <= budget. With
--production-store=BYTES (the parsed size of the image's own trust store,
from a run of the image as built) the pool's high-water is the run's with
the tests' anchors swapped for the production ones (high-water - B +
BYTES). --stack-budget / --pool-budget check against N bytes instead of the
image's; --just-under=stack|pool against the largest budget the rule
refuses for that high-water (high-water x 5/4 minus one byte): the
self-test of the check, which must then fail. Without them the log must
be newer than IMAGE and name IMAGE's own stack and pool sizes (a run of
this image, not an older one).

Exit 77 (a skip) when LOG does not exist (lwip_target skipped: no QEMU
user networking). Prints one line per budget: the high-water, x 5/4, the budget, the
smallest budget the rule allows (x 5/4 rounded up to 512 bytes for the
stack, 1 KiB for the pool); exit 1 when a high-water eats into its margin.
"""
import os
import re
import subprocess
import sys

STACK_ROUND, POOL_ROUND = 512, 1024


def symbols(nm, image):
    """{name: (address, size)} of IMAGE."""
    out = subprocess.run([nm, "-S", image], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4:
            syms[f[3]] = (int(f[0], 16), int(f[1], 16))
        elif len(f) == 3:
            syms[f[2]] = (int(f[0], 16), 0)
    return syms


def image_budgets(nm, image):
    s = symbols(nm, image)
    for name in ("__stack_limit__", "__stack_top__", "tls_pool"):
        if name not in s:
            raise SystemExit("lwip_budget: FAIL: no symbol %s in %s" % (name, image))
    return s["__stack_top__"][0] - s["__stack_limit__"][0], s["tls_pool"][1]


def round_up(n, unit):
    return (n + unit - 1) // unit * unit


def rule(hw, unit):
    """The smallest budget the rule allows: hw x 5/4 rounded up to unit."""
    return round_up((hw * 5 + 3) // 4, unit)


def read_log(text):
    """(stack high-water, pool high-water, trust store bytes or None,
    {(stack size, pool size) the image reported})."""
    lines = re.findall(r"^budget: stack (\d+) of (\d+) bytes at most .*?; "
                       r"tls pool (\d+) of (\d+) bytes at most", text, re.M)
    if not lines:
        raise SystemExit("lwip_budget: FAIL: no 'budget:' line in the run's output")
    stack = max(int(l[0]) for l in lines)
    pool = max(int(l[2]) for l in lines)
    st = re.search(r"^trust store: \d+ anchors parsed into a \d+-byte TLS pool "
                   r"\((\d+) bytes in use\)", text, re.M)
    sizes = {(int(l[1]), int(l[3])) for l in lines}
    return stack, pool, int(st.group(1)) if st else None, sizes


def check(stack_hw, pool_hw, stack_budget, pool_budget):
    """[(what, high-water, x 5/4, budget, rule's budget, ok)]."""
    out = []
    for what, hw, budget, unit in (("stack", stack_hw, stack_budget, STACK_ROUND),
                                   ("tls pool", pool_hw, pool_budget, POOL_ROUND)):
        out.append((what, hw, (hw * 5 + 3) // 4, budget, rule(hw, unit),
                    hw * 5 <= budget * 4))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
    if len(args) != 3 or set(opts) - {"stack-budget", "pool-budget", "production-store",
                                      "just-under"}:
        sys.stderr.write(__doc__)
        return 2
    nm, image, log = args
    if not os.path.exists(log):
        # lwip_target skipped (no QEMU user networking): nothing to check
        print("lwip_budget: SKIP: no output of a run in %s" % log)
        return 77
    stack_budget, pool_budget = image_budgets(nm, image)
    with open(log, errors="replace") as f:
        stack_hw, pool_hw, store, sizes = read_log(f.read())
    if not set(opts) & {"stack-budget", "pool-budget", "just-under"}:
        if os.path.getmtime(log) < os.path.getmtime(image):
            raise SystemExit("lwip_budget: FAIL: %s is older than %s (no run of this image)"
                             % (log, image))
        if sizes != {(stack_budget, pool_budget)}:
            raise SystemExit("lwip_budget: FAIL: the run reported stack and pool sizes %s, "
                             "the image has %d and %d" % (sorted(sizes), stack_budget,
                                                          pool_budget))
    stack_budget = int(opts.get("stack-budget", stack_budget))
    pool_budget = int(opts.get("pool-budget", pool_budget))
    note = ""
    if "production-store" in opts:
        if store is None:
            raise SystemExit("lwip_budget: FAIL: no 'trust store: ... bytes in use' line")
        prod = int(opts["production-store"])
        note = " (the run's %d with its %d-byte trust store, %d with the image's %d-byte one)" \
            % (pool_hw, store, pool_hw - store + prod, prod)
        pool_hw = pool_hw - store + prod
    if opts.get("just-under") == "stack":
        stack_budget = (stack_hw * 5 + 3) // 4 - 1
    elif opts.get("just-under") == "pool":
        pool_budget = (pool_hw * 5 + 3) // 4 - 1
    elif "just-under" in opts:
        raise SystemExit("lwip_budget: --just-under=stack or --just-under=pool")
    bad = 0
    for what, hw, need, budget, least, ok in check(stack_hw, pool_hw, stack_budget, pool_budget):
        print("lwip_budget: %s high-water %d bytes%s, x 5/4 = %d, budget %d (the rule's "
              "least: %d): %s" % (what, hw, note if what == "tls pool" else "", need, budget,
                                  least, "ok" if ok else
                                  "FAIL: the high-water eats into the margin"))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

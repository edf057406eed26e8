#!/usr/bin/env python3
"""Checks that objects of a linked image sit in a given output section
(storage placement: CTXC_HISTORY_DEFINE_ATTR / CTXC_WORK_DEFINE_ATTR with a
section attribute).

    check_placement.py NM READELF IMAGE SECTION SYMBOL [SYMBOL...]

Each SYMBOL (a local static is fine: nm lists it) must lie wholly inside
output section SECTION of IMAGE (addresses from `readelf -S -W`, symbols
from `nm -S`). Prints one line per symbol; exit 1 when one is elsewhere or
missing, or the section does not exist.
"""
import subprocess
import sys


def main():
    if len(sys.argv) < 6:
        print(__doc__)
        return 2
    nm, readelf, image, section = sys.argv[1:5]
    wanted = sys.argv[5:]
    sect = None
    for line in subprocess.run([readelf, "-S", "-W", image], check=True,
                               capture_output=True, text=True).stdout.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 5 and parts[1] == section:
            sect = (int(parts[3], 16), int(parts[5], 16))
    if sect is None:
        print("check_placement: %s has no section %s" % (image, section))
        return 1
    lo, size = sect
    print("section %s: 0x%08x .. 0x%08x (%d bytes)" % (section, lo, lo + size, size))
    syms = {}
    for line in subprocess.run([nm, "-S", image], check=True,
                               capture_output=True, text=True).stdout.splitlines():
        p = line.split()
        if len(p) == 4:
            syms[p[3]] = (int(p[0], 16), int(p[1], 16))
    bad = 0
    for name in wanted:
        if name not in syms:
            print("MISSING %s" % name)
            bad += 1
            continue
        addr, n = syms[name]
        inside = lo <= addr and addr + n <= lo + size
        print("%s %s at 0x%08x, %d bytes" % ("ok" if inside else "OUTSIDE", name, addr, n))
        bad += 0 if inside else 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

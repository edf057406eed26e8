#!/usr/bin/env python3
"""Flash the library takes in linked Cortex-M4 images, read from their GNU ld
link maps (input sections kept after --gc-sections, grouped by object).

    minimal_size.py MAP [MAP...]

For each map: the bytes of .text/.rodata/.data sections that come from a
libctxc*.a archive, per object and in total, and the whole image's flash
(every input section placed in flash). Prints a markdown table per map and
one summary line per map: `<image>: libctxc <N> bytes of flash (image <M>)`.
"""
import os
import re
import sys

SECTION = re.compile(r"^ (\.(?:text|rodata|data)[^\s]*)(?:\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S+))?\s*$")
CONT = re.compile(r"^\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S+)\s*$")
ARCHIVE = re.compile(r"(lib[^/()]*ctxc[^/()]*\.a)\(([^)]+)\)$")


def read(path):
    per_obj, lib_total, image_total = {}, 0, 0
    pending = None
    in_discard = False
    with open(path) as f:
        for line in f:
            if line.startswith("/DISCARD/") or line.startswith("Discarded input sections"):
                in_discard = True
            if line.startswith("Memory map") or line.startswith("Linker script and memory map"):
                in_discard = False
            if in_discard:
                continue
            m = SECTION.match(line)
            if m:
                if m.group(2) is None:
                    pending = m.group(1)
                    continue
                size, src = int(m.group(3), 16), m.group(4)
            elif pending is not None:
                c = CONT.match(line)
                pending = None
                if not c:
                    continue
                size, src = int(c.group(2), 16), c.group(3)
            else:
                continue
            if int((m or c).group(1 if not m else 2), 16) == 0:
                continue  # not placed
            image_total += size
            a = ARCHIVE.search(src)
            if a:
                lib_total += size
                per_obj[a.group(2)] = per_obj.get(a.group(2), 0) + size
    return per_obj, lib_total, image_total


def main():
    lines = []
    for path in sys.argv[1:]:
        per_obj, lib, image = read(path)
        name = os.path.basename(path).replace(".map", ".elf")
        print("| object (in %s) | flash |" % name)
        print("|---|---:|")
        for obj in sorted(per_obj, key=lambda o: -per_obj[o]):
            print("| `%s` | %d |" % (obj.replace(".obj", ""), per_obj[obj]))
        print("| **libctxc total** | **%d** |\n" % lib)
        lines.append("%s: libctxc %d bytes of flash (image %d)" % (name, lib, image))
    for l in lines:
        print(l)


if __name__ == "__main__":
    main()

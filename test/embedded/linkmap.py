"""The footprint of a linked image, read from its GNU ld link map and from
SIZE_TOOL -B: what scenario_readme.py (the scenario image) and lwip_size.py
(the lwIP image) print, from one reader.

parts() puts every input section placed in the image into one part of the
caller's list: .text, .ARM.exidx, .init_array (and any extra flash output
sections) count as text, .data as data, .bss as bss; the .stack output
section (it has no input sections) adds its own size to the bss of the
stack part. table() is the markdown table of the parts and the whole image.
"""
import os
import re
import subprocess

_OUT = re.compile(r"^(\.[A-Za-z_.]+|/DISCARD/)\s")
_SECT = re.compile(r"^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
_HDR = re.compile(r"^\S+\s+0x[0-9a-f]+\s+0x([0-9a-f]+)")


def parts(map_path, count, classify, stack_part, flash_sections=()):
    """[text, data, bss] for each of `count` parts; classify(object, section
    name) gives an input section's part."""
    kinds = {".text": 0, ".ARM.exidx": 0, ".init_array": 0, ".data": 1,
             ".bss": 2, ".stack": 3}
    for name in flash_sections:
        kinds[name] = 0
    out = [[0, 0, 0] for _ in range(count)]
    out_kind, pending, started = None, None, False
    with open(map_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("Linker script and memory map"):
                started = True
                continue
            if not started:
                continue
            m = _OUT.match(line + " ")
            if m and not line.startswith(" "):
                out_kind = kinds.get(m.group(1))
                if out_kind == 3:
                    hdr = _HDR.match(line)
                    if hdr:
                        out[stack_part][2] = int(hdr.group(1), 16)
                continue
            if out_kind is None or out_kind == 3:
                continue
            if re.match(r"^ \S+$", line):
                pending = line.strip()
                continue
            m = _SECT.match(line)
            if not m:
                pending = None
                continue
            name = m.group(1) or pending
            pending = None
            size = int(m.group(3), 16)
            if name is None or size == 0 or name.startswith("*fill*"):
                continue
            out[classify(m.group(4), name)][out_kind] += size
    return out


def table(size_tool, image, names, part_sizes):
    """The footprint table (docs/footprint.md): one row per part, then the whole image."""
    lines = subprocess.run([size_tool, "-B", image], check=True,
                           capture_output=True, text=True).stdout.splitlines()
    text, data, bss = (int(x) for x in lines[1].split()[:3])
    rows = ["Image `%s` (bytes; flash = text + data, RAM = data + bss). The "
            "whole image from `%s`; the parts from the linker map, which lists "
            "mergeable string sections before merging, so the parts add up to "
            "a little more." % (os.path.basename(image),
                                os.path.basename(size_tool)), "",
            "| part | text | data | bss | flash | RAM |",
            "|---|---:|---:|---:|---:|---:|"]
    for name, (t, d, b) in zip(names, part_sizes):
        rows.append("| %s | %d | %d | %d | %d | %d |" % (name, t, d, b, t + d, d + b))
    rows.append("| **whole image** | **%d** | **%d** | **%d** | **%d** | **%d** |"
                % (text, data, bss, text + data, data + bss))
    return "\n".join(rows)

#!/usr/bin/env python3
"""Footprint of the lwIP image (boards/mps2-an386, issue 17).

    lwip_size.py SIZE_TOOL IMAGE.elf IMAGE.map [README.md]

Prints a markdown table: the whole image from SIZE_TOOL (arm-none-eabi-size
-B), its parts from the link map: the lwIP port (libctxc_port_lwip.a), lwIP
(liblwip213.a: its heap MEM_SIZE and pools are its .bss), mbedTLS
(libmbedtls228.a plus the TLS pool, the image's tls_pool array), the ctxc
library and romfs port, the example session in flash, the CA slot, the
board and image code, newlib + libgcc, the stack. With README.md, the table
is also written there between <!-- lwip-footprint:begin --> and
<!-- lwip-footprint:end -->.
"""
import os
import re
import subprocess
import sys

ORDER = [
    "libctxc_port_lwip.a (the lwIP port: transport, TLS memory, snprintf)",
    "liblwip213.a (lwIP 2.1.3 + altcp_tls_mbedtls; heap and pools)",
    "libmbedtls228.a (mbedTLS 2.28) + the TLS pool (tls_pool)",
    "libctxc.a (the library)",
    "libctxc_port_romfs.a (romfs port)",
    "the example session in flash (lwip_data.c)",
    "the CA slot (.ctxc_ca, 2 KiB)",
    "image + board code (llm_main.c, image_util.c, lan9118.c, net_board.c, startup.c)",
    "newlib + libgcc (string functions, rdimon, 64-bit division)",
    "stack (project.yml memory.stack)",
]


def classify(obj, name):
    if "libctxc_port_lwip.a(" in obj:
        return 0
    if "liblwip213.a(" in obj:
        return 1
    if "libmbedtls228.a(" in obj or name == ".bss.tls_pool":
        return 2
    if "libctxc.a(" in obj:
        return 3
    if "libctxc_port_romfs.a(" in obj:
        return 4
    if "lwip_data.c" in obj:
        return 5
    if "ca_slot.c" in obj:
        return 6
    if ".a(" in obj:
        return 8
    return 7


def parts_of(map_path):
    parts = [[0, 0, 0] for _ in ORDER]
    kinds = {".text": 0, ".ARM.exidx": 0, ".init_array": 0, ".ctxc_ca": 0,
             ".data": 1, ".bss": 2, ".stack": 3}
    out_kind, pending, started = None, None, False
    sect = re.compile(r"^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
    with open(map_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("Linker script and memory map"):
                started = True
                continue
            if not started:
                continue
            m = re.match(r"^(\.[A-Za-z_.]+|/DISCARD/)\s", line + " ")
            if m and not line.startswith(" "):
                out_kind = kinds.get(m.group(1))
                if out_kind == 3:
                    hdr = re.match(r"^\S+\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", line)
                    if hdr:
                        parts[9][2] = int(hdr.group(1), 16)
                continue
            if out_kind is None or out_kind == 3:
                continue
            if re.match(r"^ \S+$", line):
                pending = line.strip()
                continue
            m = sect.match(line)
            if not m:
                pending = None
                continue
            name = m.group(1) or pending
            pending = None
            size = int(m.group(3), 16)
            if name is None or size == 0 or name.startswith("*fill*"):
                continue
            parts[classify(m.group(4), name)][out_kind] += size
    return parts


def table(size_tool, image, map_path):
    out = subprocess.run([size_tool, "-B", image], check=True, capture_output=True,
                         text=True).stdout.splitlines()
    text, data, bss = (int(x) for x in out[1].split()[:3])
    rows = ["Image `%s` (bytes; flash = text + data, RAM = data + bss). The whole "
            "image from `%s`; the parts from the linker map (mergeable strings "
            "counted before merging, so the parts add up to a little more)."
            % (os.path.basename(image), os.path.basename(size_tool)), "",
            "| part | text | data | bss | flash | RAM |",
            "|---|---:|---:|---:|---:|---:|"]
    for name, (t, d, b) in zip(ORDER, parts_of(map_path)):
        rows.append("| %s | %d | %d | %d | %d | %d |" % (name, t, d, b, t + d, d + b))
    rows.append("| **whole image** | **%d** | **%d** | **%d** | **%d** | **%d** |"
                % (text, data, bss, text + data, data + bss))
    return "\n".join(rows)


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    t = table(*sys.argv[1:4])
    print(t)
    if len(sys.argv) == 5:
        readme = sys.argv[4]
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        begin, end = "<!-- lwip-footprint:begin -->", "<!-- lwip-footprint:end -->"
        if begin not in text or end not in text:
            print("lwip_size: no %s ... %s markers in %s" % (begin, end, readme),
                  file=sys.stderr)
            return 1
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        with open(readme, "w", encoding="utf-8") as f:
            f.write(head + begin + "\n" + t + "\n" + end + tail)
        print("lwip_size: wrote the table into " + readme)
    return 0


if __name__ == "__main__":
    sys.exit(main())

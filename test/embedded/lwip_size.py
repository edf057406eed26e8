#!/usr/bin/env python3
"""Footprint of the lwIP image (boards/mps2-an386, issue 17).

    lwip_size.py SIZE_TOOL IMAGE.elf IMAGE.map [DOC.md]

Prints a markdown table: the whole image from SIZE_TOOL (arm-none-eabi-size
-B), its parts from the link map: the lwIP port (libctxc_port_lwip.a), lwIP
(liblwip213.a: its heap MEM_SIZE and pools are its .bss), mbedTLS
(libmbedtls228.a plus the TLS pool, the image's tls_pool array), the ctxc
library and romfs port, the example session in flash, the trust store, the
board and image code, newlib + libgcc, the stack. With DOC.md (docs/footprint.md), the table
is also written there between <!-- lwip-footprint:begin --> and
<!-- lwip-footprint:end -->.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linkmap  # noqa: E402

ORDER = [
    "libctxc_port_lwip.a (the lwIP port: transport, TLS memory, snprintf)",
    "liblwip213.a (lwIP 2.1.3 + altcp_tls_mbedtls; heap and pools)",
    "libmbedtls228.a (mbedTLS 2.28) + the TLS pool (tls_pool)",
    "libctxc.a (the library)",
    "libctxc_port_romfs.a (romfs port)",
    "the example session in flash (lwip_data.c)",
    "the trust store (.ctxc_ca, 8 KiB; trust_store.c)",
    "image + board code (llm_main.c, image_util.c, lan9118.c, net_board.c, startup.c)",
    "newlib + libgcc (string functions, rdimon, 64-bit division)",
    "stack (MPS2_LWIP_STACK_BYTES, net/board_net.h: the budget of docs/device.md)",
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
    if "trust_store.c" in obj:
        return 6
    if ".a(" in obj:
        return 8
    return 7


def table(size_tool, image, map_path):
    sizes = linkmap.parts(map_path, len(ORDER), classify, 9,
                          flash_sections=(".ctxc_ca",))
    return linkmap.table(size_tool, image, ORDER, sizes)


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

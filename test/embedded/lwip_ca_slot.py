#!/usr/bin/env python3
"""Makes the trust store of the lwIP image (boards/mps2-an386/net/ca_slot.c).

    lwip_ca_slot.py CA.pem [MORE.pem ...] SLOT_BYTES OUT.bin

OUT.bin: every certificate of the PEM files, as DER one after the other,
after their total length (4 bytes, little endian), zero-padded to
SLOT_BYTES (the size of the image's .ctxc_ca section), ready for
objcopy --update-section .ctxc_ca=OUT.bin. The port parses them as
several trust anchors (port/lwip: DER certificates one after the other).
"""
import base64
import struct
import sys


def certificates(pem):
    ders, lines, inside = [], [], False
    with open(pem) as f:
        for line in f:
            line = line.strip()
            if line == "-----BEGIN CERTIFICATE-----":
                inside, lines = True, []
            elif line == "-----END CERTIFICATE-----" and inside:
                ders.append(base64.b64decode("".join(lines)))
                inside = False
            elif inside:
                lines.append(line)
    return ders


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    pems, size, out = sys.argv[1:-2], int(sys.argv[-2]), sys.argv[-1]
    ders = []
    for pem in pems:
        got = certificates(pem)
        if not got:
            print("lwip_ca_slot: no certificate in %s" % pem, file=sys.stderr)
            return 1
        ders += got
    der = b"".join(ders)
    blob = struct.pack("<I", len(der)) + der
    if len(blob) > size:
        print("lwip_ca_slot: %d certificates, %d bytes of DER, do not fit the %d-byte slot"
              % (len(ders), len(der), size), file=sys.stderr)
        return 1
    with open(out, "wb") as f:
        f.write(blob + b"\0" * (size - len(blob)))
    print("lwip_ca_slot: %s: %d certificates, %d bytes of DER into a %d-byte slot"
          % (" ".join(pems), len(ders), len(der), size))
    return 0


if __name__ == "__main__":
    sys.exit(main())

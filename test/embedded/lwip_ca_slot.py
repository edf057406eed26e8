#!/usr/bin/env python3
"""Makes the CA slot of the lwIP image (boards/mps2-an386/net/ca_slot.c).

    lwip_ca_slot.py CA.pem SLOT_BYTES OUT.bin

OUT.bin: the first certificate of CA.pem as DER, after its length (4 bytes,
little endian), zero-padded to SLOT_BYTES (the size of the image's .ctxc_ca
section), ready for objcopy --update-section .ctxc_ca=OUT.bin.
"""
import base64
import struct
import sys


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    pem, size, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    lines, inside = [], False
    with open(pem) as f:
        for line in f:
            line = line.strip()
            if line == "-----BEGIN CERTIFICATE-----":
                inside = True
            elif line == "-----END CERTIFICATE-----":
                break
            elif inside:
                lines.append(line)
    der = base64.b64decode("".join(lines)) if lines else b""
    if not der:
        print("lwip_ca_slot: no certificate in %s" % pem, file=sys.stderr)
        return 1
    blob = struct.pack("<I", len(der)) + der
    if len(blob) > size:
        print("lwip_ca_slot: %s: %d bytes of DER do not fit the %d-byte slot"
              % (pem, len(der), size), file=sys.stderr)
        return 1
    with open(out, "wb") as f:
        f.write(blob + b"\0" * (size - len(blob)))
    print("lwip_ca_slot: %s: %d bytes of DER into a %d-byte slot" % (pem, len(der), size))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The lwIP image's cost tables in docs/device.md (make device-tables).

    device_tables.py run OBJCOPY IMAGE LAB_IMAGE_OR_- SCENARIO EXAMPLE DOC QEMU...
    device_tables.py write LOG SCENARIO_LOG IMAGE LAB_IMAGE_OR_- DOC

run: makes the fixture's certificates and starts it (test/fixtures, in a
temporary directory; it stops by itself), runs the image through
lwip_image.py under QEMU with `-icount shift=0` (one guest instruction is
one nanosecond of virtual time, so the board's 25 MHz counter counts 40
instructions a tick), keeps the output as LOG next to DOC's build copy,
then `write`.

write: from the image's "cost:", "tls:" and "tls pool:" lines, the table of
each case (chain shape, suite and group, the handshake's and the records'
instructions with ms at 100 MHz and 240 MHz at one instruction a cycle, the
TLS pool's high-water mark, the stack of the call), and the flash of the
production and lab TLS profiles from arm-none-eabi-size, and the scenario
image's public entry points (SCENARIO, ctxc_scenario.elf, run under
-icount too: its "ticks:" lines, the longest call of each over the
scenario's histories); written between
<!-- device-tables:begin --> and <!-- device-tables:end --> of DOC.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BEGIN, END = "<!-- device-tables:begin -->", "<!-- device-tables:end -->"
TICK_INSTR = 40  # 25 MHz counter under -icount shift=0 (1 instruction = 1 ns)

SHAPES = {
    "ok": "fixture: P-256 leaf, P-256 CA (Python ssl)",
    "fe-p384": "P-256 leaf under P-384 root, SHA-384",
    "fe-rsa": "RSA-2048 leaf (PSS) <- RSA-2048 <- RSA-4096 root",
    "fe-p256": "P-256 leaf under P-256 root",
    "fe-p256-resumed": "the same, second call: session resumed",
    "fe-chacha-p384": "P-256 chain; ChaCha20-Poly1305, group P-384 forced",
    "fe-aes256-p256": "the RSA chain; AES-256-GCM, group P-256 forced",
}


def size_of(image):
    out = subprocess.run(["arm-none-eabi-size", image], capture_output=True, text=True,
                         check=True).stdout.splitlines()[1].split()
    return int(out[0]) + int(out[1]), int(out[1]) + int(out[2])


def ms(instr, mhz):
    return "%.1f" % (instr / (mhz * 1000.0))


def tables(log, image, lab):
    rows = []
    for case, shape in SHAPES.items():
        m = re.search(r"^cost: case %s: stack (\d+) bytes; TLS handshake (\d+) ticks, "
                      r"records (\d+) ticks" % re.escape(case), log, re.M)
        if not m:
            raise SystemExit("device_tables: no cost line for case %s in the log" % case)
        stack, hs, rec = int(m.group(1)), int(m.group(2)) * TICK_INSTR, int(m.group(3)) * TICK_INSTR
        block = log[log.index("case %s: before_send" % case):]
        hl = re.search(r"handshake done \(TLSv1\.2, (\S+), (group \S+|session resumed)\)", block)
        suite = "%s, %s" % (hl.group(1), hl.group(2)) if hl else "?"
        pm = re.search(r"^tls pool: %s: (\d+) bytes at most" % re.escape(case), log, re.M)
        pool = pm.group(1) if pm else "-"
        rows.append("| %s | %s | %s | %d | %s | %s | %d | %s | %s | %d |"
                    % (case, shape, suite, hs, ms(hs, 100), ms(hs, 240), rec,
                       ms(rec, 100), pool, stack))
    out = [
        "Measured by `make device-tables` (test/embedded/device_tables.py): the lwIP "
        "image's test run under QEMU with `-icount shift=0`, one guest instruction per "
        "nanosecond of virtual time. Instructions inside `mbedtls_ssl_handshake` (the "
        "handshake's computation, never its network waits) and inside "
        "`mbedtls_ssl_read`/`_write` (the request's and the answer's records), read from "
        "the board's 25 MHz counter (40 instructions a tick); ms at one instruction a "
        "cycle (a Cortex-M4 needs somewhat more cycles than instructions: a lower "
        "bound). TLS pool: the high-water mark of the connection's call (`tls pool:` "
        "lines; the parsed trust store of 4 anchors included). Stack: the painted stack "
        "of the whole `ctxc_session_before_send` over TLS.",
        "",
        "| case | chain | suite, group | handshake instructions | ms @100 MHz | "
        "ms @240 MHz | records instructions | records ms @100 MHz | TLS pool high-water "
        "(bytes) | stack (bytes) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ] + rows
    full = re.search(r"^cost: case fe-p256: .*TLS handshake (\d+)", log, re.M)
    res = re.search(r"^cost: case fe-p256-resumed: .*TLS handshake (\d+)", log, re.M)
    if full and res:
        f, r = int(full.group(1)) * TICK_INSTR, int(res.group(1)) * TICK_INSTR
        out += ["", "Session resumption saves %d of %d handshake instructions (%.1f%%) on "
                "the P-256 chain: %s ms instead of %s ms at 100 MHz."
                % (f - r, f, 100.0 * (f - r) / f, ms(r, 100), ms(f, 100))]
    flash, ram = size_of(image)
    out += ["", "| image `ctxc_lwip.elf` | flash (text + data) | RAM (data + bss) |",
            "|---|---:|---:|", "| production TLS profile | %d | %d |" % (flash, ram)]
    if lab and lab != "-" and os.path.exists(lab):
        lf, lr = size_of(lab)
        out.append("| lab TLS profile (`-DMPS2_TLS_PROFILE=lab`) | %d | %d |" % (lf, lr))
    return "\n".join(out)


def scenario_table(log):
    rows = re.findall(r"^ticks: (.+) (\d+) at most", log, re.M)
    if not rows:
        raise SystemExit("device_tables: no 'ticks:' lines from the scenario image")
    n = max(int(x) for x in re.findall(r"^\| \S+ +\| [^|]+\| CTXC_\w+ +\| (\d+)", log, re.M))
    out = ["", "The scenario image's public entry points (`ctxc_scenario.elf` under "
           "`-icount shift=0`; the longest call of each over the scenario's histories, "
           "the largest %d entries; instructions from the same 25 MHz counter):" % n, "",
           "| entry point | instructions | ms @100 MHz | ms @240 MHz |", "|---|---:|---:|---:|"]
    for name, ticks in rows:
        i = int(ticks) * TICK_INSTR
        out.append("| %s | %d | %s | %s |" % (name, i, "%.2f" % (i / 1e5), "%.2f" % (i / 2.4e5)))
    return "\n".join(out)


def write(log_path, scn_log_path, image, lab, doc):
    with open(log_path, errors="replace") as f:
        log = f.read()
    text = tables(log, image, lab)
    with open(scn_log_path, errors="replace") as f:
        text += "\n" + scenario_table(f.read())
    with open(doc) as f:
        s = f.read()
    if BEGIN not in s or END not in s:
        raise SystemExit("device_tables: %s has no %s ... %s markers" % (doc, BEGIN, END))
    a, b = s.index(BEGIN) + len(BEGIN), s.index(END)
    s = s[:a] + "\n" + text + "\n" + s[b:]
    with open(doc + ".tmp", "w") as f:
        f.write(s)
    os.replace(doc + ".tmp", doc)
    print(text)
    print("device_tables: wrote %s" % doc)


def run(objcopy, image, lab, scenario, example, doc, qemu):
    fixtures = os.path.join(ROOT, "test", "fixtures")
    with tempfile.TemporaryDirectory(prefix="ctxc-tables-") as d:
        fx = os.path.join(d, "fx")
        subprocess.run(["sh", os.path.join(fixtures, "make_certs.sh"), fx], check=True)
        subprocess.run([sys.executable, os.path.join(fixtures, "https_server.py"), "--dir", fx,
                        "--daemon", "--lifetime", "1500"], check=True)
        try:
            emu = qemu + ["-icount", "shift=0", "-kernel"] if qemu[-1] != "-kernel" else \
                qemu[:-1] + ["-icount", "shift=0", "-kernel"]
            t0 = time.monotonic()
            # under -icount the guest's clock runs slower than the host's:
            # the servers live longer, and the cases that race the host's
            # clock (the fixture's 2.5 s stall against a 1 s read timeout)
            # fail there; only the cost lines are used
            env = dict(os.environ, CTXC_LWIP_SERVER_LIFETIME="1200")
            run = subprocess.run([sys.executable, os.path.join(HERE, "lwip_image.py"), objcopy,
                                  image, fx, example] + emu, capture_output=True, text=True,
                                 errors="replace", timeout=1500, env=env)
        finally:
            subprocess.run([sys.executable, os.path.join(fixtures, "https_server.py"), "--dir",
                            fx, "--stop"])
        log_path = os.path.join(os.path.dirname(os.path.abspath(image)), "device_tables.log")
        with open(log_path, "w") as f:
            f.write(run.stdout + run.stderr)
        print("device_tables: the icount run took %.0f s (log %s)"
              % (time.monotonic() - t0, log_path))
        if "lwip image: " not in run.stdout:
            sys.stdout.write(run.stdout[-3000:])
            raise SystemExit("device_tables: the image did not finish under -icount")
    scn = subprocess.run(emu + [scenario], capture_output=True, text=True, errors="replace",
                         timeout=600)
    scn_log = os.path.join(os.path.dirname(os.path.abspath(image)), "device_tables_scenario.log")
    with open(scn_log, "w") as f:
        f.write(scn.stdout + scn.stderr)
    write(log_path, scn_log, image, lab, doc)


def main():
    a = sys.argv[1:]
    if a[:1] == ["write"] and len(a) == 6:
        write(a[1], a[2], a[3], a[4], a[5])
    elif a[:1] == ["run"] and len(a) >= 8:
        run(a[1], a[2], a[3], a[4], a[5], a[6], a[7:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

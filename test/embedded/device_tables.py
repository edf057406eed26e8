#!/usr/bin/env python3
"""The cost tables in docs/device.md (make device-tables).

    device_tables.py run OBJCOPY IMAGE LAB_IMAGE_OR_- SCENARIO EXAMPLE DOC QEMU...
    device_tables.py write LOG TRUST_LOG SCENARIO_LOG IMAGE LAB_IMAGE_OR_- DOC
    device_tables.py scenario SCENARIO DOC QEMU...

run: makes the fixture's certificates and starts it (test/fixtures, in a
temporary directory; it stops by itself), runs the image through
lwip_image.py under QEMU with `-icount shift=0` (one guest instruction is
one nanosecond of virtual time, so the board's 25 MHz counter counts 40
instructions a tick), keeps the output as LOG next to DOC's build copy,
runs it once more as built (lwip_image.py --trust=builtin: its own trust
store parsed, TRUST_LOG), runs the scenario image, then `write`.

write: from the image's "cost:", "tls:" and "tls pool:" lines, the table of
each case (chain shape, suite and group, the handshake's and the records'
instructions with ms at 100 MHz and 240 MHz at one instruction a cycle, the
TLS pool's high-water mark, the stack of the call), the flash of the
production and lab TLS profiles from arm-none-eabi-size, and the budgets of
the image's stack and TLS pool (lwip_budget.py: the run's "budget:" line,
the pool's high-water with the image's own trust store in place of the
tests'; it stops here, writing nothing, when a high-water x 5/4 does not
fit its budget); written between <!-- device-tables:begin --> and
<!-- device-tables:end --> of DOC. Then the scenario image's public entry
points (SCENARIO, ctxc_scenario.elf, under -icount too: its "ticks:" lines,
the longest call of each on the largest history, that history's name and
entries read from the run), between <!-- device-scenario:begin --> and
<!-- device-scenario:end -->.

scenario: the scenario image's run and its table only (seconds; `run`
takes minutes).
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import lwip_budget  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BEGIN, END = "<!-- device-tables:begin -->", "<!-- device-tables:end -->"
SCN_BEGIN, SCN_END = "<!-- device-scenario:begin -->", "<!-- device-scenario:end -->"
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
        lp = re.search(r"^poll: case %s: longest step (\d+) ticks .*public-key work in (\d+) "
                       r"slices" % re.escape(case), log, re.M)
        if not lp:
            raise SystemExit("device_tables: no poll line for case %s in the log" % case)
        step = int(lp.group(1)) * TICK_INSTR
        rows.append("| %s | %s | %s | %d | %s | %s | %s (%s) | %d | %s | %s | %d |"
                    % (case, shape, suite, hs, ms(hs, 100), ms(hs, 240),
                       "%.2f" % (step / 1e6), lp.group(2), rec, ms(rec, 100), pool, stack))
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
        "of the whole `ctxc_session_before_send` over TLS. Longest poll: the longest "
        "single step of the connection's work a poll runs (a `connect_poll`, or one "
        "`mbedtls_ssl_handshake` call inside a wait's pump), in ms of board time (one "
        "instruction a ns; x10 at 100 MHz), with the public-key work in slices of at most "
        "`MPS2_TLS_ECP_MAX_OPS` ECC operations; in brackets, the slices it ran in "
        "(0: nothing split, a resumed session; an RSA signature check is never split: "
        "an RSA key has no restartable verify).",
        "",
        "| case | chain | suite, group | handshake instructions | ms @100 MHz | "
        "ms @240 MHz | longest poll, ms board (slices) | records instructions | "
        "records ms @100 MHz | TLS pool high-water (bytes) | stack (bytes) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
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


def budget_table(log, trust_log, image):
    """The budgets of the image's stack and TLS pool (lwip_budget.py's rule)
    from the run (LOG) and the image as built (TRUST_LOG: its own trust
    store parsed); SystemExit when a high-water eats into its margin."""
    stack_budget, pool_budget = lwip_budget.image_budgets("arm-none-eabi-nm", image)
    stack_hw, pool_hw, store, sizes = lwip_budget.read_log(log)
    if sizes != {(stack_budget, pool_budget)}:
        raise SystemExit("device_tables: the run reported stack and pool sizes %s, the image "
                         "has %d and %d" % (sorted(sizes), stack_budget, pool_budget))
    m = re.search(r"^trust store: (\d+) anchors parsed into a \d+-byte TLS pool "
                  r"\((\d+) bytes in use\)", trust_log, re.M)
    n = re.search(r"^trust store: (\d+) anchors parsed", log, re.M)
    if not m or store is None or not n:
        raise SystemExit("device_tables: no 'trust store: ... (N bytes in use)' line")
    anchors, prod = int(m.group(1)), int(m.group(2))
    pool_prod = pool_hw - store + prod
    call = max(int(x) for x in re.findall(r"^cost: case \S+: stack (\d+) bytes", log, re.M))
    rows = lwip_budget.check(stack_hw, pool_prod, stack_budget, pool_budget)
    bad = [r for r in rows if not r[5]]
    out = ["", "Budgets of `ctxc_lwip.elf` (production TLS profile), checked by every run "
           "of the image (its `budget:` line; a failed check otherwise) and by ctest "
           "`lwip_budget` (test/embedded/lwip_budget.py on the `lwip_target` run, budgets "
           "read from the ELF). The rule: a budget holds its measured high-water x 5/4, "
           "rounded up to 512 bytes (stack) or 1 KiB (pool); the check fails when a run's "
           "high-water x 5/4 exceeds it. Stack: the deepest the run reaches from the top "
           "of the image's stack (main's frames included; the deepest single call, "
           "`ctxc_session_before_send` with its summary call over TLS, is %d bytes below "
           "its caller). TLS pool: the run's high-water (%d bytes, with the tests' %d "
           "anchors parsed into %d) with the image's own trust store in its place (%d "
           "anchors, %d bytes parsed: `lwip_image.py --trust=builtin`)."
           % (call, pool_hw, int(n.group(1)), store, anchors, prod), "",
           "| budget | measured high-water (bytes) | x 5/4 | the rule's budget | budget set "
           "(bytes) | spare over the high-water |",
           "|---|---:|---:|---:|---:|---:|"]
    names = {"stack": "stack (`MPS2_LWIP_STACK_BYTES`, the linker script's `__stack_size`)",
             "tls pool": "TLS pool (`MPS2_TLS_POOL_BYTES`)"}
    for what, hw, need, budget, least, ok in rows:
        out.append("| %s | %d | %d | %d | %d | %d (%.0f%%) |"
                   % (names[what], hw, need, least, budget, budget - hw,
                      100.0 * (budget - hw) / hw))
    if bad:
        print("\n".join(out))
        raise SystemExit("device_tables: FAIL: %s high-water x 5/4 over the budget"
                         % ", ".join(r[0] for r in bad))
    return "\n".join(out)


def history_bytes(log_dir):
    """Bytes of each scenario history's JSONL text, from the image's
    scenario_data.c (gen_histories.py's output next to the run's log); {}
    when it is not there."""
    try:
        src = read(os.path.join(log_dir, "scenario_data.c"))
    except OSError:
        return {}
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r'^\s*\{"([^"]+)", input_\d+, (\d+)\},', src, re.M)}


# Entry points whose cost follows the history's text: a row of
# instructions per byte of it after the table's rows.
PER_BYTE = ("ctxc_import_text", "ctxc_export")


def scenario_table(log, sizes=None):
    sizes = sizes or {}
    rows = re.findall(r"^ticks: (.+) (\d+) at most \(25 MHz counter; history (\S+), "
                      r"(\d+) entries\)", log, re.M)
    if not rows:
        raise SystemExit("device_tables: no 'ticks:' lines from the scenario image")
    n = max(int(r[3]) for r in rows)
    hists = sorted({r[2] for r in rows if int(r[3]) == n})
    out = ["The scenario image's public entry points (`ctxc_scenario.elf` under "
           "`-icount shift=0`, measured by `make device-tables` or `make device-tables-scenario`; instructions from the same "
           "25 MHz counter, ms at one instruction a cycle): the longest call of each on the "
           "scenario's largest histories, %d entries (%s; gen_histories.py), with the board's "
           "96 KiB arena and no work-area index. `ctxc_settings_load` runs once, before any "
           "history. `ctxc_session_before_send` runs with the two LLM-free strategies; with "
           "middle-out or one-shot it needs a provider over the network, which this image "
           "has not: their summary call's TLS cost is in the lwIP image's table above (on the "
           "example session)." % (n, ", ".join(hists)), "",
           "| entry point | history (entries) | instructions | ms @100 MHz | ms @240 MHz |",
           "|---|---|---:|---:|---:|"]
    per_byte = []
    for name, ticks, hist, entries in rows:
        i = int(ticks) * TICK_INSTR
        where = "%s (%s)" % (hist, entries) if hist != "-" else "none"
        out.append("| %s | %s | %d | %s | %s |"
                   % (name, where, i, "%.2f" % (i / 1e5), "%.2f" % (i / 2.4e5)))
        if name in PER_BYTE and sizes.get(hist):
            per_byte.append("| %s, instructions per byte of the history's text (%d bytes) "
                            "| %s | %.1f | - | - |" % (name, sizes[hist], where,
                                                       i / sizes[hist]))
    if per_byte:
        out += per_byte
        out += ["", "Per byte: the call's instructions over the bytes of the history's "
                "JSON Lines text (scenario_data.c); `ctxc_export`'s include the image's "
                "sink, which takes a CRC-32 of every byte and copies it."]
    return "\n".join(out)


def replace_block(doc, begin, end, text):
    with open(doc) as f:
        s = f.read()
    if begin not in s or end not in s:
        raise SystemExit("device_tables: %s has no %s ... %s markers" % (doc, begin, end))
    a, b = s.index(begin) + len(begin), s.index(end)
    s = s[:a] + "\n" + text + "\n" + s[b:]
    with open(doc + ".tmp", "w") as f:
        f.write(s)
    os.replace(doc + ".tmp", doc)


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def write(log_path, trust_log_path, scn_log_path, image, lab, doc):
    log = read(log_path)
    text = tables(log, image, lab) + "\n" + budget_table(log, read(trust_log_path), image)
    scn = scenario_table(read(scn_log_path),
                         history_bytes(os.path.dirname(os.path.abspath(scn_log_path))))
    replace_block(doc, BEGIN, END, text)
    replace_block(doc, SCN_BEGIN, SCN_END, scn)
    print(text + "\n\n" + scn)
    print("device_tables: wrote %s" % doc)


def icount(qemu):
    return qemu + ["-icount", "shift=0", "-kernel"] if qemu[-1] != "-kernel" else \
        qemu[:-1] + ["-icount", "shift=0", "-kernel"]


def run_scenario(emu, scenario, log_dir):
    scn = subprocess.run(emu + [scenario], capture_output=True, text=True, errors="replace",
                         timeout=600)
    scn_log = os.path.join(log_dir, "device_tables_scenario.log")
    with open(scn_log, "w") as f:
        f.write(scn.stdout + scn.stderr)
    if scn.returncode != 0:
        sys.stdout.write((scn.stdout + scn.stderr)[-3000:])
        raise SystemExit("device_tables: the scenario image failed (exit %d)" % scn.returncode)
    return scn_log


def run(objcopy, image, lab, scenario, example, doc, qemu):
    fixtures = os.path.join(ROOT, "test", "fixtures")
    log_dir = os.path.dirname(os.path.abspath(image))
    emu = icount(qemu)
    with tempfile.TemporaryDirectory(prefix="ctxc-tables-") as d:
        fx = os.path.join(d, "fx")
        subprocess.run(["sh", os.path.join(fixtures, "make_certs.sh"), fx], check=True)
        subprocess.run([sys.executable, os.path.join(fixtures, "https_server.py"), "--dir", fx,
                        "--daemon", "--lifetime", "1500"], check=True)
        try:
            t0 = time.monotonic()
            # under -icount the guest's clock runs slower than the host's:
            # the servers live longer, and the cases that race the host's
            # clock (the fixture's 2.5 s stall against a 1 s read timeout)
            # fail there; only the cost lines are used
            env = dict(os.environ, CTXC_LWIP_SERVER_LIFETIME="1200")
            run = subprocess.run([sys.executable, os.path.join(HERE, "lwip_image.py"), objcopy,
                                  image, fx, example] + emu, capture_output=True, text=True,
                                 errors="replace", timeout=1500, env=env)
            # the image as built: its own trust store parsed (the pool budget)
            trust = subprocess.run([sys.executable, os.path.join(HERE, "lwip_image.py"),
                                    "--trust=builtin", objcopy, image, fx, example] + emu,
                                   capture_output=True, text=True, errors="replace",
                                   timeout=600, env=env)
        finally:
            subprocess.run([sys.executable, os.path.join(fixtures, "https_server.py"), "--dir",
                            fx, "--stop"])
        log_path = os.path.join(log_dir, "device_tables.log")
        with open(log_path, "w") as f:
            f.write(run.stdout + run.stderr)
        trust_log = os.path.join(log_dir, "device_tables_trust.log")
        with open(trust_log, "w") as f:
            f.write(trust.stdout + trust.stderr)
        print("device_tables: the icount runs took %.0f s (logs %s, %s)"
              % (time.monotonic() - t0, log_path, trust_log))
        if "lwip image: " not in run.stdout:
            sys.stdout.write(run.stdout[-3000:])
            raise SystemExit("device_tables: the image did not finish under -icount")
        if "lwip_image: trust builtin: " not in trust.stdout:
            sys.stdout.write(trust.stdout[-3000:])
            raise SystemExit("device_tables: the image as built failed its trust store run")
    write(log_path, trust_log, run_scenario(emu, scenario, log_dir), image, lab, doc)


def scenario_only(scenario, doc, qemu):
    log = read(run_scenario(icount(qemu), scenario,
                            os.path.dirname(os.path.abspath(scenario))))
    text = scenario_table(log, history_bytes(os.path.dirname(os.path.abspath(scenario))))
    replace_block(doc, SCN_BEGIN, SCN_END, text)
    print(text)
    print("device_tables: wrote the scenario table into %s" % doc)


def main():
    a = sys.argv[1:]
    if a[:1] == ["write"] and len(a) == 7:
        write(a[1], a[2], a[3], a[4], a[5], a[6])
    elif a[:1] == ["run"] and len(a) >= 8:
        run(a[1], a[2], a[3], a[4], a[5], a[6], a[7:])
    elif a[:1] == ["scenario"] and len(a) >= 4:
        scenario_only(a[1], a[2], a[3:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

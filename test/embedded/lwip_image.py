#!/usr/bin/env python3
"""Runs the lwIP image (boards/mps2-an386, issue 17) against the fixture.

    lwip_image.py [--untrusted-ca | --providers | --job | --lab | --trust=MODE]
                  OBJCOPY IMAGE FIXTURE_DIR EXAMPLE.jsonl EMULATOR...

  1. QEMU user networking must be there (`<qemu> -netdev help` lists
     "user"); without it: exit 77 (ctest SKIP_RETURN_CODE) with a message.
  2. The fixture's CA (FIXTURE_DIR/ca.pem, made afresh by make_certs.sh on
     every run) goes into a copy of the image's CA slot (.ctxc_ca, via
     lwip_ca_slot.py + objcopy --update-section).
  3. The image runs under the emulator with -nic user,model=lan9118 and
     the ports of the fixture's "device", "wronghost" and "silent"
     endpoints and a test id on its semihosting command line; its output
     is shown.
  4. Checked from the output: the TLS handshake done (its connect driven
     in steps by the HTTP client: connect answering CTXC_E_IN_PROGRESS,
     then wait + connect_poll), the transport's steps (a GET without wait,
     wait() on an idle connection, the connect timeout from connect_poll),
     the wrong-host
     certificate refused, each fault's CRC identical before/after, the
     summary received, the invariant, 0 failed checks.
  4a. The front end (test/fixtures/frontend_server.go, built with Go: a
     server that does not negotiate max_fragment_length, writes 16 KiB
     records and prefers X25519; chains of make_frontend_certs.sh whose
     roots are in the trust store): the P-384-root, RSA-4096-root and P-256
     chains compress with group secp256r1 (the image offers P-256 and
     P-384 only: its public-key work runs in slices, and mbedTLS cannot
     stop an X25519 key exchange); the ECDSA chains' handshakes in slices,
     the RSA chain's whole; a bad MAC, a record too large and
     a fatal alert (sealed with the connection's keys by the front end's
     alert endpoint; with and without the TCP close right after it)
     surface as errors with mbedTLS's code in under a second; the fe-ok
     answer streamed (OpenAI SSE in 16 KiB records, events packed into them
     and cut across them) brings the same summary and compressed history as
     unstreamed; a close without close_notify inside a body is an error;
     expired and not-yet-valid leaves are refused (the time from the test's NTP
     responder, SNTP); its log shows 16 KiB records sent and no
     max_fragment_length asked or answered. Before SNTP TLS is refused.
  5. Checked from the fixture's record (GET /__requests?test=ID): nothing
     reached the wronghost endpoint; the three requests went to the device
     endpoint as POST /v1/chat/completions with Host fixture.ctxc.test:PORT;
     the fixture-ok request carried the middle of the example session (the start
     of every summarised entry's text, none of the kept top and bottom
     entries' texts),
     after the system part and before the trigger.

With --untrusted-ca (the self-test of the verification) the slot gets
FIXTURE_DIR/other-ca.pem, a CA that signed none of the fixture's
certificates: every handshake must be refused as not signed by the trusted
CA, the image must fail (its ok case cannot compress), every history must
stay identical and the fixture must record no request.

--providers, --trust=MODE, --job and --lab: see run_providers, run_trust,
run_job and run_lab (--lab: the image of the lab TLS profile).
"""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
# seconds the test's own servers (NTP responder, front end) live; longer
# for the slow -icount run of device_tables.py
LIFETIME = int(os.environ.get("CTXC_LWIP_SERVER_LIFETIME", "150"))


def fail(msg):
    print("lwip_image: FAIL: " + msg, flush=True)
    sys.exit(1)


def ports_of(d):
    ports = {}
    with open(os.path.join(d, "ports.txt")) as f:
        for line in f:
            k, v = line.split()
            ports[k] = int(v)
    return ports


def first_text(entry):
    for b in entry.get("blocks", []):
        if b.get("type") == "text" and isinstance(b.get("text"), str):
            return b["text"]
    return ""


class NtpResponder:
    """A tiny NTP server on 127.0.0.1 (the image reaches it as 10.0.2.2):
    answers mode-3 requests with the host's time. Bounded: at most 50
    answers, stops by itself after `lifetime` seconds or on stop()."""

    NTP_1970 = 2208988800

    def __init__(self, lifetime=None):
        lifetime = lifetime or LIFETIME
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.answered = 0
        self.deadline = time.monotonic() + lifetime
        self.stopped = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def ts(self, t):
        sec = int(t) + self.NTP_1970
        return struct.pack("!II", sec & 0xffffffff, int((t % 1) * (1 << 32)))

    def run(self):
        while not self.stopped and self.answered < 50 and time.monotonic() < self.deadline:
            try:
                data, peer = self.sock.recvfrom(512)
            except socket.timeout:
                continue
            if len(data) < 48 or (data[0] & 7) != 3:
                continue
            now = time.time()
            reply = bytes([0x24, 1, data[2], 0xec]) + b"\0" * 8 + b"LOCL" + self.ts(now) + \
                data[40:48] + self.ts(now) + self.ts(now)
            self.sock.sendto(reply, peer)
            self.answered += 1
        self.sock.close()

    def stop(self):
        self.stopped = True
        self.thread.join(timeout=2)


class DnsResponder:
    """A tiny DNS server on 127.0.0.1 (the image reaches it as 10.0.2.2,
    --dns=10.0.2.2:PORT): A records for the names of `names` (name ->
    dotted IPv4), NXDOMAIN for any other. Bounded like NtpResponder; the
    names asked are kept in `asked`."""

    def __init__(self, names, lifetime=None):
        self.names = {k.lower(): v for k, v in names.items()}
        self.asked = []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.deadline = time.monotonic() + (lifetime or LIFETIME)
        self.stopped = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopped and len(self.asked) < 50 and time.monotonic() < self.deadline:
            try:
                q, peer = self.sock.recvfrom(512)
            except socket.timeout:
                continue
            if len(q) < 17:
                continue
            labels, i = [], 12
            while i < len(q) and q[i] != 0:
                labels.append(q[i + 1:i + 1 + q[i]].decode("ascii", "replace"))
                i += 1 + q[i]
            question = q[12:i + 5]
            name = ".".join(labels).lower()
            self.asked.append(name)
            addr = self.names.get(name)
            if addr is None:
                reply = q[:2] + b"\x81\x83" + b"\x00\x01\x00\x00\x00\x00\x00\x00" + question
            else:
                reply = q[:2] + b"\x81\x80" + b"\x00\x01\x00\x01\x00\x00\x00\x00" + question + \
                    b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04" + \
                    bytes(int(x) for x in addr.split("."))
            self.sock.sendto(reply, peer)
        self.sock.close()

    def stop(self):
        self.stopped = True
        self.thread.join(timeout=2)


def start_frontend(work, fxdir):
    """The front-end server (test/fixtures/frontend_server.go): its chains
    made by make_frontend_certs.sh, built with Go (Debian golang-go), started
    with a lifetime (it stops by itself). Answers (process, ports, dir)."""
    fe = os.path.join(work, "fe")
    fixtures = os.path.join(HERE, "..", "fixtures")
    subprocess.run(["sh", os.path.join(fixtures, "make_frontend_certs.sh"), fe], check=True)
    go = shutil.which("go") or ("/usr/lib/go/bin/go" if os.path.exists("/usr/lib/go/bin/go") else None)
    if go is None:
        fail("no Go toolchain for the front-end server (Debian golang-go; `make test` installs it)")
    env = dict(os.environ, GOCACHE=os.path.join(os.path.dirname(os.path.abspath(fxdir)), "go-cache"),
               GOPATH=os.path.join(work, "gopath"), GO111MODULE="off", GOFLAGS="")
    exe = os.path.join(work, "frontend_server")
    subprocess.run([go, "build", "-o", exe, os.path.join(fixtures, "frontend_server.go")],
                   check=True, env=env, timeout=600)
    proc = subprocess.Popen([exe, "-dir", fe, "-lifetime", str(LIFETIME)])
    path = os.path.join(fe, "frontend-ports.txt")
    for _ in range(100):
        if os.path.exists(path):
            break
        time.sleep(0.1)
    else:
        proc.kill()
        fail("the front-end server wrote no ports within 10 s")
    ports = {}
    with open(path) as f:
        for line in f:
            k, v = line.split()
            ports[k] = int(v)
    return proc, ports, fe


def check_frontend(out, fe, feports):
    """The front-end cases of the output, and the server's own log."""
    for name, kx in (("p384", "ECDSA"), ("rsa", "RSA"), ("p256", "ECDSA")):
        want = (r"tls: fixture\.ctxc\.test:%d handshake done \(TLSv1\.2, TLS-ECDHE-%s-WITH-\S+, "
                r"group secp256r1\)" % (feports[name], kx))
        if not re.search(want, out):
            fail("no handshake line /%s/" % want)
        if not re.search(r"case fe-%s: CTXC_OK" % name, out):
            fail("case fe-%s did not compress" % name)
    # the public-key work in slices (behaviour only: this run's board
    # clock is the host's, so its times are not asserted; make
    # device-tables measures them under -icount): every ECDHE handshake's
    # public-key work stops in several slices, ECDHE-RSA's key exchange
    # too (the port turns mbedTLS's restart on for it)
    for case, sliced in (("fe-p384", True), ("fe-p256", True), ("fe-chacha-p384", True),
                         ("fe-rsa", True)):
        m = re.search(r"^poll: case %s: longest step (\d+) ticks .* in (\d+) slices$" % case,
                      out, re.M)
        if not m:
            fail("no poll line for case %s" % case)
        if (int(m.group(2)) >= 2) != sliced:
            fail("case %s: the public-key work in %s slices (%s)"
                 % (case, m.group(2), "want 2 or more" if sliced else "want none"))
    for name, suite, group in (("chacha", "ECDHE-ECDSA-WITH-CHACHA20-POLY1305-SHA256", "secp384r1"),
                               ("aes256", "ECDHE-RSA-WITH-AES-256-GCM-SHA384", "secp256r1")):
        want = (r"tls: fixture\.ctxc\.test:%d handshake done \(TLSv1\.2, TLS-%s, group %s\)"
                % (feports[name], suite, group))
        if not re.search(want, out):
            fail("no handshake line /%s/" % want)
        if not re.search(r"case fe-%s-\w+: CTXC_OK" % name, out):
            fail("case fe-%s did not compress" % name)
    for case, code in (("badmac", "-0x7180"), ("bigrecord", "-0x7100")):
        m = re.search(r"case fe-%s: before_send.*?\ntls: [^\n]*handshake done[^\n]*\n"
                      r"tls: recv error (\d+) ms after the request: ([^\n]*)" % case, out, re.S)
        if not m or "(%s)" % code not in m.group(2):
            fail("fe-%s: no receive error with mbedTLS's code %s" % (case, code))
        if int(m.group(1)) >= 1000:
            fail("fe-%s: the error took %s ms to surface" % (case, m.group(1)))
        # the caller's error: CTXC_E_TLS with mbedTLS's text and code
        m = re.search(r"case fe-%s: CTXC_E_TLS: ([^\n]*)" % case, out)
        if not m or "(%s)" % code not in m.group(1) or "SSL - " not in m.group(1):
            fail("fe-%s: the caller's error is not CTXC_E_TLS with mbedTLS's text and code %s"
                 % (case, code))
    # a fatal alert sealed with the connection's keys, in the body: mbedTLS's
    # MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE at once; with the close right
    # after it the alert is still the error (not the missing close_notify)
    alerts = []
    for case in ("alert", "alert-close"):
        m = re.search(r"case fe-%s: before_send.*?\ntls: [^\n]*handshake done[^\n]*\n"
                      r"tls: recv error (\d+) ms after the request: ([^\n]*)" % case, out, re.S)
        if not m or "(-0x7780)" not in m.group(2):
            fail("fe-%s: no receive error with mbedTLS's fatal-alert code -0x7780" % case)
        if int(m.group(1)) >= 1000:
            fail("fe-%s: the error took %s ms to surface" % (case, m.group(1)))
        c = re.search(r"case fe-%s: CTXC_E_TLS: ([^\n]*)" % case, out)
        if not c or "(-0x7780)" not in c.group(1) or "SSL - A fatal alert message" not in c.group(1):
            fail("fe-%s: the caller's error is not CTXC_E_TLS with mbedTLS's fatal-alert text "
                 "and code" % case)
        alerts.append("%s %s ms" % (case, m.group(1)))
    # the streamed answer (SSE in 16 KiB records) brought the summary the
    # unary one did: the same summary bytes, the same compressed history
    sums = {}
    for case in ("fe-p256", "fe-p256-stream"):
        m = re.search(r"^case %s: summary (\d+) bytes, crc (\w+); history export (\d+) bytes, "
                      r"crc (\w+)$" % case, out, re.M)
        if not m or int(m.group(1)) == 0:
            fail("%s: no summary line" % case)
        sums[case] = m.groups()
    if sums["fe-p256"] != sums["fe-p256-stream"]:
        fail("the streamed summary differs from the unary one: %s vs %s"
             % (sums["fe-p256-stream"], sums["fe-p256"]))
    if not re.search(r"case fe-p256-stream: before_send.*?\ntls: fixture\.ctxc\.test:%d handshake "
                     r"done.*?\ncase fe-p256-stream: CTXC_OK" % feports["p256"], out, re.S):
        fail("fe-p256-stream: no call to the p256 front end that compressed")
    if not re.search(r"case fe-p256-resumed: before_send.*?\ntls: fixture\.ctxc\.test:%d handshake done "
                     r"\(TLSv1\.2, \S+, session resumed\).*?\ncase fe-p256-resumed: CTXC_OK"
                     % feports["p256"], out, re.S):
        fail("the second call to the p256 front end did not resume the session")
    if not re.search(r"tls: recv error \d+ ms after the request: .*without TLS close_notify", out):
        fail("fe-cut: the close without close_notify was not an error")
    if not re.search(r"case fe-cut: CTXC_E_NETWORK: .*without TLS close_notify", out):
        fail("fe-cut: the caller's error does not say the close came without close_notify")
    if not re.search(r"connect refused: CTXC_E_TLS: server certificate rejected: .*validity has expired", out):
        fail("fe-expired: the expired leaf was not refused as expired")
    if not re.search(r"connect refused: CTXC_E_TLS: server certificate rejected: .*validity starts in the future", out):
        fail("fe-notyet: the leaf not valid yet was not refused as such")
    with open(os.path.join(fe, "frontend.log")) as f:
        log = f.read()
    sys.stdout.write(log)
    # issue 41 item 9: the refused leaves are answered with a fatal alert
    # before the close (Go's handshake error: "remote error: tls: ...";
    # "EOF" or a reset when the device closed without one)
    refused = []
    for name in ("expired", "notyet"):
        errs = re.findall(r"^handshake %s failed: (.*)$" % name, log, re.M)
        if not errs:
            fail("fe-%s: the front end saw no refused handshake" % name)
        silent = [e for e in errs if "remote error: tls:" not in e]
        if silent:
            fail("fe-%s: the device refused the certificate without a TLS alert (the front "
                 "end read: %s)" % (name, silent[0]))
        refused.append("%s: %s" % (name, errs[0].split("remote error: tls: ")[1]))
    print("lwip_image: front end: refused certificates answered with a fatal alert (%s)"
          % ", ".join(refused))
    for case in ("fe-alert", "fe-alert-close"):
        if not re.search(r"^alert alert seq=\d+ desc=80 close=%s$"
                         % ("yes" if case.endswith("close") else "no"), log, re.M):
            fail("%s: the front end did not send its sealed fatal alert" % case)
    m = re.search(r"^sse p256 events=(\d+) bytes=(\d+) split=(\d+) packed=(\d+)\n"
                  r"records p256 app=([\d,]+)$", log, re.M)
    if not m:
        fail("the front end wrote no streamed answer")
    ev, sse_bytes, split, packed, recs = m.groups()
    if int(split) < 1 or int(packed) < 2 or max(int(x) for x in recs.split(",")) < 16384:
        fail("the streamed answer was not SSE events packed into and cut across 16 KiB "
             "records: %s" % m.group(0))
    stream_line = ("%s SSE events (%s bytes) in records of %s bytes, %s events cut across "
                   "records, up to %s in one" % (ev, sse_bytes, recs, split, packed))
    for line in re.findall(r"^serverhello \S+ ext=\[([^\]]*)\]", log, re.M):
        if "1" in line.split():
            fail("the front end answered max_fragment_length")
    if re.search(r"^hello \S+ mfl=yes", log, re.M):
        fail("the device asked for max_fragment_length (production profile must not)")
    if not re.search(r"^handshake p256 done resumed=true", log, re.M):
        fail("the front end saw no resumed handshake")
    big = [max(int(x) for x in m.split(",")) for m in re.findall(r"^records \S+ app=([\d,]+)", log, re.M)]
    if len(big) < 5 or min(big) < 16384:
        fail("the front end's answers were not written as 16 KiB records: %s" % big)
    print("lwip_image: front end: 3 chains (P-384 root, RSA-4096 root, P-256) with group secp256r1, "
          "ChaCha20-Poly1305 over P-384 and AES-256-GCM over P-256, "
          "records of %s bytes received, no max_fragment_length; bad MAC, record too large and "
          "close without close_notify reported, expired and not-yet-valid refused, the second "
          "call resumed" % big)
    print("lwip_image: front end: fatal alert (internal_error, sealed with the connection's "
          "keys) in the body reported as CTXC_E_TLS -0x7780: %s" % ", ".join(alerts))
    print("lwip_image: front end: streamed (OpenAI SSE): %s; summary %s bytes crc %s, history "
          "export %s bytes crc %s, the same as the unary answer's"
          % ((stream_line,) + sums["fe-p256-stream"]))


def records(ports, test_id):
    url = "http://127.0.0.1:%d/__requests?test=%s" % (ports["plain"], test_id)
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def refusals_alerted(ports, since, what):
    """Issue 41 item 9: a refused server certificate is answered with a
    fatal alert before the connection ends (RFC 5246 7.2.2). The fixture
    records every handshake its client ended on the wronghost endpoint with
    the alert its read saw ("" when the connection ended without one)."""
    url = "http://127.0.0.1:%d/__handshakes" % ports["plain"]
    with urllib.request.urlopen(url, timeout=10) as r:
        hs = [h for h in json.load(r) if h["port"] == "wronghost" and h["time"] >= since]
    if not hs:
        fail("%s: the fixture recorded no refused handshake on the wronghost endpoint" % what)
    silent = [h["error"] for h in hs if not h["alert"]]
    if silent:
        fail("%s: %d of %d refused handshakes ended without a TLS alert (the server read: %s)"
             % (what, len(silent), len(hs), silent[0]))
    alerts = sorted(set(h["alert"] for h in hs))
    print("lwip_image: %s: %d refused handshakes, each answered with an alert (%s)"
          % (what, len(hs), ", ".join(alerts)))
    return alerts


def check_untrusted(status, out, ports, test_id, took):
    refused = re.findall(r"connect refused: CTXC_E_TLS: server certificate rejected: "
                         r".*not correctly signed by the trusted CA", out)
    if len(refused) != 4:
        fail("expected 4 handshakes refused as not signed by the trusted CA, saw %d"
             % len(refused))
    if "handshake done" in out:
        fail("a handshake succeeded with an untrusted CA")
    if status == 0 or not re.search(r"lwip image: \d+ checks, [1-9]\d* failed", out):
        fail("the image passed with an untrusted CA (status %d)" % status)
    same = re.findall(r"\| (\S+) +\| CTXC_E_TLS +\| (\d+) +\| (\d+) +\| \2 +\| \3 +\| "
                      r"(\S+) \| \4 \|", out)
    if len(same) != 4:
        fail("not every history stayed identical: %d of 4 rows" % len(same))
    if records(ports, test_id):
        fail("the fixture recorded a request although every handshake was refused")
    print("lwip_image: untrusted CA: 4 handshakes refused, 4 histories identical, no "
          "request recorded; lwip_image: ok (%.1f s)" % took)
    return 0


def main():
    argv = sys.argv[1:]
    untrusted = argv[:1] == ["--untrusted-ca"]
    if untrusted:
        argv = argv[1:]
    trust = None
    if argv[:1] and argv[0].startswith("--trust="):
        trust, argv = argv[0][8:], argv[1:]
    providers = argv[:1] == ["--providers"]
    if providers:
        argv = argv[1:]
    job = argv[:1] == ["--job"]
    if job:
        argv = argv[1:]
    lab = argv[:1] == ["--lab"]
    if lab:
        argv = argv[1:]
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    objcopy, image, fxdir, example = argv[:4]
    emu = argv[4:]
    qemu = emu[0]
    try:
        nets = subprocess.run([qemu, "-M", "none", "-netdev", "help"], capture_output=True,
                              text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        nets = ""
        print("lwip_image: %s -netdev help: %s" % (qemu, e))
    if not re.search(r"^user$", nets, re.M):
        print("lwip_image: SKIP: QEMU user networking is unavailable (%s -netdev help "
              "does not list 'user'); the lwIP image needs -nic user,model=lan9118" % qemu)
        return SKIP
    if not os.path.exists(image):
        fail("%s not built (`make test` builds it in the cortex-m4 tree%s once "
             "port/lwip/fetch_sources.sh has fetched lwIP and mbedTLS)"
             % (image, " and, -DMPS2_TLS_PROFILE=lab, in cortex-m4-lab" if lab else ""))
    ports = ports_of(fxdir)
    with tempfile.TemporaryDirectory(prefix="ctxc-lwip-") as work:
        if trust is not None:
            return run_trust(objcopy, image, fxdir, emu, ports, work, trust)
        if providers:
            return run_providers(objcopy, image, fxdir, emu, ports, work)
        if job:
            st = run_job(objcopy, image, fxdir, emu, ports, work)
            if st != 0:
                return st
            return run_job(objcopy, image, fxdir, emu, ports, work, whole=True)
        if lab:
            return run_lab(objcopy, image, fxdir, example, emu, ports, work)
        return run_image(objcopy, image, fxdir, example, emu, ports, work, untrusted)


PROVIDERS = (  # provider, base URL path, request path, key header
    ("openai", "/v1", "/v1/chat/completions", "authorization"),
    ("anthropic", "", "/v1/messages", "x-api-key"),
    ("gemini", "", "/v1beta/models/fixture-ok:", "x-goog-api-key"),
)


def run_providers(objcopy, image, fxdir, emu, ports, work):
    """The device's endpoint from its command line (--call): every provider
    format of the fixture, streamed and not, each a run of the image with
    --provider, --base-url, --model, --key and --stream / --no-stream; the
    summary must come back and the fixture's record show the provider's
    request (path, key header, stream flag)."""
    size = int(subprocess.run([objcopy.replace("objcopy", "readelf"), "-S", "-W", image],
                              capture_output=True, text=True).stdout.split(".ctxc_ca")[1]
               .split()[3], 16)
    slot = os.path.join(work, "ca_slot.bin")
    subprocess.run([sys.executable, os.path.join(HERE, "lwip_ca_slot.py"),
                    os.path.join(fxdir, "ca.pem"), str(size), slot], check=True)
    img = os.path.join(work, "ctxc_lwip_ca.elf")
    subprocess.run([objcopy, "--update-section", ".ctxc_ca=" + slot, image, img], check=True)
    base = "https://fixture.ctxc.test:%d" % ports["device"]
    key = "fk-%d" % os.getpid()
    done = []
    for provider, path, want_path, key_header in PROVIDERS:
        for stream in (True, False):
            test_id = "c-%s-%s-%d" % (provider[0], "s" if stream else "n", os.getpid())
            ntp = NtpResponder()
            # the board takes BOARD_MAX_ARGS (24) arguments, 511 bytes
            args = ["arg=ctxc_lwip", "arg=--test-id=" + test_id, "arg=--call",
                    "arg=--provider=" + provider, "arg=--base-url=" + base + path,
                    "arg=--model=fixture-ok", "arg=--key=" + key,
                    "arg=--stream" if stream else "arg=--no-stream", "arg=--ntp=%d" % ntp.port]
            if len(" ".join(a[4:] for a in args)) > 500:
                fail("the image's command line is too long for semihosting")
            cmd = emu + [img, "-nic", "user,model=lan9118", "-semihosting-config", ",".join(args)]
            print("lwip_image: " + " ".join(cmd), flush=True)
            try:
                run = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                                     timeout=120)
            except subprocess.TimeoutExpired:
                fail("%s: the image did not finish within 120 s" % test_id)
            finally:
                ntp.stop()
            out = run.stdout + run.stderr
            sys.stdout.write(out)
            if run.returncode != 0 or not re.search(r"case call: CTXC_OK", out) or \
                    not re.search(r"summary received: \d+ bytes in entry \d+, the fixture's", out):
                fail("%s %s: the call did not bring the fixture's summary (exit %d)"
                     % (provider, "streamed" if stream else "not streamed", run.returncode))
            if key in out:
                fail("the key appeared in the image's output")
            posts = [r for r in records(ports, test_id) if r["method"] == "POST"]
            if len(posts) != 1:
                fail("%s: %d requests recorded, 1 expected" % (test_id, len(posts)))
            r = posts[0]
            hdr = {k.lower(): v for k, v in r["headers"]}
            body = json.loads(r["body"])
            if not r["path"].startswith(want_path):
                fail("%s: request path %s" % (test_id, r["path"]))
            if key not in hdr.get(key_header, ""):
                fail("%s: the key did not come in %s" % (test_id, key_header))
            if provider == "gemini":
                streamed = "streamGenerateContent" in r["path"]
            else:
                streamed = body.get("stream") is True
            if streamed != stream:
                fail("%s: the request was %sstreamed" % (test_id, "" if streamed else "not "))
            done.append("%s/%s" % (provider, "stream" if stream else "json"))
    # the name through the configured DNS server: api.ctxc.test is not in
    # the local host list; the test's responder answers it (10.0.2.2)
    test_id = "c-dns-%d" % os.getpid()
    ntp, dns = NtpResponder(), DnsResponder({"api.ctxc.test": "10.0.2.2"})
    args = ["arg=ctxc_lwip", "arg=--test-id=" + test_id, "arg=--call", "arg=--provider=openai",
            "arg=--base-url=https://api.ctxc.test:%d/v1" % ports["device"],
            "arg=--model=fixture-ok", "arg=--no-stream", "arg=--dns=10.0.2.2:%d" % dns.port,
            "arg=--ntp=%d" % ntp.port]
    cmd = emu + [img, "-nic", "user,model=lan9118", "-semihosting-config", ",".join(args)]
    print("lwip_image: " + " ".join(cmd), flush=True)
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=120)
    except subprocess.TimeoutExpired:
        fail("%s: the image did not finish within 120 s" % test_id)
    finally:
        ntp.stop()
        dns.stop()
    out = run.stdout + run.stderr
    sys.stdout.write(out)
    if "api.ctxc.test" not in dns.asked:
        fail("the image did not ask the configured DNS server for api.ctxc.test (asked: %s)"
             % dns.asked)
    if run.returncode != 0 or not re.search(r"case call: CTXC_OK", out):
        fail("the call through the configured DNS server failed (exit %d)" % run.returncode)
    posts = [r for r in records(ports, test_id) if r["method"] == "POST"]
    hosts = [{k.lower(): v for k, v in r["headers"]}.get("host") for r in posts]
    if hosts != ["api.ctxc.test:%d" % ports["device"]]:
        fail("%s: the fixture saw Host %s" % (test_id, hosts))
    done.append("openai/json via DNS %s" % ",".join(dns.asked))
    print("lwip_image: providers: %s: the summary came back, the request had the provider's "
          "path, key header and stream flag; the name api.ctxc.test came from the configured "
          "DNS server; lwip_image: ok" % ", ".join(done))
    return 0


def run_trust(objcopy, image, fxdir, emu, ports, work, mode):
    """The trust store's own cases (the fixture's device endpoint, SNTP on):
      builtin    the image as built: the anchors of trust_store.txt from
                 ca-certificates parse, none signed the fixture's chain
      corrupt    the fixture's CA with a broken DER: "CA certificate 1 does
                 not parse (...)"
      smallpool  a 6000-byte TLS pool: "TLS pool too small (needed at least
                 N bytes, the pool has 6000)"
    """
    img = image
    if mode != "builtin":
        size = int(subprocess.run([objcopy.replace("objcopy", "readelf"), "-S", "-W", image],
                                  capture_output=True, text=True).stdout.split(".ctxc_ca")[1]
                   .split()[3], 16)
        slot = os.path.join(work, "ca_slot.bin")
        subprocess.run([sys.executable, os.path.join(HERE, "lwip_ca_slot.py"),
                        os.path.join(fxdir, "ca.pem"), str(size), slot], check=True)
        if mode == "corrupt":
            with open(slot, "r+b") as f:
                f.seek(4 + 4)  # the tbsCertificate's SEQUENCE tag
                f.write(b"\x31")
        img = os.path.join(work, "ctxc_lwip_ca.elf")
        subprocess.run([objcopy, "--update-section", ".ctxc_ca=" + slot, image, img], check=True)
    ntp = NtpResponder()
    args = ["arg=ctxc_lwip", "arg=--good=%d" % ports["device"],
            "arg=--wronghost=%d" % ports["wronghost"], "arg=--ntp=%d" % ntp.port,
            "arg=--test-id=lwip-trust-%s-%d" % (mode, os.getpid())]
    if mode == "smallpool":
        args.append("arg=--pool=6000")
    cmd = emu + [img, "-nic", "user,model=lan9118", "-semihosting-config", ",".join(args)]
    print("lwip_image: " + " ".join(cmd), flush=True)
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=240)
    except subprocess.TimeoutExpired:
        fail("the image did not finish within 240 s")
    finally:
        ntp.stop()
    out = run.stdout + run.stderr
    sys.stdout.write(out)
    if mode == "builtin":
        with open(os.path.join(HERE, "..", "..", "boards", "mps2-an386", "net", "trust_store.txt")) as f:
            n = len([l for l in f if l.split("#", 1)[0].strip()])
        if not re.search(r"^trust store: %d anchors parsed" % n, out, re.M):
            fail("the built-in trust store did not parse into %d anchors" % n)
        if len(re.findall(r"connect refused: CTXC_E_TLS: server certificate rejected: "
                          r".*not correctly signed by the trusted CA", out)) < 4:
            fail("the fixture's chain was not refused against the built-in anchors")
        print("lwip_image: trust builtin: %d anchors from ca-certificates parsed, the fixture's "
              "chain refused; lwip_image: ok" % n)
    elif mode == "corrupt":
        if not re.search(r"TLS setup: CA certificate 1 does not parse \(X509 - .*\(-0x[0-9a-f]{4}\)\)", out):
            fail("no 'CA certificate 1 does not parse (X509 - ... (-0x....))' message")
        if "pool too small" in out:
            fail("a broken CA reported as a small pool")
        print("lwip_image: trust corrupt: reported as a CA that does not parse; lwip_image: ok")
    else:
        if not re.search(r"TLS pool too small \(needed at least \d+ bytes, the pool has 6000\)", out):
            fail("no 'TLS pool too small (needed at least N bytes, the pool has 6000)' message")
        if "does not parse" in out:
            fail("a small pool reported as a CA that does not parse")
        print("lwip_image: trust smallpool: reported as a pool too small; lwip_image: ok")
    return 0


JOB_LINE = (r"^job stream: CTXC_OK after (\d+) polls; longest poll ([\d.]+) ms; longest "
            r"without a public-key step ([\d.]+) ms \(before it: ([^)]*)\); public-key "
            r"steps ([\d.]+) ms in all \((\d+) polls ran a slice of one\); (\d+) turns arrived "
            r"during the job$")


def run_job(objcopy, image, fxdir, emu, ports, work, whole=False):
    """--job: the resumable job on the board (issue 27). The image's main
    loop appends a voice turn (human, then ai) every 200 ms of board time
    while a middle-out job streams its summary (fixture-stall); checked from
    its output: the job compressed, turns arrived and all are after the
    summary in order, the invariant, the handshake's polls listed with
    their time (the public-key steps marked), the longest poll without a
    public-key step at most 25 ms of board time; and the faults with turns
    arriving (wrong-host certificate, HTTP 500, a stall past the read
    timeout, a reset) each leave the history = original + turns, byte for
    byte. The fixture's record: the models asked, on the device endpoint.
    The handshake's public-key work runs in slices (the board's
    MPS2_TLS_ECP_MAX_OPS): every poll, slices included, at most 10 ms of
    board time. whole: the same run with --ecp-max-ops=0 (each public-key
    step in one poll), for the comparison; only its figures are read."""
    slot = os.path.join(work, "ca_slot.bin")
    size = int(subprocess.run([objcopy.replace("objcopy", "readelf"), "-S", "-W", image],
                              capture_output=True, text=True).stdout.split(".ctxc_ca")[1]
               .split()[3], 16)
    subprocess.run([sys.executable, os.path.join(HERE, "lwip_ca_slot.py"),
                    os.path.join(fxdir, "ca.pem"), str(size), slot], check=True)
    img = os.path.join(work, "ctxc_lwip_ca.elf")
    subprocess.run([objcopy, "--update-section", ".ctxc_ca=" + slot, image, img], check=True)
    test_id = "lwip-job-%d-%d" % (os.getpid(), int(time.time()))
    ntp = NtpResponder()
    # -icount shift=0: the board's clock counts instructions (one a
    # nanosecond), so a poll's board time is its work, not the host's load
    # (without it a busy host stretches every poll: 8 ms became 32 ms under
    # make test's parallel valgrind runs)
    emu = emu[:-1] + ["-icount", "shift=0", "-kernel"] if emu[-1] == "-kernel" else \
        emu + ["-icount", "shift=0"]
    args = ["arg=ctxc_lwip", "arg=--job", "arg=--good=%d" % ports["device"],
            "arg=--wronghost=%d" % ports["wronghost"], "arg=--ntp=%d" % ntp.port,
            "arg=--test-id=" + test_id] + (["arg=--ecp-max-ops=0"] if whole else [])
    cmd = emu + [img, "-nic", "user,model=lan9118", "-semihosting-config", ",".join(args)]
    print("lwip_image: " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    since = time.time()
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                             timeout=max(240, LIFETIME))
    except subprocess.TimeoutExpired:
        fail("the image did not finish within %d s" % max(240, LIFETIME))
    finally:
        ntp.stop()
    took = time.monotonic() - t0
    out = run.stdout + run.stderr
    sys.stdout.write(out)
    print("lwip_image: QEMU run took %.1f s, exit status %d" % (took, run.returncode))
    if run.returncode == SKIP and "SKIP:" in out:
        return SKIP
    if run.returncode != 0:
        fail("the image exited with %d" % run.returncode)
    m = re.search(JOB_LINE, out, re.M)
    if not m:
        fail("no 'job stream: CTXC_OK ...' line")
    polls, longest, other, other_state, pk, slices, turns = m.groups()
    # the same job polled without waiting (stream) and in a voice device's
    # loop, polled when ctxc_session_poll_due says so (issue 38)
    bm = re.search(r"^job stream: the job took (\d+) ms of board time in (\d+) polls$", out, re.M)
    sm = re.search(r"^job voice: the job took (\d+) ms of board time in (\d+) polls, polled "
                   r"when ctxc_session_poll_due said so \((\d+) waits", out, re.M)
    if not bm or not sm:
        fail("no 'job stream/voice: the job took ... polls' lines")
    summary_ms, summary_polls, summary_waits = sm.groups()
    # waiting for a job vs the blocking call, same answer (issue 38)
    wm = re.search(r"^job wait: blocking compress (\d+) ms, before_send waiting for its job "
                   r"(\d+) ms of board time \(medians of \d+ runs each\): ratio ([\d.]+); "
                   r"same history: (\w+)$", out, re.M)
    if not wm:
        fail("no 'job wait: ...' line")
    if wm.group(4) != "yes":
        fail("before_send waiting for its job left another history than the blocking call")
    refusals_alerted(ports, since, "job, public-key steps %s" % ("whole" if whole else "in slices"))
    if whole:
        print("lwip_image: job, public-key steps whole (--ecp-max-ops=0): longest poll %s ms, "
              "without public-key steps %s ms, public-key steps %s ms in all"
              % (longest, other, pk))
        return 0
    if float(longest) > 10.0:
        fail("a poll took %s ms (> 10 ms of board time) with the public-key work in slices"
             % longest)
    if int(slices) < 2:
        fail("the public-key work was not split (%s polls ran a slice)" % slices)
    if float(other) > 25.0:
        fail("a poll without a public-key step took %s ms (> 25 ms of board time)" % other)
    if int(turns) < 1:
        fail("only %s turns arrived during the job" % turns)
    hs = re.findall(r"^job stream: handshake poll \d+: (.*) -> (.*): ([\d.]+) ms( \(public-key "
                    r"step\))?$", out, re.M)
    if not any(x[3] for x in hs):
        fail("no handshake poll with a public-key step listed")
    for want in (r"job stream: the \d+ turns \(\d+ entries\) after the summary \(entry \d+ of "
                 r"\d+\), in order: yes",
                 r"invariant: token total = sum of entries yes; .* same entries, tokens and "
                 r"bytes yes",
                 r"lwip image: \d+ checks, 0 failed"):
        if not re.search(want, out):
            fail("no line matching /%s/ in the output" % want)
    faults = {}
    for name, want in (("wronghost", "CTXC_E_TLS"), ("status-500", "CTXC_E_HTTP_STATUS"),
                       ("stall", "CTXC_E_TIMEOUT"), ("reset", "CTXC_E_NETWORK")):
        fm = re.search(r"^job fault %s: %s, (\d+) turns arrived; history = original \+ turns "
                       r"\((\d+) bytes exported\): identical$" % (name, want), out, re.M)
        if not fm:
            fail("fault %s: not %s with the history = original + turns" % (name, want))
        faults[name] = fm.group(1)
        if int(fm.group(1)) < 1:
            fail("fault %s: no turn arrived during the job" % name)
    recs = records(ports, test_id)
    if any(r["port"] == "wronghost" for r in recs):
        fail("a request reached the wronghost endpoint after the refused handshake")
    models = [json.loads(r["body"]).get("model") for r in recs if r["method"] == "POST"]
    if models != ["fixture-stall", "fixture-stall"] + ["fixture-ok"] * 6 + [
            "fixture-error-500", "fixture-hang", "fixture-reset"]:
        fail("the fixture recorded the models %s" % models)
    print("lwip_image: job: the summary took %s ms of board time in %s polls in a voice "
          "device's loop (polled when ctxc_session_poll_due said so, %s waits between; "
          "polled without waiting: %s ms, %s polls); waiting for a job: blocking compress %s "
          "ms, before_send waiting for its job %s ms of board time (medians, ratio %s), same "
          "history" % (summary_ms, summary_polls, summary_waits, bm.group(1), bm.group(2),
                       wm.group(1), wm.group(2), wm.group(3)))
    print("lwip_image: job: longest poll %s ms (without public-key steps %s ms, before it: %s; "
          "public-key steps %s ms in all, in %s polls), %s polls, %s turns arrived and kept after the summary; "
          "handshake polls: %s; faults with turns arriving (turns): %s; lwip_image: ok (%.1f s)"
          % (longest, other, other_state, pk, slices, polls, turns,
             ", ".join("%s -> %s %s ms%s" % (a, b, t, " (public-key)" if k else "")
                       for a, b, t, k in hs),
             ", ".join("%s %s" % kv for kv in faults.items()), took))
    return 0


def run_image(objcopy, image, fxdir, example, emu, ports, work, untrusted, lab=False):
    slot = os.path.join(work, "ca_slot.bin")
    size = int(subprocess.run([objcopy.replace("objcopy", "readelf"), "-S", "-W", image],
                              capture_output=True, text=True).stdout.split(".ctxc_ca")[1]
               .split()[3], 16)
    feproc, feports, fe = (None, {}, None) if untrusted or lab else start_frontend(work, fxdir)
    roots = [] if untrusted or lab else [os.path.join(fe, "roots.pem")]
    subprocess.run([sys.executable, os.path.join(HERE, "lwip_ca_slot.py"),
                    os.path.join(fxdir, "other-ca.pem" if untrusted else "ca.pem")] + roots + [
                    str(size), slot], check=True)
    img = os.path.join(work, "ctxc_lwip_ca.elf")
    subprocess.run([objcopy, "--update-section", ".ctxc_ca=" + slot, image, img], check=True)
    test_id = "lwip-image-%d-%d" % (os.getpid(), int(time.time()))
    ntp = NtpResponder()
    args = ["arg=ctxc_lwip", "arg=--good=%d" % ports["device"],
            "arg=--wronghost=%d" % ports["wronghost"], "arg=--silent=%d" % ports["silent"],
            "arg=--ntp=%d" % ntp.port, "arg=--test-id=" + test_id] + \
        (["arg=--fe=" + ":".join(str(feports[k]) for k in
                                  ("p384", "rsa", "p256", "expired", "notyet", "chacha", "aes256",
                                   "alert"))]
         if feports else [])
    cmd = emu + [img, "-nic", "user,model=lan9118", "-semihosting-config", ",".join(args)]
    print("lwip_image: " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    since = time.time()
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                             timeout=max(240, LIFETIME))
    except subprocess.TimeoutExpired:
        fail("the image did not finish within %d s" % max(240, LIFETIME))
    finally:
        ntp.stop()
        if feproc is not None:
            feproc.terminate()
            feproc.wait(timeout=10)
    took = time.monotonic() - t0
    out = run.stdout + run.stderr
    sys.stdout.write(out)
    if os.environ.get("CTXC_LWIP_LOG"):  # the output, for lwip_budget.py
        with open(os.environ["CTXC_LWIP_LOG"], "w") as f:
            f.write(out)
    print("lwip_image: QEMU run took %.1f s, exit status %d" % (took, run.returncode))
    if run.returncode == SKIP and "SKIP:" in out:
        return SKIP
    if untrusted:
        return check_untrusted(run.returncode, out, ports, test_id, took)
    if run.returncode != 0:
        fail("the image exited with %d" % run.returncode)
    if not lab:
        refusals_alerted(ports, since, "wrong-host certificate")
    if lab:
        # the lab profile: ECDHE-ECDSA + AES-128-GCM over P-256 only, and no
        # certificate dates (so TLS goes on before SNTP)
        done = re.findall(r"handshake done \((TLSv1\.2, [^)]*)\)", out)
        if not done or any(not re.match(r"TLSv1\.2, TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256, "
                                         r"(group secp256r1|session resumed)$", d) for d in done):
            fail("lab profile: handshakes other than ECDHE-ECDSA-AES-128-GCM over P-256: %s"
                 % sorted(set(done)))
        before_sntp = (r"time: before SNTP: CTXC_OK",
                       r"time: the TLS profile checks no certificate dates")
    else:
        before_sntp = (r"time: before SNTP: CTXC_E_TLS: .*the time is not known yet",)
    for want in before_sntp + (r"handshake done \(TLSv1\.2, ",
                 r"tls: fixture\.ctxc\.test:%d connect refused: CTXC_E_TLS: .*server certificate rejected" % ports["wronghost"],
                 r"case wronghost: history crc before (\S+) after \1 \(store/export\): identical",
                 r"case status-500: history crc before (\S+) after \1 \(store/export\): identical",
                 r"case stall: history crc before (\S+) after \1 \(store/export\): identical",
                 r"case stall: CTXC_E_TIMEOUT",
                 r"case ok: CTXC_OK",
                 r"sntp: time from 10\.0\.2\.2:\d+ is 20\d\d-\d\d-\d\d \d\d:\d\d:\d\d UTC",
                 r"handshake done \(TLSv1\.2, .*\(connect in [1-9]\d* steps\)",
                 r"steps: job connect: CTXC_E_IN_PROGRESS",
                 r"steps: job connect_poll: CTXC_OK after (?:[2-9]|[1-9]\d+) connect_poll calls",
                 r"steps: job GET /json: [1-9]\d* bytes in \d+ send/recv calls, no wait",
                 r"steps: wait\(300\) on an idle connection returned after \d+ ms; recv then answered 0",
                 r"steps: silent connect: CTXC_E_TIMEOUT .*timed out after 1500 ms",
                 r"summary received: \d+ bytes in entry \d+, the fixture's <state_snapshot>",
                 r"invariant: token total = sum of entries yes; .* same entries, tokens and bytes yes",
                 r"lwip image: \d+ checks, 0 failed"):
        if not re.search(want, out):
            fail("no line matching /%s/ in the output" % want)

    if not lab:
        check_frontend(out, fe, feports)

    # the fixture's record
    recs = records(ports, test_id)
    if any(r["port"] == "wronghost" for r in recs):
        fail("a request reached the wronghost endpoint after the refused handshake")
    posts = [r for r in recs if r["method"] == "POST"]
    models = []
    for r in posts:
        hdr = {k.lower(): v for k, v in r["headers"]}
        if r["port"] != "device" or r["path"] != "/v1/chat/completions" or \
                hdr.get("host") != "fixture.ctxc.test:%d" % ports["device"]:
            fail("unexpected request %s %s on %s (Host %s)"
                 % (r["method"], r["path"], r["port"], hdr.get("host")))
        models.append(json.loads(r["body"]).get("model"))
    if models != ["fixture-error-500", "fixture-stall", "fixture-ok"]:
        fail("the fixture recorded the models %s" % models)
    body = json.loads(posts[-1]["body"])
    msgs = body["messages"]
    if msgs[0]["role"] != "system" or "context compressor" not in msgs[0]["content"]:
        fail("the first message is not the system part")
    if "Condense the conversation above now." not in msgs[-1]["content"]:
        fail("the last message is not the trigger")
    sent = "\n".join(m["content"] for m in msgs[1:-1])

    # which entries went out: the device's compressed history says how many
    # were kept at the top (before the summary) and at the bottom
    entries = [json.loads(l) for l in open(example, encoding="utf-8") if l.strip()]
    rows = re.findall(r"^\| (\d+) +\| (\w+)( \(summary\))? +\| \d+", out, re.M)
    top = next(int(i) for i, _, s in rows if s)
    bottom = len(rows) - top - 2
    middle = range(top, len(entries) - bottom)
    checked = 0
    for i, e in enumerate(entries):
        text = first_text(e)
        if len(text) < 40:
            continue
        if i in middle:  # its text went out (its start: texts are rendered whole)
            checked += 1
            if text[:40] not in sent:
                fail("entry %d (summarised) is not in the request: %r" % (i, text[:40]))
        elif text in sent:  # a kept entry's whole text did not
            fail("entry %d (kept) went out: %r" % (i, text[:40]))
    print("lwip_image: fixture record: %d requests (%s) on the device endpoint, none on "
          "wronghost; the fixture-ok request (%d bytes) carried the middle: entries %d..%d "
          "of %d (%d texts checked in, the kept %d top + %d bottom out)"
          % (len(posts), ", ".join(models), posts[-1]["body_len"], middle.start,
             middle.stop - 1, len(entries), checked, top, bottom))
    if lab:
        print("lwip_image: lab: the fixture run compressed (%.1f s)" % took)
        return 0
    print("lwip_image: ok (%.1f s)" % took)
    return 0


# mbedTLS 2.28's MBEDTLS_X509_BADCERT_* flags (include/mbedtls/x509.h)
X509_BADCERT = ((0x01, "EXPIRED"), (0x02, "REVOKED"), (0x04, "CN_MISMATCH"),
                (0x08, "NOT_TRUSTED"), (0x40, "MISSING"), (0x80, "SKIP_VERIFY"),
                (0x100, "OTHER"), (0x200, "FUTURE"), (0x800, "KEY_USAGE"),
                (0x1000, "EXT_KEY_USAGE"), (0x2000, "NS_CERT_TYPE"), (0x4000, "BAD_MD"),
                (0x8000, "BAD_PK"), (0x10000, "BAD_KEY"))


def lab_call(objcopy, image, emu, work, cas, url, test_id):
    """One --call of the lab image (the OpenAI format, not streamed) with
    the trust store `cas`, expected to end with CTXC_E_TLS (--expect); answers
    its output."""
    size = int(subprocess.run([objcopy.replace("objcopy", "readelf"), "-S", "-W", image],
                              capture_output=True, text=True).stdout.split(".ctxc_ca")[1]
               .split()[3], 16)
    slot = os.path.join(work, "ca_slot.bin")
    subprocess.run([sys.executable, os.path.join(HERE, "lwip_ca_slot.py")] + cas +
                   [str(size), slot], check=True)
    img = os.path.join(work, "ctxc_lwip_ca.elf")
    subprocess.run([objcopy, "--update-section", ".ctxc_ca=" + slot, image, img], check=True)
    ntp = NtpResponder()
    args = ["arg=ctxc_lwip", "arg=--test-id=" + test_id, "arg=--call", "arg=--provider=openai",
            "arg=--base-url=" + url, "arg=--model=fe-ok", "arg=--no-stream",
            "arg=--expect=CTXC_E_TLS", "arg=--ntp=%d" % ntp.port]
    cmd = emu + [img, "-nic", "user,model=lan9118", "-semihosting-config", ",".join(args)]
    print("lwip_image: " + " ".join(cmd), flush=True)
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=120)
    except subprocess.TimeoutExpired:
        fail("%s: the image did not finish within 120 s" % test_id)
    finally:
        ntp.stop()
    out = run.stdout + run.stderr
    sys.stdout.write(out)
    if not re.search(r"case call: history crc before (\S+) after \1 \(store/export\): identical",
                     out):
        fail("%s: the history did not stay identical after the refused call" % test_id)
    if run.returncode != 0 or not re.search(r"^lwip image: \d+ checks, 0 failed$", out, re.M):
        fail("%s: the image did not end with CTXC_E_TLS and 0 failed checks (exit %d)"
             % (test_id, run.returncode))
    # the image's connect line ends with its steps: not part of the error
    return re.sub(r" \(connect in \d+ steps\)$", "", out, flags=re.M)


def run_lab(objcopy, image, fxdir, example, emu, ports, work):
    """--lab: the image built with -DMPS2_TLS_PROFILE=lab (build/<t>-lab).
    Against the fixture (a P-256 chain; Python's ssl honours
    max_fragment_length) it runs the production image's cases (run_image
    without the front end): the example compressed, the faults, the steps,
    every handshake ECDHE-ECDSA-AES-128-GCM over P-256. Then, one --call
    each, what the profile cannot do is refused with a clear error, the
    history unchanged:
      mfl      the front end's P-256 chain (its root in the store): it
               ignores max_fragment_length (its log: asked, not answered)
               and writes a 16 KiB record: CTXC_E_TLS, mbedTLS's code,
               within a second of the request (the lab's records are 4 KiB)
      p384     the P-384 root chain (leaf signed with ECDSA-SHA384; the
               P-256 root only in the store): the server's certificate
               refused in the handshake, CTXC_E_TLS with mbedTLS's code
      p384root the P-384 root itself in the store: "CA certificate 2 does
               not parse (...)" (no P-384, no SHA-384 in the profile)
      rsa      the RSA chain: no suite in common, the server's
               handshake_failure alert, CTXC_E_TLS with mbedTLS's code"""
    run_image(objcopy, image, fxdir, example, emu, ports, work, False, lab=True)
    feproc, feports, fe = start_frontend(work, fxdir)
    ca = os.path.join(fxdir, "ca.pem")
    done = []
    try:
        url = "https://fixture.ctxc.test:%d/v1"
        out = lab_call(objcopy, image, emu, work, [ca, os.path.join(fe, "root-p256.pem")],
                       url % feports["p256"], "lab-mfl-%d" % os.getpid())
        m = re.search(r"tls: recv error (\d+) ms after the request: (recv: TLS error after the "
                      r"handshake: [^\n]*\(-0x[0-9a-f]{4}\))", out)
        if not m or int(m.group(1)) >= 1000:
            fail("lab mfl: the 16 KiB record was not a TLS error within a second")
        c = re.search(r"case call: (CTXC_E_TLS: [^\n]*\(-0x[0-9a-f]{4}\))", out)
        if not c:
            fail("lab mfl: the caller's error is not CTXC_E_TLS with mbedTLS's code")
        done.append("mfl: %s ms, %s" % (m.group(1), c.group(1)))
        out = lab_call(objcopy, image, emu, work, [ca, os.path.join(fe, "root-p256.pem")],
                       url % feports["p384"], "lab-p384-%d" % os.getpid())
        # the leaf's ECDSA-SHA384 signature is an unknown algorithm to the
        # profile: mbedTLS skips the certificate and the verification fails
        # with several reasons; more than the port's verify_info buffer
        # holds, so the port gives mbedTLS's flags (x509.h)
        c = re.search(r"tls: fixture\.ctxc\.test:%d connect refused: (CTXC_E_TLS: server "
                      r"certificate rejected: (?:verification flags 0x([0-9a-f]{8})|[^\n]*"
                      r"unacceptable hash)[^\n]*)" % feports["p384"], out)
        if not c or not re.search(r"case call: CTXC_E_TLS: [^\n]*server certificate rejected", out):
            fail("lab p384: the P-384 root chain was not refused as a rejected certificate")
        why = c.group(1)
        if c.group(2):
            flags = int(c.group(2), 16)
            names = [n for b, n in X509_BADCERT if flags & b]
            if not flags & 0x4000:
                fail("lab p384: the rejection does not name the hash (BAD_MD): %s" % names)
            why += " (%s)" % "|".join(names)
        done.append("p384: %s" % why)
        out = lab_call(objcopy, image, emu, work, [ca, os.path.join(fe, "root-p384.pem")],
                       url % feports["p384"], "lab-p384root-%d" % os.getpid())
        c = re.search(r"case call: (CTXC_E_TLS: [^\n]*CA certificate 2 does not parse "
                      r"\([^\n]*\(-0x[0-9a-f]{4}\)\))", out)
        if not c:
            fail("lab p384root: the P-384 root was not refused as 'CA certificate 2 does not "
                 "parse (...)'")
        done.append("p384root: %s" % c.group(1))
        out = lab_call(objcopy, image, emu, work, [ca, os.path.join(fe, "root-p256.pem")],
                       url % feports["rsa"], "lab-rsa-%d" % os.getpid())
        c = re.search(r"tls: fixture\.ctxc\.test:%d connect refused: (CTXC_E_TLS: [^\n]*"
                      r"\(-0x[0-9a-f]{4}\)[^\n]*)" % feports["rsa"], out)
        if not c or not re.search(r"case call: CTXC_E_TLS: ", out):
            fail("lab rsa: the RSA chain was not refused with mbedTLS's code")
        done.append("rsa: %s" % c.group(1))
    finally:
        feproc.terminate()
        feproc.wait(timeout=10)
    with open(os.path.join(fe, "frontend.log")) as f:
        log = f.read()
    sys.stdout.write(log)
    if not re.search(r"^hello p256 mfl=yes$", log, re.M):
        fail("lab: the device did not ask the front end for max_fragment_length")
    for line in re.findall(r"^serverhello \S+ ext=\[([^\]]*)\]", log, re.M):
        if "1" in line.split():
            fail("the front end answered max_fragment_length")
    if not re.search(r"^records p256 app=16408", log, re.M):
        fail("lab: the front end did not write its 16 KiB record")
    print("lwip_image: lab: the fixture's P-256 chain: compressed with ECDHE-ECDSA-AES-128-GCM "
          "over P-256; refused with a clear error: %s; lwip_image: ok" % "; ".join(done))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""conformance_replay: real provider answers replayed to `ctxc compress`.

Usage:
  replay.py --cli CTXC --work DIR [--recordings DIR] [--table FILE]
            [--only NAME ...]

For each row of the table (test/conformance/expected.json) a TLS server on
127.0.0.1 (this process, one thread; certificates made at test time by
test/fixtures/make_certs.sh) answers ONE request with the recording of the
row: its status, its content type (and Content-Encoding when the recording
or the row names one), and its body written in 7-byte pieces, each piece its
own send on a TCP_NODELAY socket (a streamed body, status 200
text/event-stream, goes out chunked, one chunk per piece, as the live APIs
send it; any other body with Content-Length), then the server closes. The
CLI meanwhile runs

  ctxc compress HISTORY --strategy S --provider P --model M
       --base-url https://localhost:PORT[/v1] --key-env VAR -o OUT
       [--no-stream]           (recordings of status 200 application/json)

(localhost, which resolves to the 127.0.0.1 the server listens on: the
CLI's certificate check does not accept 127.0.0.1 by the certificate's IP
SAN today, "The certificate Common Name (CN) does not match".)

with CTXC_HOME holding settings.json: the test CA (network.ca-file),
compression.retries 0 and a 10 s read timeout. The history (HISTORY) is
made here: 40 entries, large enough that middle-out and one-shot call the
model and any recorded answer is smaller than what it replaces.

The row says what must come out: the exit status, and either the summary
(the one isSummary entry of OUT; its first text block, exactly, or by
length + sha256 + prefix + suffix for long ones) or a substring of stderr
(OUT then must not exist and HISTORY must be unchanged). Every recording
needs a row and every row a recording.

Prints one line per row (name, PASS/FAIL, what differed), then
"N passed, N failed"; exit 1 when any row failed, 77 (skipped) when the
recordings are not there. The request each run sent is saved under
DIR/requests/NAME.json (method, path, headers, body): check_schema.py
reads them.
"""

import argparse
import gzip
import hashlib
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
DEFAULT_RECORDINGS = ""  # no default: $CTXC_CONFORMANCE_RECORDINGS or --recordings
PIECE = 7
KEY_VAR = "CTXC_CONFORMANCE_KEY"
KEY = "conformance-dummy-key"
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash"}
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}
CLI_TIMEOUT = 60  # seconds; the CLI's own read timeout is 10 s
ACCEPT_WINDOW = 45  # seconds the server waits for its one connection
IO_TIMEOUT = 10  # seconds per socket read/write in the server


# --------------------------------------------------------------------------
# certificates


def make_certs(work):
    cdir = os.path.join(work, "certs")
    if not os.path.exists(os.path.join(cdir, "good.pem")):
        subprocess.run(["sh", os.path.join(SOURCE, "test", "fixtures", "make_certs.sh"), cdir],
                       check=True, stdout=subprocess.DEVNULL)
    return cdir


# --------------------------------------------------------------------------
# the one-request TLS server


class OneShotServer:
    """Serves one request on 127.0.0.1 with `answer` (status, headers, body,
    chunked), saves the request to `save_path`. Stops when the request was
    answered, when stop() is called, or after ACCEPT_WINDOW seconds."""

    def __init__(self, certs, status, headers, body, chunked, save_path):
        self.status, self.headers, self.body, self.chunked = status, headers, body, chunked
        self.save_path = save_path
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(os.path.join(certs, "good.pem"), os.path.join(certs, "good.key"))
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stopping = threading.Event()
        self.error = None
        self.request = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self.thread.join(IO_TIMEOUT * 3)
        self.sock.close()

    def _run(self):
        deadline = time.monotonic() + ACCEPT_WINDOW
        while not self.stopping.is_set() and time.monotonic() < deadline:
            try:
                raw, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError as e:
                self.error = "accept: %s" % e
                return
            try:
                self._serve(raw)
            except Exception as e:  # noqa: BLE001 - reported, never raised
                self.error = "%s: %s" % (type(e).__name__, e)
            finally:
                try:
                    raw.close()
                except OSError:
                    pass
            return  # one connection only

    def _serve(self, raw):
        raw.settimeout(IO_TIMEOUT)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = self.ctx.wrap_socket(raw, server_side=True)
        data = b""
        while b"\r\n\r\n" not in data:
            got = conn.recv(65536)
            if not got:
                raise IOError("connection closed before the request headers ended")
            data += got
            if len(data) > 1 << 20:
                raise IOError("request headers over 1 MiB")
        head, rest = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = (lines[0].split(" ", 2) + ["", ""])[:3]
        headers = []
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers.append([k.strip(), v.strip()])
        hmap = {k.lower(): v for k, v in headers}
        if "chunked" in hmap.get("transfer-encoding", "").lower():
            body = self._read_chunked(conn, rest)
        else:
            n = int(hmap.get("content-length", "0") or 0)
            body = rest
            while len(body) < n:
                got = conn.recv(65536)
                if not got:
                    raise IOError("connection closed after %d of %d body bytes" % (len(body), n))
                body += got
            body = body[:n]
        self.request = {"method": method, "path": path, "headers": headers,
                        "body": body.decode("utf-8", "replace"), "body_bytes": len(body)}
        if self.save_path:
            with open(self.save_path, "w", encoding="utf-8") as f:
                json.dump(self.request, f, ensure_ascii=False, indent=1)
        # the answer
        out = ["HTTP/1.1 %d %s" % (self.status, REASONS.get(self.status, "Status"))]
        out += ["%s: %s" % (k, v) for k, v in self.headers]
        out.append("Transfer-Encoding: chunked" if self.chunked else "Content-Length: %d" % len(self.body))
        out.append("Connection: close")
        try:
            conn.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
            for i in range(0, len(self.body), PIECE):
                piece = self.body[i:i + PIECE]
                if self.chunked:
                    piece = b"%x\r\n" % len(piece) + piece + b"\r\n"
                conn.sendall(piece)
            if self.chunked:
                conn.sendall(b"0\r\n\r\n")
        except (ssl.SSLEOFError, BrokenPipeError, ConnectionResetError):
            # The client may stop reading once it has refused the answer
            # (a content coding it does not decode): its verdict is judged
            # from its own output, not from the rest of the body.
            return
        try:
            conn.unwrap()
        except (OSError, ssl.SSLError, ValueError):
            pass

    @staticmethod
    def _read_chunked(conn, buf):
        body = b""
        while True:
            while b"\r\n" not in buf:
                got = conn.recv(65536)
                if not got:
                    raise IOError("connection closed in a chunk header")
                buf += got
            line, buf = buf.split(b"\r\n", 1)
            size = int(line.split(b";")[0].strip() or b"0", 16)
            while len(buf) < size + 2:
                got = conn.recv(65536)
                if not got:
                    raise IOError("connection closed in a chunk")
                buf += got
            if size == 0:
                return body
            body += buf[:size]
            buf = buf[size + 2:]


# --------------------------------------------------------------------------
# the history


def make_history(path):
    """40 entries: human / ai turns of plain prose (no paths, URLs or
    backticks: nothing the anchor check would add to a summary), two tool
    call pairs, about 40 KB of text in all."""
    topics = ["the greenhouse heater", "the sensor calibration", "the nightly log rotation",
              "the relay wiring", "the averaging window", "the setpoint schedule",
              "the watering timer", "the battery monitor"]
    filler = ("We went through the readings of the evening again and compared them with the "
              "notes from the previous week, one line at a time, looking for the moment the "
              "numbers started to drift and for anything that changed around then. ")
    entries = []
    for i in range(40):
        topic = topics[i % len(topics)]
        if i in (13, 25):  # an ai tool call, answered by the next (tool) entry
            entries.append({"speaker": "ai", "blocks": [
                {"type": "text", "text": "Checking the weather station for %s." % topic},
                {"type": "tool_call", "id": "call_%d" % i, "name": "get_station_reading",
                 "parameters": {"station": "north", "hour": i}}]})
            continue
        if i in (14, 26):
            entries.append({"speaker": "tool", "blocks": [
                {"type": "tool_response", "callId": "call_%d" % (i - 1),
                 "toolName": "get_station_reading",
                 "result": "north station, hour %d: 4.5 degrees, humidity 81 percent. " % i + filler}]})
            continue
        speaker = "human" if i % 2 == 0 else "ai"
        lead = ("Question %d about %s: what should we look at next, and why? " % (i, topic)
                if speaker == "human" else
                "Answer %d about %s: here is what the data shows so far. " % (i, topic))
        entries.append({"speaker": speaker, "blocks": [{"type": "text", "text": lead + filler * 6}]})
    with open(path, "w", encoding="utf-8") as f:
        for e in entries:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------
# one run


def load_recording(rdir, name):
    with open(os.path.join(rdir, name + ".json"), encoding="utf-8") as f:
        meta = json.load(f)
    with open(os.path.join(rdir, name + ".body"), "rb") as f:
        body = f.read()
    return meta, body


def is_unary(meta):
    return meta["status"] == 200 and meta["content_type"].split(";")[0].strip().lower() == "application/json"


def run_case(cli, work, certs, history, case, meta, body, extra_args=(), command="compress",
             stdin_text=None, save_path=None, settings=None, context_limit="4000", no_stream=None):
    """Serves `body` per `meta` (and the row's content_encoding) to one CLI
    run; returns a dict: rc, stdout, stderr, out path (None unless written),
    request, server error. settings: more keys for the run's settings.json;
    no_stream: ask with --no-stream (None: when the recording is unary)."""
    name = case["name"]
    home = os.path.join(work, "home", name)
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    with open(os.path.join(home, "settings.json"), "w", encoding="utf-8") as f:
        json.dump(dict({"network.ca-file": os.path.join(certs, "ca.pem"), "compression.retries": 0,
                        "network.read-timeout-ms": 10000}, **(settings or {})), f)
    headers = [["Content-Type", meta["content_type"]]]
    encoding = case.get("content_encoding") or meta.get("content_encoding")
    if encoding:
        headers.append(["Content-Encoding", encoding])
        if case.get("content_encoding") == "gzip" and not meta.get("content_encoding"):
            body = gzip.compress(body, mtime=0)
    for k, v in (meta.get("headers") or {}).items():
        headers.append([k, v])
    chunked = meta["status"] == 200 and "event-stream" in meta["content_type"]
    srv = OneShotServer(certs, meta["status"], headers, body, chunked, save_path)
    provider = meta["provider"]
    base = "https://localhost:%d%s" % (srv.port, "/v1" if provider == "openai" else "")
    out = os.path.join(work, "out", name + ".jsonl")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if os.path.exists(out):
        os.unlink(out)
    argv = [cli, command]
    if command == "compress":
        argv += [history, "--strategy", case.get("strategy", "middle-out")]
    argv += ["--provider", provider, "--model", case.get("model", MODELS[provider]),
             "--base-url", base, "--key-env", KEY_VAR]
    if command == "compress":
        argv += ["--context-limit", context_limit, "-o", out]
        if is_unary(meta) if no_stream is None else no_stream:
            argv.append("--no-stream")
    argv += list(extra_args)
    env = dict(os.environ, CTXC_HOME=home)
    env[KEY_VAR] = KEY
    try:
        p = subprocess.run(argv, env=env, input=(stdin_text or "").encode(), capture_output=True,
                           timeout=CLI_TIMEOUT)
        rc, so, se = p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        rc, so = "timeout", (e.stdout or b"").decode("utf-8", "replace")
        se = (e.stderr or b"").decode("utf-8", "replace")
    srv.stop()
    return {"rc": rc, "stdout": so, "stderr": se, "out": out if os.path.exists(out) else None,
            "request": srv.request, "server_error": srv.error, "argv": argv}


# --------------------------------------------------------------------------
# judging


def summary_of(out_path):
    """The text blocks of the one isSummary entry of OUT, or an error."""
    entries = []
    with open(out_path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                entries.append(json.loads(line))
    found = [e for e in entries if (e.get("metadata") or {}).get("isSummary") is True]
    if len(found) != 1:
        return None, "%d isSummary entries in the output (want 1)" % len(found), entries
    texts = [b.get("text", "") for b in found[0].get("blocks", []) if b.get("type") == "text"]
    if not texts:
        return None, "the summary entry has no text block", entries
    return texts[0], None, entries


def short(s, n=160):
    s = s.replace("\n", "\\n")
    return s if len(s) <= n else s[:n] + "..."


def judge(case, res, history_bytes, history_path):
    why = []
    if res["server_error"]:
        why.append("server: " + res["server_error"])
    for k, v in (case.get("request_headers") or {}).items():
        got = [hv for hk, hv in (res["request"] or {}).get("headers", []) if hk.lower() == k.lower()]
        if v not in got:
            why.append("request header %s: %s, want %r" % (k, ", ".join(got) or "absent", v))
    want_rc = case["exit"]
    # exit 3: written, but still over the context limit (the summary was
    # taken all the same; docs/cli.md)
    over = want_rc == 0 and res["rc"] == 3 and "over the limit: " in res["stderr"]
    if res["rc"] != want_rc and not over:
        why.append("exit %s, want %s" % (res["rc"], want_rc))
    if want_rc == 0:
        if res["out"] is None:
            why.append("no output file written")
        else:
            text, err, entries = summary_of(res["out"])
            if err:
                why.append(err)
            else:
                b = text.encode("utf-8")
                if "summary" in case:
                    if text != case["summary"]:
                        why.append("summary %r, want %r" % (short(text), short(case["summary"])))
                else:
                    if len(b) != case["summary_bytes"]:
                        why.append("summary of %d bytes, want %d" % (len(b), case["summary_bytes"]))
                    if not text.startswith(case["summary_prefix"]):
                        why.append("summary starts %r, want %r" % (short(text[:80]), short(case["summary_prefix"])))
                    if not text.endswith(case["summary_suffix"]):
                        why.append("summary ends %r, want %r" % (short(text[-80:]), short(case["summary_suffix"])))
                    if hashlib.sha256(b).hexdigest() != case["summary_sha256"]:
                        why.append("summary sha256 differs")
                if not text.strip():
                    why.append("blank summary accepted")
                if len(entries) >= 40:
                    why.append("output has %d entries: nothing was replaced" % len(entries))
    else:
        need = case["stderr"]
        if need not in res["stderr"]:
            why.append("stderr lacks %r: %r" % (need, short(res["stderr"].strip(), 240)))
        for bad in case.get("stderr_not", []):
            if bad in res["stderr"]:
                why.append("stderr has %r (raw provider JSON)" % bad)
        if res["out"] is not None:
            why.append("output file written on failure")
        with open(history_path, "rb") as f:
            if f.read() != history_bytes:
                why.append("the input history changed")
    return why


def load_table(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)["rows"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--recordings", default=os.environ.get("CTXC_CONFORMANCE_RECORDINGS", DEFAULT_RECORDINGS))
    ap.add_argument("--table", default=os.path.join(HERE, "expected.json"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the CLI's stderr of failing rows")
    a = ap.parse_args()
    if not os.path.isdir(a.recordings):
        print("conformance_replay: no recordings at '%s' (set CTXC_CONFORMANCE_RECORDINGS; "
              "test/conformance/README.md says what they hold): skipped" % a.recordings)
        return 77
    if not os.access(a.cli, os.X_OK):
        print("conformance_replay: CLI %s not built" % a.cli)
        return 1
    os.makedirs(a.work, exist_ok=True)
    certs = make_certs(a.work)
    rows = load_table(a.table)
    reqdir = os.path.join(a.work, "requests")
    shutil.rmtree(reqdir, ignore_errors=True)
    os.makedirs(reqdir)
    history = os.path.join(a.work, "history.jsonl")
    make_history(history)
    with open(history, "rb") as f:
        history_bytes = f.read()

    passed = failed = 0
    names = {r["name"] for r in rows}
    recorded = sorted(n[:-5] for n in os.listdir(a.recordings) if n.endswith(".json"))
    covered = {r.get("recording", r["name"]) for r in rows}
    for n in recorded:
        if n not in covered and (not a.only or n in a.only):
            print("%-44s FAIL no row in %s" % (n, os.path.basename(a.table)))
            failed += 1
    for case in rows:
        if a.only and case["name"] not in a.only:
            continue
        rec = case.get("recording", case["name"])
        if rec not in recorded:
            print("%-44s FAIL no recording %s" % (case["name"], rec))
            failed += 1
            continue
        meta, body = load_recording(a.recordings, rec)
        res = run_case(a.cli, a.work, certs, history, case, meta, body,
                       save_path=os.path.join(reqdir, case["name"] + ".json"))
        why = judge(case, res, history_bytes, history)
        if why:
            failed += 1
            print("%-44s FAIL %s" % (case["name"], "; ".join(why)))
            if a.verbose:
                print("    argv: %s\n    stderr: %s" % (" ".join(res["argv"]), res["stderr"].replace("\n", "\n    ")))
        else:
            passed += 1
            print("%-44s PASS" % case["name"])
        sys.stdout.flush()
    assert names  # the table is not empty
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

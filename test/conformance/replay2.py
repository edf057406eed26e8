#!/usr/bin/env python3
"""conformance2_replay: the second set of recorded provider answers
(shared/conformance2: 68 recordings from other public projects' test suites)
replayed to `ctxc compress`, each judged by the outcome its set states.

Usage:
  replay2.py --cli CTXC --work DIR [--set DIR] [--only NAME ...] [-v]

The set directory (--set, else $CTXC_CONFORMANCE2; no default: unset or
absent, the test says so and exits 77, skipped) holds README.txt,
settings.json and recordings/NAME.body + NAME.json. It is only read.

Each recording is served as the first set's are (replay.py's one-request
TLS server on 127.0.0.1: its status, its content type, the body in 7-byte
sends, streams chunked one chunk per send) to the command the set's README
names:

  ctxc compress boards/host/examples/coding-session.jsonl
       --strategy middle-out --context-limit 16000 --provider P
       --model M --base-url https://localhost:PORT[/v1] --key-env VAR -o OUT
       [--no-stream]                 (NAME.json "stream": false)

with CTXC_HOME's settings.json holding the test CA, compression.retries 0,
a 10 s read timeout and the set's settings.json merged in (the fact check
off: the summary entry is exactly the model's text).

The outcome each recording must have is the set's, not ctxc's: NAME.json's
"expect" (checked against the README's table of recordings: every recording
must be listed there with the same outcome and stream mode), its
"expect_stderr" regexes and "no_raw_json", and the README's rules for each
outcome, which this script applies with its own reading of the recorded
body (answer() below, written from the README's definition, not from
ctxc's code):

  ok     exit 0; the one isSummary entry's first text block is exactly the
         recording's answer: OpenAI choices[index 0].delta.content joined
         (message.content unary), Anthropic text_delta deltas (text blocks
         unary), Gemini parts[].text without "thought": true. The recording
         must itself end with a normal stop and a non-blank text.
  cut    non-zero exit, no output file, the input unchanged, stderr says
         "cut off" or quotes the provider's message.
  error  non-zero exit, no output file, the input unchanged, stderr quotes
         the provider's message when the recording carries one (the first
         40 printable bytes of error.message, or of the error string, or of
         the top-level message or detail when there is no error object) and
         matches every expect_stderr regex (case-insensitive); no_raw_json:
         no JSON object syntax in stderr.
  any    the API key appears in neither stderr, stdout nor the output file.

A few answers are also pinned here as literals (PINNED), read off the
recordings by hand, so that a mistake in answer() cannot pass unseen.

Prints one line per recording (PASS/FAIL and what differed), then
"N passed, N failed"; exit 1 when any failed.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import replay  # noqa: E402  (the server, the CLI run, the summary reader)

HISTORY = os.path.join(replay.SOURCE, "boards", "host", "examples", "coding-session.jsonl")
CONTEXT_LIMIT = "16000"
NORMAL_STOPS = {"openai": {"stop"}, "anthropic": {"end_turn", "stop_sequence"}, "gemini": {"STOP"}}
RAW_JSON = ('{"', '":{', '": {', '":[', '": [')

# What the recordings of the four shapes of issue 41 carry, read off them by
# hand: answer() and provider_message() must agree with these.
PINNED = {
    # every chunk also carries the whole message so far: only the delta counts
    "openai-perplexity-stream-no-done": ("answer", "Hello!"),
    # choices 0 and 1 interleaved: choice 0 is the answer
    "openai-stream-two-choices": ("answer", "I'm unable to provide real-time weather updates. To get the "
                                  "latest weather information for Seattle and San Francisco, I recommend "
                                  "checking a reliable weather website or using a weather app. You can "
                                  "also ask a voice assistant or search online for the current weather "
                                  "conditions."),
    # a refusal streamed in pieces: its whole text
    "openai-stream-refusal": ("refusal", "I'm very sorry, but I can't assist with that request."),
    # error bodies without an error object
    "openai-cerebras-error-401": ("message", "Wrong API Key"),
    "openai-mistral-error-400-toplevel": ("message", "Invalid model: bad model"),
    "openai-mistral-error-401-detail": ("message", "Unauthorized"),
}


# --------------------------------------------------------------------------
# reading a recording as its README defines it


def sse_events(body):
    """The data of each event of an SSE body (data lines joined by \\n),
    comments and other fields left out, [DONE] included as text."""
    text = body.decode("utf-8")
    out = []
    data = None
    for line in re.split(r"\r\n|\r|\n", text):
        if line == "":
            if data is not None:
                out.append("\n".join(data))
            data = None
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data = (data or []) + [value]
    if data is not None:
        out.append("\n".join(data))
    return out


def json_texts(meta, body):
    """The JSON texts of the recording: each event's data of a stream (not
    [DONE]), else the whole body. Text that is not JSON (an HTML page) is
    none."""
    streamed = meta["status"] == 200 and "event-stream" in meta["content_type"]
    if streamed:
        return [json.loads(d) for d in sse_events(body) if d.strip() and d.strip() != "[DONE]"]
    try:
        return [json.loads(body.decode("utf-8"))]
    except ValueError:
        return []


def provider_message(texts, status):
    """The provider's error message the recording carries, or None:
    error.message, an error string, and for an error status a top-level
    message or detail string when no error object is there."""
    for t in texts:
        for obj in (t if isinstance(t, list) else [t]):
            if not isinstance(obj, dict):
                continue
            e = obj.get("error")
            if isinstance(e, dict) and isinstance(e.get("message"), str):
                return e["message"]
            if isinstance(e, str):
                return e
            if status >= 400:
                for k in ("message", "detail"):
                    if isinstance(obj.get(k), str):
                        return obj[k]
    return None


def first_printable(msg, n=40):
    """The first n bytes of msg, up to its first byte that is not printable
    ASCII."""
    out = ""
    for ch in msg[:n]:
        if not (" " <= ch <= "~"):
            break
        out += ch
    return out


def answer(meta, texts):
    """(text, stop reason, refusal) of the recording as its README defines
    the answer (the refusal: OpenAI's refusal text of choice 0, "" when
    none)."""
    provider = meta["provider"]
    streamed = meta.get("stream", True) and "event-stream" in meta["content_type"]
    text, stop, refusal = "", None, ""
    for t in texts:
        if provider == "openai":
            choices = t.get("choices") or []
            for pos, c in enumerate(choices):
                if c.get("index", pos) != 0:
                    continue
                part = (c.get("delta") if streamed else c.get("message")) or {}
                if isinstance(part.get("content"), str):
                    text += part["content"]
                if isinstance(part.get("refusal"), str):
                    refusal += part["refusal"]
                if c.get("finish_reason"):
                    stop = c["finish_reason"]
        elif provider == "anthropic":
            if streamed:
                d = t.get("delta") or {}
                if t.get("type") == "content_block_delta" and d.get("type") == "text_delta":
                    text += d["text"]
                if t.get("type") == "message_delta" and d.get("stop_reason"):
                    stop = d["stop_reason"]
            else:
                for b in t.get("content") or []:
                    if b.get("type") == "text":
                        text += b["text"]
                stop = t.get("stop_reason") or stop
        else:
            for cand in (t.get("candidates") or [])[:1]:
                for p in (cand.get("content") or {}).get("parts") or []:
                    if "text" in p and p.get("thought") is not True:
                        text += p["text"]
                if cand.get("finishReason"):
                    stop = cand["finishReason"]
    return text, stop, refusal


# --------------------------------------------------------------------------
# the README's table


def readme_table(path):
    """{name: (expect, no_stream)} from the README's "Recordings" table."""
    rows = {}
    in_table = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("Recordings (expect, case):"):
                in_table = True
                continue
            if in_table:
                if not line.strip():
                    if rows:
                        break
                    continue
                m = re.match(r"\s+(\S+)\s+(ok|cut|error)(/no-stream)?\s", line)
                if m:
                    rows[m.group(1)] = (m.group(2), bool(m.group(3)))
    return rows


# --------------------------------------------------------------------------
# judging


def judge(name, meta, body, res, history_bytes):
    why = []
    if res["server_error"]:
        why.append("server: " + res["server_error"])
    key = replay.KEY
    outs = [res["stdout"], res["stderr"]]
    if res["out"] is not None:
        with open(res["out"], encoding="utf-8", errors="replace") as f:
            outs.append(f.read())
    if any(key in s for s in outs):
        why.append("the API key appears in the CLI's output")
    texts = json_texts(meta, body)
    expect = meta["expect"]
    stderr = res["stderr"]
    want, stop, refusal = answer(meta, texts)
    msg = provider_message(texts, meta["status"])
    pin_kind, pin = PINNED.get(name, (None, None))
    read = {"answer": want, "refusal": refusal, "message": msg}.get(pin_kind)
    if pin_kind and read != pin:
        why.append("the recording reads as %s %r, pinned %r" % (pin_kind, read, pin))
    if expect == "ok":
        if stop not in NORMAL_STOPS[meta["provider"]] or not want.strip() or refusal:
            why.append("the recording does not read as ok (stop %r, text %r)" % (stop, replay.short(want)))
        if res["rc"] != 0:
            why.append("exit %s, want 0: %s" % (res["rc"], replay.short(stderr.strip(), 240)))
        elif res["out"] is None:
            why.append("no output file written")
        else:
            got, err, entries = replay.summary_of(res["out"])
            if err:
                why.append(err)
            elif got != want:
                why.append("summary %r, want %r" % (replay.short(got), replay.short(want)))
        return why
    # cut and error: nothing written, the input unchanged
    if res["rc"] == 0 or res["rc"] == "timeout":
        why.append("exit %s, want non-zero" % res["rc"])
    if res["out"] is not None:
        why.append("output file written on failure")
    with open(HISTORY, "rb") as f:
        if f.read() != history_bytes:
            why.append("the input history changed")
    quote = first_printable(msg) if msg else None
    if expect == "cut":
        if "cut off" not in stderr and not (quote and quote in stderr):
            why.append("stderr says neither 'cut off' nor the provider's message: %r"
                       % replay.short(stderr.strip(), 240))
    else:
        if quote and quote not in stderr:
            why.append("stderr lacks the provider's message %r: %r" % (quote, replay.short(stderr.strip(), 240)))
        if refusal and refusal not in stderr:  # "refusals name the refusal and its text"
            why.append("stderr lacks the refusal's text %r: %r" % (refusal, replay.short(stderr.strip(), 240)))
        for rx in meta.get("expect_stderr", []):
            if not re.search(rx, stderr, re.I):
                why.append("stderr does not match %r: %r" % (rx, replay.short(stderr.strip(), 240)))
    if meta.get("no_raw_json"):
        for bad in RAW_JSON:
            if bad in stderr:
                why.append("stderr shows raw JSON (%r): %r" % (bad, replay.short(stderr.strip(), 240)))
                break
    return why


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--set", default=os.environ.get("CTXC_CONFORMANCE2", ""))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the CLI's stderr of failing rows")
    a = ap.parse_args()
    rdir = os.path.join(a.set, "recordings")
    if not a.set or not os.path.isdir(rdir):
        print("conformance2_replay: no second conformance set at '%s' (set CTXC_CONFORMANCE2 to the "
              "directory holding README.txt, settings.json and recordings/; test/conformance/README.md "
              "says more): skipped" % a.set)
        return 77
    if not os.access(a.cli, os.X_OK):
        print("conformance2_replay: CLI %s not built" % a.cli)
        return 1
    with open(os.path.join(a.set, "settings.json"), encoding="utf-8") as f:
        settings = json.load(f)
    table = readme_table(os.path.join(a.set, "README.txt"))
    os.makedirs(a.work, exist_ok=True)
    certs = replay.make_certs(a.work)
    with open(HISTORY, "rb") as f:
        history_bytes = f.read()

    names = sorted(n[:-5] for n in os.listdir(rdir) if n.endswith(".json"))
    passed = failed = 0
    for name in sorted(set(table) - set(names)):
        if not a.only or name in a.only:
            print("%-40s FAIL listed in README.txt, no recording" % name)
            failed += 1
    for name in names:
        if a.only and name not in a.only:
            continue
        meta, body = replay.load_recording(rdir, name)
        no_stream = meta.get("stream", True) is False
        why = []
        if table.get(name) != (meta["expect"], no_stream):
            why.append("README.txt lists %r, NAME.json says %r" % (table.get(name), (meta["expect"], no_stream)))
        res = replay.run_case(a.cli, a.work, certs, HISTORY, {"name": name, "model": "rec-" + name}, meta, body,
                              settings=settings, context_limit=CONTEXT_LIMIT, no_stream=no_stream)
        why += judge(name, meta, body, res, history_bytes)
        if why:
            failed += 1
            print("%-40s FAIL %s" % (name, "; ".join(why)))
            if a.verbose:
                print("    argv: %s\n    stderr: %s" % (" ".join(res["argv"]), res["stderr"].replace("\n", "\n    ")))
        else:
            passed += 1
            print("%-40s PASS" % name)
        sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Generated agent sessions for `make bench` (and anyone without a corpus).

    gen_sessions.py OUT_DIR [--sizes 50,200,1000] [--seed 29] [--example FILE]
                    [--check CTXC]

Writes OUT_DIR/gen-<entries>.jsonl for every size, each an agent session in
the interchange format (docs/design.md, "Interchange format"), plus a copy
of the shipped example session (--example, default
boards/host/examples/coding-session.jsonl) when it is given or found. The
output depends only on the seed and the sizes: the same arguments write the
same bytes on every machine (Python's own random.Random, no clock, no
environment).

What a session holds, as a coding agent's transcript does: a first human
request with metadata.cwd, then turns of an ai entry (sometimes thinking and
a line of text, then one to three tool calls: parallel calls are answered by
one tool entry with a response per call, in call order) and the tool entry
answering them. The tools are the interchange spec's names: read_file (whole
files, also the same file read again), read_line_range, write_file (new
content of a file read before: the earlier reads become stale, which the
density step prunes), replace (edits), run_shell_command (build and test
output, sometimes long, sometimes failing with an error), glob and
search_file_content; now and then a human entry (a follow-up request, a
`--- path ---` inclusion of a file the user pastes again), an ai answer
without tools, and a call left unanswered at the very end. Files and their
texts come from a small fixed project that grows as the session writes.

Nothing here is committed output: `make bench` writes under build/.

--check CTXC (ctest bench_gen_sessions): each written file must import
cleanly with `CTXC stats` (unpaired only the calls the session leaves
unanswered at its end), and `CTXC compress` with top-down-truncation and
with high-density at half its tokens must succeed and shrink it. Ends with
"N passed, N failed".
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys

WORDS = ("sensor reading buffer parser value limit state queue retry timeout "
         "config packet frame header length offset checksum index table entry "
         "history token window summary budget arena slot record writer reader "
         "error status handler callback driver clock tick task mutex event").split()
DIRS = ("src", "src/net", "src/core", "include", "tests", "tools")
EXTS = (".c", ".h", ".py", ".md")
MODEL = "generated-model-1"


class Session:
    def __init__(self, rng, entries, cwd):
        self.rng = rng
        self.target = entries
        self.cwd = cwd
        self.lines = []
        self.t = 1731900000000
        self.ids = 0
        self.files = {}
        for _ in range(12 + entries // 40):
            self.new_file()

    # --- text -----------------------------------------------------------
    def words(self, n):
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def sentence(self, lo=6, hi=18):
        s = self.words(self.rng.randint(lo, hi))
        return s[0].upper() + s[1:] + "."

    def code_line(self):
        r = self.rng.random()
        a, b = self.rng.choice(WORDS), self.rng.choice(WORDS)
        if r < 0.3:
            return "    %s_%s = %s_%s(%s, %d);" % (a, b, b, a, self.rng.choice(WORDS), self.rng.randint(0, 4096))
        if r < 0.5:
            return "    if (%s->%s > %s_MAX) {" % (a, b, b.upper())
        if r < 0.6:
            return "    }"
        if r < 0.75:
            return "    /* %s */" % self.words(self.rng.randint(3, 10))
        if r < 0.85:
            return ""
        return "static int %s_%s(const %s_t *%s)" % (a, b, a, b)

    def file_text(self, lines):
        return "\n".join(self.code_line() for _ in range(lines)) + "\n"

    def new_file(self):
        for _ in range(100):
            name = "%s/%s_%s%s" % (self.rng.choice(DIRS), self.rng.choice(WORDS),
                                   self.rng.choice(WORDS), self.rng.choice(EXTS))
            if name not in self.files:
                self.files[name] = self.file_text(self.rng.randint(20, 160))
                return name
        return self.rng.choice(sorted(self.files))

    def some_file(self):
        return self.rng.choice(sorted(self.files))

    # --- entries ----------------------------------------------------------
    def tick(self, lo=500, hi=20000):
        self.t += self.rng.randint(lo, hi)
        return self.t

    def emit(self, speaker, blocks, metadata):
        self.lines.append(json.dumps({"speaker": speaker, "blocks": blocks, "metadata": metadata},
                                     ensure_ascii=False, separators=(",", ":")))

    def human(self, text, first=False):
        meta = {"timestamp": self.tick()}
        if first:
            meta["cwd"] = self.cwd
            meta["source"] = "ctxc test/bench/gen_sessions.py"
        self.emit("human", [{"type": "text", "text": text}], meta)

    def ai(self, blocks):
        self.emit("ai", blocks, {"timestamp": self.tick(), "model": MODEL,
                                 "usage": {"promptTokens": self.rng.randint(2000, 90000),
                                           "completionTokens": self.rng.randint(20, 900)}})

    def call_id(self):
        self.ids += 1
        return "call_%06x%08x" % (self.ids, self.rng.getrandbits(32))

    # --- tools ------------------------------------------------------------
    def path_arg(self, name):
        # relative or absolute, as agents write them (the workspace root
        # makes them one file)
        return name if self.rng.random() < 0.7 else "%s/%s" % (self.cwd, name)

    def tool(self):
        """One tool call and its response: (call block, response block)."""
        r = self.rng.random()
        cid = self.call_id()
        if r < 0.30:
            f = self.some_file()
            call = {"name": "read_file", "parameters": {"file_path": self.path_arg(f)}}
            result, error = self.files[f], None
        elif r < 0.38:
            f = self.some_file()
            lines = self.files[f].split("\n")
            a = self.rng.randint(1, max(1, len(lines) - 5))
            b = min(len(lines), a + self.rng.randint(3, 40))
            call = {"name": "read_line_range", "parameters": {"file_path": f, "start": a, "end": b}}
            result = "[%s, lines %d-%d of %d]\n\n%s" % (f, a, b, len(lines), "\n".join(lines[a - 1:b]))
            error = None
        elif r < 0.48:
            f = self.some_file() if self.rng.random() < 0.8 else self.new_file()
            content = self.file_text(self.rng.randint(20, 160))
            self.files[f] = content
            call = {"name": "write_file", "parameters": {"file_path": self.path_arg(f), "content": content}}
            result, error = "Overwrote %s/%s (%d bytes)." % (self.cwd, f, len(content.encode())), None
        elif r < 0.62:
            f = self.some_file()
            lines = self.files[f].split("\n")
            i = self.rng.randrange(len(lines))
            old = lines[i]
            new = self.code_line()
            lines[i] = new
            self.files[f] = "\n".join(lines)
            call = {"name": "replace", "parameters": {"file_path": f, "old_string": old, "new_string": new}}
            result, error = "Replaced 1 occurrence in %s/%s." % (self.cwd, f), None
        elif r < 0.84:
            cmd = self.rng.choice(("make test", "make", "ctest --output-on-failure", "git status",
                                   "git diff --stat", "python3 tools/check.py", "ls -la src"))
            n = self.rng.choice((3, 8, 20, 60, 200)) if cmd.startswith(("make", "ctest")) else self.rng.randint(2, 12)
            out = "\n".join("%s: %s" % (self.rng.choice(sorted(self.files)), self.words(self.rng.randint(4, 14)))
                            for _ in range(n))
            failed = self.rng.random() < 0.2
            call = {"name": "run_shell_command", "parameters": {"command": cmd}}
            result = "stdout:\n%s\nexit code: %d" % (out, 2 if failed else 0)
            error = ("Command exited with code 2: %s" % self.words(6)) if failed else None
        elif r < 0.92:
            pat = "**/*%s" % self.rng.choice(EXTS)
            hits = [f for f in sorted(self.files) if f.endswith(pat[4:])]
            call = {"name": "glob", "parameters": {"pattern": pat, "dir_path": self.cwd}}
            result = "Found %d files matching \"%s\" in %s:\n%s" % (
                len(hits), pat, self.cwd, "\n".join("%s/%s" % (self.cwd, h) for h in hits))
            error = None
        else:
            word = self.rng.choice(WORDS)
            hits = [(f, i + 1, l) for f in sorted(self.files)
                    for i, l in enumerate(self.files[f].split("\n")) if word in l][:30]
            call = {"name": "search_file_content", "parameters": {"pattern": word, "dir_path": "."}}
            result = "Found %d matches for /%s/ under .:\n%s" % (
                len(hits), word, "\n".join("%s:%d: %s" % h for h in hits))
            error = None
        call_block = {"type": "tool_call", "id": cid, "name": call["name"], "parameters": call["parameters"]}
        resp = {"type": "tool_response", "callId": cid, "toolName": call["name"], "result": result}
        if error is not None:
            resp["error"] = error
        return call_block, resp

    def turn(self):
        r = self.rng.random()
        if r < 0.05:
            self.human(self.sentence(8, 30))
            return
        if r < 0.08:
            f = self.some_file()
            self.human("%s\n\n--- %s ---\n%s" % (self.sentence(), f, self.files[f]))
            return
        if r < 0.13:
            self.ai([{"type": "text", "text": " ".join(self.sentence() for _ in range(self.rng.randint(1, 5)))}])
            return
        blocks = []
        if self.rng.random() < 0.25:
            blocks.append({"type": "thinking", "thought": " ".join(self.sentence() for _ in range(self.rng.randint(1, 4)))})
        if self.rng.random() < 0.6:
            blocks.append({"type": "text", "text": self.sentence()})
        n = self.rng.choice((1, 1, 1, 1, 2, 2, 3))  # parallel tool calls
        pairs = [self.tool() for _ in range(n)]
        self.ai(blocks + [c for c, _ in pairs])
        if len(self.lines) >= self.target:
            return  # the session ends on calls not answered yet
        self.emit("tool", [r for _, r in pairs], {"timestamp": self.tick(200, 8000)})

    def run(self):
        self.human("Please work on the %s module: %s" % (self.rng.choice(WORDS), self.sentence(12, 40)), first=True)
        while len(self.lines) < self.target:
            self.turn()
        return "\n".join(self.lines[:self.target]) + "\n"


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Generated agent sessions (JSON Lines) for the benchmark.")
    ap.add_argument("out")
    ap.add_argument("--sizes", default="50,200,1000", help="entries per session, comma-separated")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--example", default=os.path.join(here, "..", "..", "boards", "host", "examples",
                                                       "coding-session.jsonl"))
    ap.add_argument("--check", metavar="CTXC", help="check every file with this ctxc CLI")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    written = []
    for i, size in enumerate(int(s) for s in a.sizes.split(",") if s):
        if size < 2:
            sys.exit("gen_sessions: a session needs at least 2 entries, got %d" % size)
        rng = random.Random(a.seed * 1000003 + size)
        text = Session(rng, size, "/home/dev/gen%d" % i).run()
        path = os.path.join(a.out, "gen-%05d.jsonl" % size)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print("gen_sessions: %s: %d entries, %d bytes" % (path, size, len(text.encode())))
        last = json.loads(text.rstrip("\n").split("\n")[-1])
        open_calls = sum(1 for b in last["blocks"] if b["type"] == "tool_call") \
            if last["speaker"] == "ai" else 0
        written.append((path, size, open_calls))
    if a.example and os.path.isfile(a.example):
        dst = os.path.join(a.out, os.path.basename(a.example))
        shutil.copyfile(a.example, dst)
        print("gen_sessions: %s: the shipped example" % dst)
    if a.check:
        return check(a.check, written)
    return 0


def check(cli, written):
    passed = failed = 0
    for path, size, open_calls in written:
        problems = []
        st = subprocess.run([cli, "stats", path], capture_output=True, text=True)
        m = re.search(r"^entries: (\d+)", st.stdout, re.M)
        u = re.search(r"tool calls: \d+ \(unpaired (\d+)\), tool responses: \d+ \(unpaired (\d+)\)", st.stdout)
        t = re.search(r"^tokens \(estimated\): (\d+)", st.stdout, re.M)
        if st.returncode != 0 or not (m and u and t):
            problems.append("stats failed: %s" % (st.stderr.strip() or st.stdout.strip())[-300:])
        else:
            if int(m.group(1)) != size:
                problems.append("%s entries, not %d" % (m.group(1), size))
            if int(u.group(1)) != open_calls or int(u.group(2)) != 0:
                problems.append("unpaired calls %s / responses %s (expected %d / 0)"
                                % (u.group(1), u.group(2), open_calls))
            tokens = int(t.group(1))
            for strategy in ("top-down-truncation", "high-density"):
                c = subprocess.run([cli, "compress", path, "--strategy", strategy,
                                    "--context-limit", str(max(tokens // 2, 1)),
                                    "-o", os.devnull], capture_output=True, text=True)
                after = re.search(r"^tokens\s+\d+\s+\d+\s+(\d+)", c.stderr, re.M)
                if c.returncode != 0 or not after or int(after.group(1)) >= tokens:
                    problems.append("compress %s: exit %d, %s" % (strategy, c.returncode,
                                                                    c.stderr.strip()[-300:]))
        name = os.path.basename(path)
        if problems:
            failed += 1
            for p in problems:
                print("FAIL %s: %s" % (name, p))
        else:
            passed += 1
            print("ok   %s: imports (%d entries, %d calls left open), both LLM-free strategies shrink it"
                  % (name, size, open_calls))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

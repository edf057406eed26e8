#!/usr/bin/env python3
"""The fact check of LLM summaries, measured on the corpus (issue 28).

For every *.jsonl file of the corpus, `ctxc compress --strategy middle-out`
summarises the middle of the history with the local HTTPS fixture server's
deliberately lossy model (fixture-lossy: a <state_snapshot> holding only the
first paragraph of the first message it is sent), with
compression.factCheck = append. The CLI reports the anchors of the
summarised range (paths its tool calls touched, failed commands, URLs,
backticked identifiers, active todos) found in that summary, missing from
it, and added by ctxc's section; the table shows how many were present
before the check and after it, per file.

    facts_table.py --cli build/host/ctxc [--corpus DIR] [--work DIR]

The corpus is CTXC_CORPUS, else ../shared/corpus beside the checkout; when
it is absent the script says so and exits 77 (ctest: skipped). Exit 1 when
a check fails: every run succeeds, no file has fewer anchors present after
the check than before, and the corpus as a whole has anchors the lossy
summary missed and the check added.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
KEY_VAR = "CTXC_FACTS_TABLE_KEY"


def corpus_dir(arg):
    if arg:
        return arg
    env = os.environ.get("CTXC_CORPUS")
    if env:
        return env
    return os.path.join(HERE, "..", "..", "..", "shared", "corpus")


def workspace_of(path):
    """The workspace root the corpus file records (first entry's cwd)."""
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    try:
        meta = json.loads(first).get("metadata") or {}
    except ValueError:
        return None
    cwd = meta.get("cwd")
    return cwd if isinstance(cwd, str) and cwd.startswith("/") else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--corpus")
    ap.add_argument("--work", default="/tmp/ctxc-facts-table")
    a = ap.parse_args()
    corpus = os.path.abspath(corpus_dir(a.corpus))
    files = sorted(f for f in os.listdir(corpus) if f.endswith(".jsonl")) \
        if os.path.isdir(corpus) else []
    if not files:
        print("corpus absent: no *.jsonl in %s (set CTXC_CORPUS) -- the fact "
              "check's corpus table is skipped" % corpus)
        return 77
    shutil.rmtree(a.work, ignore_errors=True)
    fx = os.path.join(a.work, "fixtures")
    home = os.path.join(a.work, "home")
    out = os.path.join(a.work, "out")
    for d in (fx, home, out):
        os.makedirs(d)
    subprocess.run(["sh", os.path.join(FIXTURES, "make_certs.sh"), fx],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, os.path.join(FIXTURES, "https_server.py"),
                    "--dir", fx, "--lifetime", "900", "--daemon"], check=True)
    failures = []
    rows = []
    try:
        with open(os.path.join(fx, "ports.json"), encoding="utf-8") as f:
            port = json.load(f)["good"]
        with open(os.path.join(home, "settings.json"), "w",
                  encoding="utf-8") as f:
            json.dump({"network.ca-file": os.path.join(fx, "ca.pem"),
                       "compression.factCheck": "append"}, f)
        env = dict(os.environ, CTXC_HOME=home, **{KEY_VAR: "fixture-key"})
        for name in files:
            path = os.path.join(corpus, name)
            cmd = [a.cli, "compress", path, "--strategy", "middle-out",
                   "--provider", "openai", "--model", "fixture-lossy",
                   "--base-url", "https://localhost:%d/v1" % port,
                   "--key-env", KEY_VAR, "--context-limit", "200000",
                   "-o", os.path.join(out, name)]
            ws = workspace_of(path)
            if ws:
                cmd += ["--workspace", ws]
            r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               timeout=600)
            m = re.search(r"^facts: (\d+) found, (\d+) missing, (\d+) added",
                          r.stderr, re.M)
            c = re.search(r"^compress: (\d+) of (\d+) entries compressed",
                          r.stderr, re.M)
            if r.returncode != 0 or not m or not c:
                failures.append("%s: exit %d\n%s" % (name, r.returncode,
                                                      r.stderr.strip()))
                continue
            found, missing, added = (int(x) for x in m.groups())
            rows.append((name, int(c.group(1)), int(c.group(2)), found,
                         missing, added))
            if found + added < found:
                failures.append("%s: fewer anchors after the check" % name)
    finally:
        subprocess.run([sys.executable,
                        os.path.join(FIXTURES, "https_server.py"),
                        "--dir", fx, "--stop"], check=False)

    def pct(n, d):
        return "%.0f %%" % (100.0 * n / d) if d else "-"

    print("Fact check on the corpus: middle-out with fixture-lossy (the "
          "first paragraph of the first message), compression.factCheck "
          "append, at most 12 items / 1024 bytes added\n")
    print("| file | entries summarised | anchors | present before | "
          "present after | missing, not listed |")
    print("|---|---:|---:|---:|---:|---:|")
    tot = [0, 0, 0, 0]
    for name, mid, n, found, missing, added in rows:
        total = found + missing
        print("| %s | %d of %d | %d | %d (%s) | %d (%s) | %d |" %
              (name, mid, n, total, found, pct(found, total), found + added,
               pct(found + added, total), missing - added))
        tot = [tot[0] + total, tot[1] + found, tot[2] + found + added,
               tot[3] + missing - added]
    print("| all | | %d | %d (%s) | %d (%s) | %d |" %
          (tot[0], tot[1], pct(tot[1], tot[0]), tot[2], pct(tot[2], tot[0]),
           tot[3]))
    if rows and tot[2] <= tot[1]:
        failures.append("no anchor was added anywhere")
    for f in failures:
        print("FAIL " + f)
    print("%d passed, %d failed" % (len(rows), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

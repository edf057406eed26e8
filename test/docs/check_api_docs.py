#!/usr/bin/env python3
"""The API reference check: Doxygen over the public headers, warnings as errors.

    check_api_docs.py --doxyfile docs/Doxyfile --headers include/ctxc --out DIR
        [--version V] [--selftest]

Runs doxygen with docs/Doxyfile on the headers (EXTRACT_ALL=NO,
WARN_IF_UNDOCUMENTED=YES: an undocumented public function, type, field or
macro is a warning, and so is any markup error; WARN_AS_ERROR=
FAIL_ON_WARNINGS: doxygen reports every warning, then exits non-zero) and
fails when doxygen fails or writes a single warning; the warnings are
printed as FILE:LINE: text.
The HTML goes to OUT/html (`make docs` writes the same into build/docs/api).

--selftest: the check must catch what it is for. Copies the headers to
OUT/headers, adds an undocumented function, macro and struct field to the
copy of status.h, runs the check on the copy and passes only when it fails
naming all three.

Ends with "N passed, N failed".
"""
import argparse
import os
import shutil
import subprocess
import sys

PLANTED = """
/* planted by check_api_docs.py --selftest: three undocumented names */
int ctxc_selftest_undocumented_fn(void);
#define CTXC_SELFTEST_UNDOCUMENTED_MACRO 1
/** A documented struct with one undocumented field. */
typedef struct {
    int selftest_undocumented_field;
} ctxc_selftest_struct_t;
"""
EXPECT = ("ctxc_selftest_undocumented_fn", "CTXC_SELFTEST_UNDOCUMENTED_MACRO",
          "selftest_undocumented_field")


def run_doxygen(doxyfile, headers, out, version):
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    log = os.path.join(out, "warnings.log")
    if os.path.exists(log):
        os.remove(log)
    doxygen = shutil.which("doxygen")
    if doxygen is None:
        return None, ["doxygen not found (Debian: apt-get install doxygen; `make test` and `make docs` install it)"]
    env = dict(os.environ,
               CTXC_DOXYGEN_OUT=out,
               CTXC_DOXYGEN_INPUT=os.path.abspath(headers),
               CTXC_DOXYGEN_STRIP=os.path.dirname(os.path.dirname(os.path.abspath(headers))),
               CTXC_DOXYGEN_WARN_AS_ERROR="FAIL_ON_WARNINGS",
               CTXC_DOXYGEN_WARN_LOG=log,
               CTXC_DOXYGEN_VERSION=version)
    p = subprocess.run([doxygen, os.path.abspath(doxyfile)], env=env, cwd=out,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    warnings = []
    if os.path.exists(log):
        with open(log, encoding="utf-8", errors="replace") as f:
            warnings = [l.rstrip("\n") for l in f if l.strip()]
    if p.returncode != 0:
        warnings.append("doxygen exited with status %d: %s" % (p.returncode, p.stdout.strip()[-2000:]))
    return p.returncode, warnings


def check(doxyfile, headers, out, version, label):
    n = len([h for h in os.listdir(headers) if h.endswith(".h")])
    _, warnings = run_doxygen(doxyfile, headers, out, version)
    for w in warnings:
        print("%s: %s" % (label, w))
    print("%s: %d headers, %d warnings (HTML: %s)" % (label, n, len(warnings), os.path.join(out, "html")))
    return warnings


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--doxyfile", required=True)
    ap.add_argument("--headers", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--version", default="")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if not a.selftest:
        warnings = check(a.doxyfile, a.headers, a.out, a.version, "api_docs")
        ok = not warnings
        print("%d passed, %d failed" % (1 if ok else 0, 0 if ok else 1))
        return 0 if ok else 1
    copy = os.path.join(a.out, "headers")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(a.headers, copy)
    with open(os.path.join(copy, "status.h"), "a", encoding="utf-8") as f:
        f.write(PLANTED)
    warnings = check(a.doxyfile, copy, os.path.join(a.out, "run"), a.version, "api_docs (planted)")
    missing = [e for e in EXPECT if not any(e in w and "not documented" in w for w in warnings)]
    ok = bool(warnings) and not missing
    if ok:
        print("api_docs_selftest: the check fails on the planted undocumented function, macro and field, as it must")
    else:
        print("api_docs_selftest: the check did not report: %s" % ", ".join(missing or ["anything"]))
    print("%d passed, %d failed" % (1 if ok else 0, 0 if ok else 1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Compiles and links every C snippet of the README and of docs/*.md.

Every fenced block whose info string is `c` is one snippet. By default a
snippet is a translation unit of its own, compiled after `#include
"ctxc/ctxc.h"` (so excerpts of public headers and of the generated header
must agree with the real ones: a differing prototype or macro is an error
under -Werror). An HTML comment on the line before the fence can say more:

    <!-- snippet: body context=http -->

  body       the snippet is statements: it is wrapped in a function
  context=N  test/docs/context/N.h is included first: it declares the
             caller's objects the fragment uses and does not declare
             itself (a port, the settings, a callback, ...)
  host       host only: not compiled with the cross compiler (the POSIX
             port, or an excerpt of the host's generated header)

Each snippet is compiled with -Wall -Wextra -Werror (unused names allowed),
then linked with a main() into a program against the built libraries, so
every function a snippet calls exists. With --cross CC, every snippet not
marked `host` is also compiled (not linked) with the cross compiler.

usage: readme_snippets.py MARKDOWN... --cc CC --include DIR... --lib=LIB...
                          [--cross CC --cross-include DIR...] --work DIR
MARKDOWN is a file or a directory (its *.md files, sorted). Exit status 0
when every snippet compiles and links; the last line is `N passed, N failed`.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function",
         "-Wno-unused-variable", "-Wno-unused-but-set-variable",
         "-Wno-unused-parameter"]


def snippets(path):
    """(line of the fence, options, code) for every ```c block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```c":
            opts = {}
            prev = lines[i - 1].strip() if i > 0 else ""
            m = re.fullmatch(r"<!--\s*snippet:(.*?)-->", prev)
            if m:
                for word in m.group(1).split():
                    k, _, v = word.partition("=")
                    opts[k] = v or True
            start, i = i + 1, i + 1
            while i < len(lines) and lines[i].strip() != "```":
                i += 1
            if i == len(lines):
                sys.exit(f"{path}:{start}: ```c block is not closed")
            out.append((start, opts, "\n".join(lines[start:i])))
        i += 1
    return out


def source(line, opts, code, readme):
    """One translation unit for the snippet at `line` of file `readme`."""
    ctx = opts.get("context")
    head = [f"/* {os.path.basename(readme)}:{line} */"]
    if ctx:
        hdr = os.path.join(HERE, "context", f"{ctx}.h")
        if not os.path.isfile(hdr):
            sys.exit(f"{readme}:{line}: no context header {hdr}")
        head.append(f'#include "{hdr}"')
    head.append('#include "ctxc/ctxc.h"')
    body = f"#line {line + 1} \"{readme}\"\n{code}\n"
    if opts.get("body"):
        fn = f"ctxc_snippet_{line}"
        body = f"void {fn}(void);\nvoid {fn}(void) {{\n{body}}}\n"
    return "\n".join(head) + "\n" + body


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("markdown", nargs="+")
    ap.add_argument("--cc", required=True)
    ap.add_argument("--include", nargs="+", default=[])
    ap.add_argument("--lib", action="append", default=[],
                    help="a library or linker flag (repeat; --lib=-lm)")
    ap.add_argument("--cross")
    ap.add_argument("--cross-include", nargs="+", default=[])
    ap.add_argument("--cross-flags", default="")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    files = []
    for m in a.markdown:
        if os.path.isdir(m):
            files += sorted(os.path.join(m, f) for f in os.listdir(m)
                            if f.endswith(".md"))
        else:
            files.append(m)
    found = [(path, *s) for path in files for s in snippets(path)]
    if not found:
        sys.exit(f"{' '.join(a.markdown)}: no ```c snippets found")
    main_c = os.path.join(a.work, "main.c")
    with open(main_c, "w") as f:
        f.write("int main(void) { return 0; }\n")
    passed = failed = 0
    for path, line, opts, code in found:
        doc = os.path.basename(path)
        stem = os.path.splitext(doc)[0]
        name = f"snippet_{stem}_{line}"
        src = os.path.join(a.work, name + ".c")
        with open(src, "w") as f:
            f.write(source(line, opts, code, path))
        inc = [f"-I{d}" for d in a.include]
        exe = os.path.join(a.work, name)
        rc, msg = run([a.cc, *FLAGS, *inc, src, main_c, "-o", exe, *a.lib])
        what = "host compile+link"
        if rc == 0 and a.cross and not opts.get("host"):
            cinc = [f"-I{d}" for d in a.cross_include] or inc
            what = "cortex-m4 compile"
            rc, msg = run([a.cross, *FLAGS, *a.cross_flags.split(), *cinc,
                           "-c", src, "-o", exe + ".arm.o"])
        if rc == 0:
            passed += 1
            print(f"ok   {doc}:{line} ({', '.join(sorted(opts)) or 'unit'})")
        else:
            failed += 1
            print(f"FAIL {doc}:{line}: {what}:\n{msg}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

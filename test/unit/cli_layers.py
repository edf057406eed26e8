#!/usr/bin/env python3
"""The host CLI's modules in two layers, with no call between commands.

Reads the symbols of the CLI's object files (nm): the functions each file
defines and the ones it calls. Commands (main.c, cli_compress.c,
cli_repl.c, cli_restore.c, cli_prompts.c, cli_http.c) may call the shared
modules; a command may not call another command's functions (main.c may
call the commands' entry points cli_cmd_*: it dispatches), and a shared
module may call no command at all. Prints one line per violation and
`N passed, N failed`.

usage: cli_layers.py OBJDIR [--nm NM]
"""
import argparse
import os
import subprocess
import sys

COMMANDS = {"main.c", "cli_compress.c", "cli_repl.c", "cli_restore.c",
            "cli_prompts.c", "cli_http.c"}


def symbols(nm, path):
    out = subprocess.run([nm, path], capture_output=True, text=True,
                         check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return defined, used


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("objdir")
    ap.add_argument("--nm", default="nm")
    a = ap.parse_args()
    objs = sorted(f for f in os.listdir(a.objdir) if f.endswith(".c.o"))
    if not objs:
        sys.exit(f"cli_layers: no object files in {a.objdir}")
    files = {}
    for o in objs:
        files[o[:-2]] = symbols(a.nm, os.path.join(a.objdir, o))
    owner = {s: f for f, (d, _) in files.items() for s in d}
    missing = COMMANDS - set(files)
    passed = failed = 0
    for f in sorted(missing):
        print(f"FAIL {f}: a command file named here is not built")
        failed += 1
    for f, (_, used) in sorted(files.items()):
        bad = []
        for s in sorted(used):
            g = owner.get(s)
            if g is None or g == f or g not in COMMANDS:
                continue
            if f == "main.c" and s.startswith("cli_cmd_"):
                continue  # the dispatch
            bad.append(f"{s} ({g})")
        kind = "command" if f in COMMANDS else "shared"
        if bad:
            failed += 1
            print(f"FAIL {f} ({kind}) calls commands: {', '.join(bad)}")
        else:
            passed += 1
            print(f"ok   {f} ({kind})")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

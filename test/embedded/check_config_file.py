#!/usr/bin/env python3
"""check_config_file.py -- the integrator's configuration header reaches the
library build and every target linked to it (docs/configuration.md).

  check_config_file.py CMAKE SOURCE_DIR BUILD_DIR LIB WORK_DIR

1. In this build (BUILD_DIR, no CTXC_CONFIG_FILE) the library's own compile
   command sees the board's ctxc_config.h: a probe compiled with it finds the
   board's CTXC_CFG_JSON_MAX_TOKENS.
2. A second build of the same sources, configured in WORK_DIR with
   -DCTXC_CONFIG_FILE=<a header setting CTXC_CFG_JSON_MAX_TOKENS 64>, builds
   the library; a probe compiled with the library's compile command, and one
   with the CLI's (a consumer target), both find 64 and
   sizeof(ctxc_import_t) sized by 64 tokens, although the board folder with
   its ctxc_config.h is still on their include path.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

fails = 0


def ok(msg):
    print("ok: " + msg)


def fail(msg):
    global fails
    print("FAIL: " + msg)
    fails += 1


def command_for(build, predicate):
    with open(os.path.join(build, "compile_commands.json")) as f:
        for entry in json.load(f):
            if predicate(entry):
                if "arguments" in entry:
                    return entry["directory"], list(entry["arguments"])
                return entry["directory"], shlex.split(entry["command"])
    return None, None


def lib_source(lib, source):
    """the compile command of src/<source> in the target <lib> itself"""
    marker = re.compile(r"(^|[ /])CMakeFiles/%s\.dir/" % re.escape(lib))

    def pred(e):
        out = e.get("output") or e.get("command") or " ".join(
            e.get("arguments", []))
        return (e["file"].endswith("/src/" + source) and
                marker.search(out) is not None)
    return pred


def compile_args(args, src, obj, drop_include=None, extra=()):
    """a target's compile command (compile_commands.json) for another
    source and object, without -I<drop_include>, with extra flags"""
    cmd = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c" or (a.endswith(".c") and a != src):
            continue
        if drop_include and a == "-I" + drop_include:
            continue
        cmd.append(a)
    return cmd + list(extra) + ["-c", src, "-o", obj]


def probe(what, directory, args, want, work):
    """compile a probe with a target's own flags; want = expected tokens"""
    src = os.path.join(work, "probe.c")
    obj = os.path.join(work, "probe.o")
    with open(src, "w") as f:
        f.write('#include "ctxc/ctxc.h"\n'
                '_Static_assert(CTXC_CFG_JSON_MAX_TOKENS == %d, '
                '"CTXC_CFG_JSON_MAX_TOKENS");\n'
                '_Static_assert(sizeof(((ctxc_import_t *)0)->tokens_) == '
                '%du * CTXC_JSON_TOKEN_WORDS * sizeof(uint32_t), '
                '"ctxc_import_t");\n'
                'int probe(void);\nint probe(void) { return 0; }\n'
                % (want, want))
    cmd = compile_args(args, src, obj)
    r = subprocess.run(cmd, cwd=directory, capture_output=True, text=True)
    if r.returncode == 0:
        ok("%s: CTXC_CFG_JSON_MAX_TOKENS = %d, ctxc_import_t sized by it"
           % (what, want))
    else:
        sys.stdout.write(r.stdout + r.stderr)
        fail("%s: the probe expecting %d tokens did not compile" % (what, want))


def main():
    if len(sys.argv) != 6:
        print(__doc__)
        return 2
    cmake, source, build, lib, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # 1. this build: the board's ctxc_config.h
    with open(os.path.join(source, "boards", "host", "ctxc_config.h")) as f:
        m = re.search(r"#define CTXC_CFG_JSON_MAX_TOKENS \(?(\d+)u?\)?",
                      f.read())
    board = int(m.group(1))
    d, args = command_for(build, lib_source(lib, "jsonl.c"))
    if args is None:
        fail("no compile command of src/jsonl.c in %s" % lib)
    else:
        probe("board default, library build", d, args, board, work)

    # 2. a build with the integrator's header
    cfg = os.path.join(work, "my_ctxc_config.h")
    with open(cfg, "w") as f:
        f.write("/* the integrator's configuration */\n"
                "#define CTXC_CFG_JSON_MAX_TOKENS 64\n")
    sub = os.path.join(work, "build")
    r = subprocess.run([cmake, "-S", source, "-B", sub, "-DCTXC_TARGET=host",
                        "-DCTXC_BUILD_TESTS=OFF", "-DCTXC_CONFIG_FILE=" + cfg],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        fail("configure with -DCTXC_CONFIG_FILE")
        return 1
    if "ctxc configuration: " + cfg not in r.stdout:
        fail("configure does not name the configuration file")
    r = subprocess.run([cmake, "--build", sub, "--target", lib, "-j",
                        str(os.cpu_count() or 2)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout[-4000:] + r.stderr[-4000:])
        fail("build of %s with CTXC_CONFIG_FILE" % lib)
        return 1
    ok("%s built with -DCTXC_CONFIG_FILE=%s" % (lib, cfg))
    d, args = command_for(sub, lib_source(lib, "jsonl.c"))
    if args is None:
        fail("no compile command of src/jsonl.c in the second build")
    else:
        probe("CTXC_CONFIG_FILE, library build", d, args, 64, work)
    syms = subprocess.run(["nm", os.path.join(sub, "src", "lib%s.a" % lib)],
                          capture_output=True, text=True).stdout
    if re.search(r" R ctxc_cfg_JSON_MAX_TOKENS_64$", syms, re.M):
        ok("lib%s.a defines ctxc_cfg_JSON_MAX_TOKENS_64 (its link guard)"
           % lib)
    else:
        fail("lib%s.a does not define ctxc_cfg_JSON_MAX_TOKENS_64" % lib)
    d, args = command_for(
        sub, lambda e: e["file"].endswith("/boards/host/main.c"))
    if args is None:
        fail("no compile command of boards/host/main.c in the second build")
    else:
        probe("CTXC_CONFIG_FILE, consumer target (CLI)", d, args, 64, work)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

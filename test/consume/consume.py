#!/usr/bin/env python3
"""consume.py -- ctxc consumed from outside its tree (docs/building.md "Using ctxc in
your build"), four ways, for the host and for Cortex-M4.

  consume.py setup WORK SOURCE_DIR CLI CMAKE HOST_BUILD GEN_DIR VERSION [CROSS_BUILD]
      WORK: a fresh directory outside the source tree. Copies the consumer
      project (test/consume/app) to WORK/app, with the board's startup.c,
      board.h and linker script (the image's own startup code, as a firmware
      project has it); writes WORK/history.jsonl (the first 12 lines of
      boards/host/examples/coding-session.jsonl) and WORK/app/history_data.c
      (the same bytes as a C array); runs the ctxc CLI on that file
      (top-down-truncation, context limit 1000) and keeps its counts as the
      line every consumer must print (WORK/expected.txt); installs
      HOST_BUILD (and CROSS_BUILD) with `cmake --install` into
      WORK/prefix-host (WORK/prefix-cortex-m4); writes the dist tree into
      WORK/dist (cmake/ctxc_dist.cmake).

  consume.py run WORK WAY TARGET [EMULATOR...]
      WAY: subdir (add_subdirectory of SOURCE_DIR), package (find_package
      from the installed prefix), pkgconfig (a plain compiler command line
      with `pkg-config --cflags --libs ctxc`), dist (the dist tree compiled
      with a plain compiler command line, nothing else; its ports are
      compiled too). TARGET: host or
      cortex-m4. Builds the consumer and runs it (host: directly;
      cortex-m4: under EMULATOR, the image is linked with --gc-sections);
      passes when it prints the expected line. WAY distcmake: the dist
      tree's own CMakeLists.txt through add_subdirectory (its non-ESP-IDF
      branch). WAY treepackage: find_package(ctxc) with ctxc_DIR naming
      the build tree itself (HOST_BUILD or CROSS_BUILD, not installed);
      WAY treepkgconfig: PKG_CONFIG_PATH naming the build tree, where
      pkg-config reads its ctxc-uninstalled.pc.

  consume.py example WORK EMULATOR...
      The dist tree's examples/bare-metal (docs/firmware-quickstart.md):
      its Makefile builds it (arm-none-eabi-gcc, -ffunction-sections
      -fdata-sections, --gc-sections) and runs it under EMULATOR; passes
      when it prints its summary and exits 0. Prints the footprint of ctxc
      in it (flash and RAM, from the linker map).

  consume.py install-config-file WORK CMAKE TREE
      TREE: a build configured with -DCTXC_CONFIG_FILE=<header> (that of
      ctest config_file_reaches_library). Installs it into
      WORK/prefix-config-file: include/ctxc/ctxc_config.h must be the
      header, and the consumer must link against it through pkg-config.
      Exit 77 (skipped) when TREE does not exist.

  consume.py mismatch WORK WAY
      WAY: pkgconfig (the installed host library; the application compiled
      with -DCTXC_CFG_ERROR_MESSAGE_LEN=96) or dist (the library of `run
      WORK dist host`; the application compiled with CTXC_CONFIG_FILE
      naming a header that sets CTXC_CFG_JSON_MAX_TOKENS 64): the link must
      fail with the guard's undefined reference naming option and value.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

HOST_CC = ["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]
M4_CC = ["arm-none-eabi-gcc", "-std=c11", "-mcpu=cortex-m4", "-mthumb", "-Os",
         "-ffunction-sections", "-fdata-sections", "-Wall", "-Wextra",
         "-Werror"]
M4_LINK = ["-nostartfiles", "-Tmps2-an386.ld",
           "-Wl,--defsym=__flash_size=4194304",
           "-Wl,--defsym=__ram_size=4194304",
           "-Wl,--defsym=__stack_size=32768", "-Wl,--gc-sections"]
M4_LIBS = ["-Wl,--start-group", "-lc", "-lrdimon", "-lgcc", "-Wl,--end-group"]
HISTORY_LINES = 12
CONTEXT_LIMIT = 1000


def sh(cmd, cwd=None, env=None, check=True):
    """runs cmd, prints it (shortened) and its output on failure"""
    shown = " ".join(shlex.quote(c) for c in cmd)
    print("$ " + (shown if len(shown) < 400 else shown[:400] + " ..."))
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        raise SystemExit("FAIL: exit status %d" % r.returncode)
    return r


def read(path):
    with open(path) as f:
        return f.read()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def setup(work, src, cli, cmake, host_build, gen, version, cross_build):
    shutil.rmtree(work, ignore_errors=True)
    app = os.path.join(work, "app")
    shutil.copytree(os.path.join(src, "test", "consume", "app"), app)
    board = os.path.join(src, "boards", "mps2-an386")
    for f in ("startup.c", "board.h", "mps2-an386.ld"):
        shutil.copy(os.path.join(board, f), app)

    example = os.path.join(src, "boards", "host", "examples",
                           "coding-session.jsonl")
    with open(example, "rb") as f:
        lines = f.read().split(b"\n")[:HISTORY_LINES]
    data = b"\n".join(lines) + b"\n"
    with open(os.path.join(work, "history.jsonl"), "wb") as f:
        f.write(data)
    body = ",".join(("\n    " if i % 16 == 0 else "") + "0x%02x" % b
                    for i, b in enumerate(data))
    write(os.path.join(app, "history_data.c"),
          "/* Written by test/consume/consume.py: the first %d lines of "
          "coding-session.jsonl. */\n#include <stddef.h>\n\n"
          "extern const unsigned char consume_history[];\n"
          "extern const size_t consume_history_len;\n"
          "const unsigned char consume_history[] = {%s};\n"
          "const size_t consume_history_len = sizeof consume_history;\n"
          % (HISTORY_LINES, body))

    # what the consumer must print: the CLI's counts for the same file
    r = sh([cli, "compress", os.path.join(work, "history.jsonl"),
            "--strategy", "top-down-truncation", "--context-limit",
            str(CONTEXT_LIMIT), "-o", os.path.join(work, "cli.jsonl")])
    nums = {}
    for row in ("entries", "tokens"):
        m = re.search(r"^%s +([0-9]+) .* ([0-9]+)$" % row, r.stdout + r.stderr, re.M)
        if not m:
            sys.stdout.write(r.stdout)
            raise SystemExit("FAIL: no '%s' row in the CLI's table" % row)
        nums[row] = (m.group(1), m.group(2))
    expected = ("consume: imported %s entries, %s tokens; top-down-truncation,"
                " context limit %d: %s entries, %s tokens"
                % (nums["entries"][0], nums["tokens"][0], CONTEXT_LIMIT,
                   nums["entries"][1], nums["tokens"][1]))
    write(os.path.join(work, "expected.txt"), expected + "\n")
    print("expected (from the CLI): " + expected)

    trees = [("host", host_build)]
    if cross_build:
        trees.append(("cortex-m4", cross_build))
    for target, tree in trees:
        write(os.path.join(work, "tree-%s.txt" % target), tree + "\n")
        prefix = os.path.join(work, "prefix-" + target)
        sh([cmake, "--install", tree, "--prefix", prefix])
        files = sorted(os.path.relpath(os.path.join(d, f), prefix)
                       for d, _, fs in os.walk(prefix) for f in fs)
        print("installed %s (%d files): %s" % (target, len(files),
                                               " ".join(files)))
    sh([cmake, "-DCTXC_SOURCE_DIR=" + src, "-DCTXC_GEN_DIR=" + gen,
        "-DCTXC_VERSION=" + version, "-DCTXC_NAME=ctxc",
        "-DCTXC_OUT=" + os.path.join(work, "dist"), "-P",
        os.path.join(src, "cmake", "ctxc_dist.cmake")])
    write(os.path.join(work, "source_dir.txt"), src + "\n")
    write(os.path.join(work, "cmake.txt"), cmake + "\n")
    print("ok: consumer project in %s" % app)
    return 0


def dist_dir(work):
    d = os.path.join(work, "dist")
    names = [n for n in os.listdir(d) if n.startswith("ctxc-")]
    if len(names) != 1:
        raise SystemExit("FAIL: expected one ctxc-<version> in %s" % d)
    return os.path.join(d, names[0])


def build_dist_lib(work, target, out):
    """the dist tree compiled with a plain compiler command line"""
    tree = dist_dir(work)
    os.makedirs(out, exist_ok=True)
    cc = HOST_CC if target == "host" else M4_CC
    ar = "ar" if target == "host" else "arm-none-eabi-ar"
    sources = sorted(os.path.join(tree, "src", f)
                     for f in os.listdir(os.path.join(tree, "src"))
                     if f.endswith(".c"))
    sh(cc + ["-I" + os.path.join(tree, "include"),
             "-I" + os.path.join(tree, "config"), "-c"] + sources, cwd=out)
    objs = sorted(f for f in os.listdir(out) if f.endswith(".o"))
    lib = os.path.join(out, "libctxc.a")
    if os.path.exists(lib):
        os.remove(lib)
    sh([ar, "rcs", lib] + objs, cwd=out)
    print("dist library: %d objects from %d sources" % (len(objs),
                                                         len(sources)))
    # the ports of the tree compile too (romfs, template), same flags
    pdir = os.path.join(out, "ports")
    os.makedirs(pdir, exist_ok=True)
    for port in sorted(os.listdir(os.path.join(tree, "port"))):
        pd = os.path.join(tree, "port", port)
        psrc = sorted(os.path.join(pd, f) for f in os.listdir(pd)
                      if f.endswith(".c"))
        sh(cc + ["-I" + os.path.join(tree, "include"),
                 "-I" + os.path.join(tree, "config"), "-I" + pd, "-c"] + psrc,
           cwd=pdir)
    print("dist ports compile: %s" % " ".join(
        sorted(os.listdir(os.path.join(tree, "port")))))
    return tree, lib


def build_tree(work, target):
    """the build tree setup was given for TARGET (not installed)"""
    path = os.path.join(work, "tree-%s.txt" % target)
    if not os.path.exists(path):
        raise SystemExit("FAIL: no build tree of %s given to setup" % target)
    return read(path).strip()


def pkg_config(work, target, what, tree=False):
    """pkg-config of the installed prefix, or with tree of the build tree
    (its ctxc-uninstalled.pc, found through PKG_CONFIG_PATH)"""
    env = dict(os.environ)
    env["PKG_CONFIG_LIBDIR"] = os.path.join(work, "prefix-" + target, "lib",
                                            "pkgconfig")
    env.pop("PKG_CONFIG_PATH", None)
    env.pop("PKG_CONFIG_DISABLE_UNINSTALLED", None)
    if tree:
        env["PKG_CONFIG_LIBDIR"] = os.path.join(work, "no-such-dir")
        env["PKG_CONFIG_PATH"] = build_tree(work, target)
        r = sh(["pkg-config", "--uninstalled", "ctxc"], env=env, check=False)
        if r.returncode != 0:
            raise SystemExit("FAIL: pkg-config did not take the build "
                             "tree's ctxc-uninstalled.pc")
    r = sh(["pkg-config", what, "ctxc"], env=env)
    return shlex.split(r.stdout)


def app_sources(work, target):
    app = os.path.join(work, "app")
    srcs = [os.path.join(app, "app.c"), os.path.join(app, "history_data.c")]
    if target != "host":
        srcs.append(os.path.join(app, "startup.c"))
    return app, srcs


def link_app(work, target, cflags, libs, exe, extra=()):
    """compiles and links the consumer with a plain command line"""
    app, srcs = app_sources(work, target)
    cc = HOST_CC if target == "host" else M4_CC + ["-I" + app]
    link = [] if target == "host" else M4_LINK + ["-L" + app]
    tail = [] if target == "host" else M4_LIBS
    return sh(cc + list(extra) + cflags + srcs + link + libs + tail +
              ["-o", exe], cwd=app, check=False)


def run_image(target, exe, emulator):
    if target == "host":
        cmd = [exe]
    else:
        if not emulator:
            raise SystemExit("FAIL: no emulator for %s" % target)
        cmd = list(emulator) + [exe]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


def config_expected(src, way, target):
    """the start of the app's config line the subdir builds must print"""
    if way != "subdir":
        return None
    if target == "host":  # app/my_ctxc_config.h
        return ("CTXC_CFG_ERROR_MESSAGE_LEN 120, "
                "CTXC_CFG_HISTORY_ARENA_BYTES 131072")
    board = read(os.path.join(src, "boards", "mps2-an386", "ctxc_config.h"))
    m = re.search(r"^#define CTXC_CFG_ERROR_MESSAGE_LEN \(?([0-9]+)u?\)?\s*$",
                  board, re.M)
    return "CTXC_CFG_ERROR_MESSAGE_LEN %s," % (m.group(1) if m else "160")


def run(work, way, target, emulator):
    expected = read(os.path.join(work, "expected.txt")).strip()
    src = read(os.path.join(work, "source_dir.txt")).strip()
    cmake = read(os.path.join(work, "cmake.txt")).strip()
    bdir = os.path.join(work, "build-%s-%s" % (way, target))
    shutil.rmtree(bdir, ignore_errors=True)
    os.makedirs(bdir)
    app = os.path.join(work, "app")
    exe = os.path.join(bdir, "consumer" + ("" if target == "host" else ".elf"))

    if way in ("subdir", "package", "distcmake", "treepackage"):
        mode = "package" if way in ("package", "treepackage") else "subdir"
        args = [cmake, "-S", app, "-B", bdir, "-DCONSUME_MODE=" + mode]
        if target == "host":
            args.append("-DCMAKE_BUILD_TYPE=Release")
        else:
            args += ["-DCMAKE_BUILD_TYPE=MinSizeRel",
                     "-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(
                         src, "test", "consume", "arm-cortex-m4.cmake")]
        if way == "subdir":
            args.append("-DCTXC_SOURCE=" + src)
            # the configuration through ctxc's cache variables: the host
            # build gets the app's own header, the cross build the
            # mps2-an386 board's (a folder relative to ctxc's tree)
            if target == "host":
                args.append("-DCTXC_CONFIG_FILE=" +
                            os.path.join(app, "my_ctxc_config.h"))
            else:
                args.append("-DCTXC_BOARD=boards/mps2-an386")
        elif way == "distcmake":
            args.append("-DCTXC_SOURCE=" + dist_dir(work))
        elif way == "treepackage":
            args.append("-Dctxc_DIR=" + build_tree(work, target))
        else:
            args.append("-DCMAKE_PREFIX_PATH=" +
                        os.path.join(work, "prefix-" + target))
        r = sh(args)
        for ln in r.stdout.splitlines():
            if "ctxc" in ln:
                print("  " + ln.strip())
        sh([cmake, "--build", bdir, "-j", "2"])
    elif way in ("pkgconfig", "treepkgconfig"):
        tree = way == "treepkgconfig"
        r = link_app(work, target, pkg_config(work, target, "--cflags", tree),
                     pkg_config(work, target, "--libs", tree), exe)
        if r.returncode != 0:
            sys.stdout.write(r.stdout + r.stderr)
            raise SystemExit("FAIL: the pkg-config consumer did not build")
    elif way == "dist":
        tree, lib = build_dist_lib(work, target,
                                   os.path.join(bdir, "lib"))
        r = link_app(work, target, ["-I" + os.path.join(tree, "include"),
                                    "-I" + os.path.join(tree, "config")],
                     [lib], exe)
        if r.returncode != 0:
            sys.stdout.write(r.stdout + r.stderr)
            raise SystemExit("FAIL: the dist consumer did not build")
    else:
        raise SystemExit("FAIL: unknown way '%s'" % way)

    if not os.path.exists(exe):
        raise SystemExit("FAIL: no %s" % exe)
    status, out = run_image(target, exe, emulator)
    sys.stdout.write(out)
    if status != 0 or expected not in out.splitlines():
        print("FAIL: %s %s: exit status %d, expected the line\n  %s"
              % (way, target, status, expected))
        return 1
    want = config_expected(src, way, target)
    if want:
        m = re.search(r"^consume: config: (.*)$", out, re.M)
        if not m or not m.group(1).startswith(want):
            print("FAIL: %s %s: the configuration is not the one given: "
                  "expected '%s'" % (way, target, want))
            return 1
        print("ok: %s %s: the configuration given through ctxc's cache "
              "variables reached the app (and the library: it linked): %s"
              % (way, target, want))
    print("ok: %s %s: built outside the tree, ran and printed the CLI's "
          "counts" % (way, target))
    return 0


def mismatch(work, way):
    exe = os.path.join(work, "mismatch-" + way)
    if way == "pkgconfig":
        what = "CTXC_CFG_ERROR_MESSAGE_LEN 96 (-D) in the application"
        want = "undefined reference to `ctxc_cfg_ERROR_MESSAGE_LEN_96'"
        cflags = pkg_config(work, "host", "--cflags")
        libs = pkg_config(work, "host", "--libs")
        extra = ["-DCTXC_CFG_ERROR_MESSAGE_LEN=96"]
    elif way == "dist":
        tree = dist_dir(work)
        lib = os.path.join(work, "build-dist-host", "lib", "libctxc.a")
        if not os.path.exists(lib):
            raise SystemExit("FAIL: no %s (run `consume.py run WORK dist "
                             "host` first)" % lib)
        other = os.path.join(work, "other_config.h")
        write(other, "#define CTXC_CFG_JSON_MAX_TOKENS 64\n")
        what = "CTXC_CONFIG_FILE=%s (64 JSON tokens) in the application" % other
        want = "undefined reference to `ctxc_cfg_JSON_MAX_TOKENS_64'"
        cflags = ["-I" + os.path.join(tree, "include"),
                  "-I" + os.path.join(tree, "config")]
        libs = [lib]
        extra = ['-DCTXC_CONFIG_FILE="%s"' % other]
    else:
        raise SystemExit("FAIL: unknown way '%s'" % way)
    r = link_app(work, "host", cflags, libs, exe, extra)
    out = r.stdout + r.stderr
    if r.returncode == 0:
        print("FAIL: %s: %s linked; the configuration guard must stop it"
              % (way, what))
        return 1
    lines = [ln for ln in out.splitlines() if want in ln]
    if not lines:
        sys.stdout.write(out)
        print("FAIL: %s: the build failed without \"%s\"" % (way, want))
        return 1
    print("ok: %s: %s does not link: %s" % (way, what, lines[0].strip()))
    return 0


def install_config_file(work, cmake, tree):
    """`cmake --install` of a tree configured with CTXC_CONFIG_FILE: the
    header is installed as include/ctxc/ctxc_config.h, byte for byte, and
    the consumer links against the installed library through pkg-config
    (the guard agrees)"""
    cache = os.path.join(tree, "CMakeCache.txt")
    if not os.path.exists(cache):
        print("SKIP: no %s (ctest config_file_reaches_library builds it)"
              % tree)
        return 77
    m = re.search(r"^CTXC_CONFIG_FILE:[A-Z]+=(.+)$", read(cache), re.M)
    if not m:
        raise SystemExit("FAIL: %s has no CTXC_CONFIG_FILE" % cache)
    given = m.group(1)
    prefix = os.path.join(work, "prefix-config-file")
    shutil.rmtree(prefix, ignore_errors=True)
    sh([cmake, "--install", tree, "--prefix", prefix])
    inst = os.path.join(prefix, "include", "ctxc", "ctxc_config.h")
    if not os.path.exists(inst) or read(inst) != read(given):
        print("FAIL: %s is not a copy of %s" % (inst, given))
        return 1
    print("ok: %s installed as include/ctxc/ctxc_config.h" % given)
    env = dict(os.environ)
    env["PKG_CONFIG_LIBDIR"] = os.path.join(prefix, "lib", "pkgconfig")
    env.pop("PKG_CONFIG_PATH", None)
    flags = shlex.split(sh(["pkg-config", "--cflags", "--libs", "ctxc"],
                           env=env).stdout)
    cflags = [f for f in flags if not f.startswith(("-L", "-l"))]
    libs = [f for f in flags if f.startswith(("-L", "-l"))]
    exe = os.path.join(work, "config-file-consumer")
    r = link_app(work, "host", cflags, libs, exe)
    if r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        print("FAIL: the consumer does not link against the installed "
              "library configured by %s" % given)
        return 1
    print("ok: the consumer compiled with the installed headers links "
          "(the same configuration as the library)")
    return 0


def map_footprint(path):
    """flash (text + rodata + data) and RAM (data + bss) of the image's
    objects after --gc-sections, from the linker map: {who: (flash, ram)}
    for ctxc's objects (build/ctxc/), the example's (build/app/) and libc"""
    text = read(path)
    text = text[text.index("Linker script and memory map"):]
    got = {}
    pat = re.compile(r"^ (\.[\w.]+|COMMON)\s*(?:\n\s+)?\s*0x([0-9a-f]+)\s+"
                     r"0x([0-9a-f]+)\s+(\S+)$", re.M)
    for m in pat.finditer(text):
        sec, size, obj = m.group(1), int(m.group(3), 16), m.group(4)
        if size == 0:
            continue
        who = ("ctxc" if "/ctxc/" in obj else
               "app" if "/app/" in obj else "libc")
        flash, ram = got.get(who, (0, 0))
        if sec.startswith((".text", ".rodata")):
            flash += size
        elif sec.startswith(".data"):
            flash += size
            ram += size
        elif sec.startswith((".bss", "COMMON")):
            ram += size
        got[who] = (flash, ram)
    return got


def example(work, emulator):
    """the dist tree's bare-metal example, built with its own Makefile (a
    copy of the tree's examples/bare-metal next to the tree, as someone
    would start from it) and run under the emulator"""
    tree = dist_dir(work)
    src = os.path.join(tree, "examples", "bare-metal")
    build = os.path.join(work, "build-example")
    shutil.rmtree(build, ignore_errors=True)
    if not emulator:
        raise SystemExit("FAIL: no emulator for the example")
    qemu = " ".join(shlex.quote(a) for a in emulator)
    sh(["make", "-C", src, "-j", "2", "BUILD=" + build, "QEMU=" + qemu])
    mk = read(os.path.join(src, "Makefile"))
    for flag in ("-ffunction-sections", "-fdata-sections", "--gc-sections"):
        if flag not in mk:
            raise SystemExit("FAIL: the example's Makefile lacks " + flag)
    r = sh(["make", "-C", src, "BUILD=" + build, "QEMU=" + qemu, "run"],
           check=False)
    out = r.stdout + r.stderr
    sys.stdout.write(out)
    want = re.search(r"^example: 40 turns, ([1-9][0-9]*) compressions, "
                     r"([0-9]+) entries, ([0-9]+) tokens \(limit 600\)$",
                     out, re.M)
    if r.returncode != 0 or not want or int(want.group(3)) > 600:
        raise SystemExit("FAIL: the example did not run as documented "
                         "(exit %d)" % r.returncode)
    store = re.search(r"^example: settings store ([0-9]+) bytes", out, re.M)
    fp = map_footprint(os.path.join(build, "example.map"))
    flash, ram = fp.get("ctxc", (0, 0))
    print("footprint (Cortex-M4 -Os, LLM-free, CTXC_CFG_COMMANDS=0, "
          "CTXC_CFG_SETTINGS_FILE_BYTES=0, --gc-sections): ctxc flash %d "
          "bytes, ctxc static RAM %d bytes; the example's own storage "
          "(history, work area, settings store %s, session) RAM %d bytes"
          % (flash, ram, store.group(1) if store else "?",
             fp.get("app", (0, 0))[1]))
    print("example: ok")
    return 0


def main(argv):
    if len(argv) >= 9 and argv[1] == "setup":
        return setup(*argv[2:9], argv[9] if len(argv) > 9 else "")
    if len(argv) >= 5 and argv[1] == "run":
        return run(argv[2], argv[3], argv[4], argv[5:])
    if len(argv) >= 3 and argv[1] == "example":
        return example(argv[2], argv[3:])
    if len(argv) == 4 and argv[1] == "mismatch":
        return mismatch(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "install-config-file":
        return install_config_file(argv[2], argv[3], argv[4])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""check_config_guard.py -- the link-time configuration guard
(include/ctxc/config_guard.h): an application compiled with other values of
the struct-sizing options than the library fails to link, naming the option
and the application's value; with the same values it links and runs.

  check_config_guard.py NM BUILD_DIR LIB LIBRARY_FILE WORK_DIR [cross]

The application is compiled with the library's own compile command (that of
src/status.c in target LIB of BUILD_DIR), then changed as each case says,
and linked with LIBRARY_FILE and --gc-sections (cross: also
--specs=nosys.specs; linked, not run). The library's values come from its
guard symbols (NM).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_config_file import command_for, compile_args, lib_source  # noqa: E402

APP = r'''#include "ctxc/ctxc.h"
#include <string.h>
#if !defined(__arm__)
#include <stdio.h>
#endif

int main(void) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
#if !defined(__arm__)
    printf("app: sizeof(ctxc_error_t) = %u, CTXC_CFG_ERROR_MESSAGE_LEN = %u, "
           "%s\n",
           (unsigned)sizeof err, (unsigned)CTXC_CFG_ERROR_MESSAGE_LEN,
           ctxc_strerror(CTXC_OK));
#endif
    return ctxc_strerror(CTXC_OK)[0] != '\0' && err.status == CTXC_OK ? 0 : 1;
}
'''

fails = 0
cross = False


def build(name, directory, args, lib, work, drop_include=None, extra=()):
    """compile and link the app; (compiled, linked, output)"""
    src = os.path.join(work, "app.c")
    slug = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")
    obj = os.path.join(work, slug + ".o")
    exe = os.path.join(work, slug)
    r = subprocess.run(compile_args(args, src, obj, drop_include, extra),
                       cwd=directory, capture_output=True, text=True)
    if r.returncode != 0:
        return False, False, r.stdout + r.stderr
    target = [a for a in args if a.startswith("-m")]
    link = [args[0]] + target + [obj, lib, "-o", exe, "-Wl,--gc-sections"]
    if cross:
        link.append("--specs=nosys.specs")
    r = subprocess.run(link, cwd=directory, capture_output=True, text=True)
    if r.returncode != 0:
        return True, False, r.stdout + r.stderr
    if cross:
        return True, True, "(cross: not run)"
    r = subprocess.run([exe], capture_output=True, text=True)
    return True, r.returncode == 0, r.stdout + r.stderr


def must_link(name, directory, args, lib, work, extra=()):
    global fails
    compiled, ran, out = build(name, directory, args, lib, work, extra=extra)
    if compiled and ran:
        print("ok: %s links%s: %s"
              % (name, "" if cross else " and runs", out.strip()))
    else:
        sys.stdout.write(out)
        print("FAIL: %s must link and run" % name)
        fails += 1


def must_not_link(name, symbol, directory, args, lib, work,
                  drop_include=None, extra=()):
    global fails
    compiled, linked, out = build(name, directory, args, lib, work,
                                  drop_include, extra)
    want = "undefined reference to `%s" % symbol
    if not compiled:
        sys.stdout.write(out)
        print("FAIL: %s did not compile" % name)
        fails += 1
    elif linked:
        print("FAIL: %s linked, the guard must stop it" % name)
        fails += 1
    elif want not in out:
        sys.stdout.write(out)
        print("FAIL: %s failed to link without \"%s\"" % (name, want))
        fails += 1
    else:
        line = [ln for ln in out.splitlines() if want in ln][0]
        print("ok: %s does not link: %s" % (name, line.strip()))


def main():
    global fails, cross
    if len(sys.argv) not in (6, 7):
        print(__doc__)
        return 2
    nm, build_dir, lib_name, lib, work = sys.argv[1:6]
    cross = len(sys.argv) == 7 and sys.argv[6] == "cross"
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "app.c"), "w") as f:
        f.write(APP)
    d, args = command_for(build_dir, lib_source(lib_name, "status.c"))
    if args is None:
        print("FAIL: no compile command of src/status.c in " + lib_name)
        return 1
    board = [a[2:] for a in args if a.startswith("-I") and "/boards/" in a]
    syms = subprocess.run([nm, lib], capture_output=True, text=True).stdout
    m = re.search(r" [RrDdTtBb] ctxc_cfg_ERROR_MESSAGE_LEN_(\d+)$", syms,
                  re.M)
    if not m:
        print("FAIL: %s defines no ctxc_cfg_ERROR_MESSAGE_LEN_<value>" % lib)
        return 1
    have = int(m.group(1))
    other = 64 if have != 64 else 96
    print("library: ctxc_cfg_ERROR_MESSAGE_LEN_%d" % have)

    def message_len(value):
        """the app's configuration: the board's, message length changed"""
        path = os.path.join(work, "app_config_%s.h" % re.sub(r"\W", "_", value))
        with open(path, "w") as f:
            f.write('#include "ctxc_config.h" /* the board\'s */\n'
                    "#undef CTXC_CFG_ERROR_MESSAGE_LEN\n"
                    "#define CTXC_CFG_ERROR_MESSAGE_LEN %s\n" % value)
        return ['-DCTXC_CONFIG_FILE="%s"' % path]

    must_link("same configuration", d, args, lib, work)
    must_link("same value written (%du)" % have, d, args, lib, work,
              extra=message_len("(%du)" % have))
    must_not_link("CTXC_CFG_ERROR_MESSAGE_LEN %d in the app" % other,
                  "ctxc_cfg_ERROR_MESSAGE_LEN_%d'" % other, d, args, lib,
                  work, extra=message_len(str(other)))
    must_not_link("CTXC_CFG_ERROR_MESSAGE_LEN 0 in the app",
                  "ctxc_cfg_ERROR_MESSAGE_LEN_0'", d, args, lib, work,
                  extra=message_len("0"))
    if board:
        # issue 13: the board folder left off the application's include
        # path (its ctxc_config.h changes struct sizes)
        must_not_link("the board folder off the app's include path",
                      "ctxc_cfg_", d, args, lib, work,
                      drop_include=board[0])
    else:
        print("FAIL: no board folder in the library's include directories")
        fails += 1

    # a value the guard cannot spell stops the build with #error
    compiled, _, out = build("out of range", d, args, lib, work,
                             extra=["-DCTXC_CFG_PROVIDER_KEY_BYTES=100000000"])
    if compiled or "outside 0 .. 99999999" not in out:
        sys.stdout.write(out)
        print("FAIL: a value above 99999999 must stop the build with #error")
        fails += 1
    else:
        print("ok: a value above 99999999 stops the build: " + [
            ln for ln in out.splitlines() if "#error" in ln or "error:" in ln
        ][0].strip())
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""check_manifests.py -- the SDK manifests of the dist tree (Zephyr module,
ESP-IDF component, PlatformIO library) hold their formats' required keys
and point at files that exist; the SDKs themselves are not on this machine.

  check_manifests.py CMAKE DIST_TREE VERSION

- zephyr/module.yml: `name`, `build.cmake` (a folder with a
  CMakeLists.txt), `build.kconfig` (a file that defines `config CTXC`);
  zephyr/CMakeLists.txt, run against stand-ins of the Zephyr commands
  (sdk_stubs.cmake) with CONFIG_CTXC=y: it compiles exactly the tree's
  src/*.c, puts include/ and config/ on the include path, and passes
  CONFIG_CTXC_CONFIG_FILE on as CTXC_CONFIG_FILE.
- idf_component.yml: `version` (= VERSION, project.yml's), `description`,
  `license`, `dependencies.idf.version`; CMakeLists.txt, run against a
  stand-in of idf_component_register: the same sources, include dirs and
  definition.
- library.json: JSON; `name`, `version` (= VERSION), `description`,
  `keywords`, `license`, `frameworks`, `platforms`; `build.srcDir` holds
  the tree's sources, `build.includeDir` holds `headers`.
- No @...@ placeholder is left in any of them.
"""
import json
import os
import re
import subprocess
import sys

fails = 0


def ok(msg):
    print("ok: " + msg)


def fail(msg):
    global fails
    print("FAIL: " + msg)
    fails += 1


def mini_yaml(path):
    """the YAML subset these manifests use: nested maps by indentation,
    scalars (plain or quoted), # comments -> {dotted.key: value}"""
    out = {}
    stack = []  # (indent, key)
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = re.sub(r"(^|\s)#.*$", "", raw.rstrip("\n")).rstrip()
            if not line.strip():
                continue
            m = re.match(r"^( *)([A-Za-z0-9_./-]+):(?: +(.*))?$", line)
            if not m:
                raise ValueError("%s:%d: not 'key: value': %r" % (path, n, raw))
            indent = len(m.group(1))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            key = ".".join([k for _, k in stack] + [m.group(2)])
            value = m.group(3)
            if value is None:
                stack.append((indent, m.group(2)))
                out[key] = {}
            else:
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                    value = value[1:-1]
                out[key] = value
    return out


def need(d, keys, where):
    for k in keys:
        if k not in d or d[k] in ("", {}, []):
            fail("%s: no '%s'" % (where, k))
        else:
            ok("%s: %s = %s" % (where, k, json.dumps(d[k])
                                  if not isinstance(d[k], dict) else "{...}"))


def stub_run(cmake, tree, sdk, sources):
    """the SDK's CMake file against stand-ins: sources, includes, defines"""
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([cmake, "-DTREE=" + tree, "-DSDK=" + sdk,
                        "-DCONFIG_FILE=/abs/my_ctxc_config.h", "-P",
                        os.path.join(here, "sdk_stubs.cmake")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        fail("%s: the build file did not run" % sdk)
        return
    rec = {"source": [], "include": [], "define": []}
    for ln in (r.stdout + r.stderr).splitlines():
        m = re.match(r"^-- (source|include|define) (.*)$", ln)
        if m:
            rec[m.group(1)].append(m.group(2))
    got = sorted(os.path.realpath(s) for s in rec["source"])
    if got != sources:
        fail("%s: compiles %d files, the tree has %d sources (missing: %s, "
             "extra: %s)" % (sdk, len(got), len(sources),
                             sorted(set(sources) - set(got)),
                             sorted(set(got) - set(sources))))
    else:
        ok("%s: compiles every src/*.c of the tree (%d files)"
           % (sdk, len(got)))
    incs = [os.path.realpath(i) for i in rec["include"]]
    for d in ("include", "config"):
        want = os.path.realpath(os.path.join(tree, d))
        if want in incs and os.path.isdir(want):
            ok("%s: public include directory %s/" % (sdk, d))
        else:
            fail("%s: %s/ is not a public include directory (got %s)"
                 % (sdk, d, incs))
    if 'CTXC_CONFIG_FILE="/abs/my_ctxc_config.h"' in rec["define"]:
        ok("%s: the configuration header reaches everything as "
           "CTXC_CONFIG_FILE" % sdk)
    else:
        fail("%s: CTXC_CONFIG_FILE not passed on (got %s)"
             % (sdk, rec["define"]))


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    cmake, tree, version = sys.argv[1:4]
    src = os.path.join(tree, "src")
    sources = sorted(os.path.realpath(os.path.join(src, f))
                     for f in os.listdir(src) if f.endswith(".c"))

    for rel in ("zephyr/module.yml", "zephyr/Kconfig",
                "zephyr/CMakeLists.txt", "idf_component.yml", "library.json",
                "CMakeLists.txt"):
        path = os.path.join(tree, rel)
        if not os.path.isfile(path):
            fail("no %s in the dist tree" % rel)
            continue
        left = re.findall(r"@[A-Z_]+@", open(path).read())
        if left:
            fail("%s: placeholders left: %s" % (rel, " ".join(left)))
    if fails:
        return 1

    # Zephyr
    mod = mini_yaml(os.path.join(tree, "zephyr", "module.yml"))
    need(mod, ["name", "build.cmake", "build.kconfig"], "zephyr/module.yml")
    cm = os.path.join(tree, mod.get("build.cmake", "?"), "CMakeLists.txt")
    if os.path.isfile(cm):
        ok("zephyr/module.yml: build.cmake has a CMakeLists.txt")
    else:
        fail("zephyr/module.yml: no %s" % cm)
    kc = os.path.join(tree, mod.get("build.kconfig", "?"))
    if os.path.isfile(kc) and re.search(r"^config CTXC$", open(kc).read(),
                                        re.M):
        ok("zephyr/module.yml: build.kconfig defines CTXC")
    else:
        fail("zephyr/module.yml: %s does not define 'config CTXC'" % kc)
    stub_run(cmake, tree, "zephyr", sources)

    # ESP-IDF
    idf = mini_yaml(os.path.join(tree, "idf_component.yml"))
    need(idf, ["version", "description", "license",
               "dependencies.idf.version"], "idf_component.yml")
    if idf.get("version") != version:
        fail("idf_component.yml: version %r, project.yml says %r"
             % (idf.get("version"), version))
    stub_run(cmake, tree, "idf", sources)

    # PlatformIO
    try:
        lib = json.load(open(os.path.join(tree, "library.json")))
    except ValueError as e:
        fail("library.json: not JSON: %s" % e)
        return 1
    need(lib, ["name", "version", "description", "keywords", "license",
               "frameworks", "platforms", "headers", "build"], "library.json")
    if lib.get("version") != version:
        fail("library.json: version %r, project.yml says %r"
             % (lib.get("version"), version))
    build = lib.get("build", {})
    sdir = os.path.join(tree, build.get("srcDir", "src"))
    got = sorted(os.path.realpath(os.path.join(sdir, f))
                 for f in os.listdir(sdir) if f.endswith(".c")) \
        if os.path.isdir(sdir) else []
    if got == sources:
        ok("library.json: build.srcDir holds every source (%d)" % len(got))
    else:
        fail("library.json: build.srcDir %r does not hold the sources"
             % build.get("srcDir"))
    idir = os.path.join(tree, build.get("includeDir", "include"))
    hdr = os.path.join(idir, lib.get("headers", "?"))
    if os.path.isfile(hdr):
        ok("library.json: headers %s is in build.includeDir"
           % lib.get("headers"))
    else:
        fail("library.json: no %s" % hdr)
    print("%s: %d failed" % (os.path.basename(tree), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

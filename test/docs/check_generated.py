#!/usr/bin/env python3
"""Checks that generated blocks of a document are what the build writes now.

A generated block is the text between <!-- NAME:begin --> and
<!-- NAME:end --> that a generator of the build writes (`make
readme-tables`, `profile-flash-table`, ...). This runs the generator on a
copy of the document and compares the named blocks of the copy with the
document's own:

    check_generated.py DOC:NAME[,NAME...]... [--tamper] -- COMMAND...

Each DOC is copied into a temporary folder; COMMAND is run with `{0}`,
`{1}`, ... in its arguments replaced by the copies' paths (in the order the
documents are given) and must write the blocks into those copies, never
into the documents themselves. Exit 0 and `check_generated: N blocks as
the build writes them` when every named block is the same; exit 1 and
`FAIL: check_generated: DOC: block NAME differs from what the build
writes` (with the first differing line of each, and how to regenerate)
otherwise. --tamper (the self-test) changes one line of the first block in
the text compared against, so a correct check must fail.

Only blocks whose content is deterministic belong here: figures read from
the built artifacts (flash and RAM from the objects and link maps), not
timings measured on a machine that may be busy.
"""
import os
import shutil
import subprocess
import sys
import tempfile


def block(text, name, path):
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise SystemExit("FAIL: check_generated: %s has no %s ... %s"
                         % (path, begin, end))
    return text[i + len(begin):j]


def first_difference(a, b):
    la, lb = a.split("\n"), b.split("\n")
    for k in range(max(len(la), len(lb))):
        x = la[k] if k < len(la) else "(end of block)"
        y = lb[k] if k < len(lb) else "(end of block)"
        if x != y:
            return k + 1, x, y
    return 0, "", ""


def main(argv):
    if "--" not in argv:
        sys.stderr.write(__doc__)
        return 2
    k = argv.index("--")
    args, cmd = argv[1:k], argv[k + 1:]
    tamper = "--tamper" in args
    specs = []
    for a in args:
        if a == "--tamper":
            continue
        doc, _, names = a.rpartition(":")
        if not doc or not names:
            sys.stderr.write(__doc__)
            return 2
        specs.append((doc, [n for n in names.split(",") if n]))
    if not specs or not cmd:
        sys.stderr.write(__doc__)
        return 2
    work = tempfile.mkdtemp(prefix="check_generated_")
    try:
        copies = []
        for i, (doc, _) in enumerate(specs):
            d = os.path.join(work, str(i))
            os.mkdir(d)
            copies.append(os.path.join(d, os.path.basename(doc)))
            shutil.copyfile(doc, copies[-1])
        run = []
        for a in cmd:
            for i, c in enumerate(copies):
                a = a.replace("{%d}" % i, c)
            run.append(a)
        r = subprocess.run(run, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            sys.stdout.write(r.stdout + r.stderr)
            print("FAIL: check_generated: the generator failed (exit %d): %s"
                  % (r.returncode, " ".join(cmd)))
            return 1
        built = []
        for c in copies:
            with open(c, encoding="utf-8") as f:
                built.append(f.read())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    failed, count = 0, 0
    for (doc, names), text in zip(specs, built):
        with open(doc, encoding="utf-8") as f:
            mine = f.read()
        for name in names:
            have, want = block(mine, name, doc), block(text, name, "the copy")
            if tamper and count == 0:
                have = have.replace("\n", "\n(tampered)\n", 1)
            count += 1
            if have != want:
                line, x, y = first_difference(have, want)
                print("FAIL: check_generated: %s: block %s differs from what "
                      "the build writes (line %d of the block)\n  document: "
                      "%s\n  build:    %s" % (doc, name, line, x, y))
                failed += 1
    if failed:
        print("check_generated: regenerate with `make readme-tables` and "
              "commit the result")
        return 1
    print("check_generated: %d blocks as the build writes them" % count)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

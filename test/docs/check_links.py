#!/usr/bin/env python3
"""The link check of the documentation: README.md and docs/*.md.

    check_links.py --root REPO [--selftest --work DIR]

Every Markdown link and image of those files whose target is not a URL
(`[text](path)`, `[text](path#anchor)`, `[text](#anchor)`, reference
definitions `[id]: path`) must resolve inside the repository as a clone has
it: the file or directory exists (relative to the linking file), it does not
leave the repository, and an anchor names a heading of the target Markdown
file as GitHub makes anchors (lower case; punctuation other than `-` and `_`
dropped; spaces to `-`; a repeated heading gets -1, -2, ...) or an explicit
`<a id="...">` / `<a name="...">`. Links inside code blocks and code spans
are not links. URLs (http:, https:, mailto:) are not checked: the
documentation is read offline and needs none.

--selftest: a README with a link to a missing file, an anchor that no
heading makes, and a path out of the repository must fail with all three
named.

Ends with "N passed, N failed" (one per file).
"""
import argparse
import os
import re
import sys

LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)')
REFDEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
EXPLICIT = re.compile(r'<a\s+(?:id|name)="([^"]+)"')


def strip_code(text):
    """Lines with fenced blocks blanked and code spans removed."""
    out, fence = [], None
    for line in text.split("\n"):
        # CommonMark: at most 3 spaces of indent; a backtick fence's info
        # string has no backtick (so "```` ```c ````" is a code span)
        m = re.match(r'^ {0,3}(`{3,}(?=[^`]*$)|~{3,})', line)
        if fence is None and m:
            fence = m.group(1)
            out.append("")
            continue
        if fence is not None:
            if re.match(r'^ {0,3}' + re.escape(fence[0]) + '{%d,}\s*$' % len(fence), line):
                fence = None
            out.append("")
            continue
        out.append(re.sub(r'(`+)(?:(?!\1).)+?\1', '', line))
    return out


def slug(heading):
    h = re.sub(r'<[^>]+>', '', heading)                   # html tags
    h = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', h)      # links: their text
    h = h.replace('`', '').lower()
    h = re.sub(r'[^\w\- ]', '', h, flags=re.UNICODE)
    return h.replace(' ', '-')


def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        found, seen = set(), {}
        for line in strip_code(text):
            m = HEADING.match(line)
            if m:
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else "%s-%d" % (s, n))
        # explicit anchors, also inside the raw text
        found.update(EXPLICIT.findall(text))
        cache[path] = found
    return cache[path]


def check_file(root, md):
    problems = []
    base = os.path.dirname(md)
    with open(md, encoding="utf-8") as f:
        lines = strip_code(f.read())
    for no, line in enumerate(lines, 1):
        targets = [m.group(1) for m in LINK.finditer(line)]
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if not t or re.match(r'^[a-z][a-z0-9+.-]*:', t, re.I):
                continue  # a URL (not checked) or empty
            path, _, anchor = t.partition("#")
            target = os.path.normpath(os.path.join(base, path)) if path else md
            rel = os.path.relpath(target, root)
            where = "%s:%d: %s" % (os.path.relpath(md, root), no, t)
            if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(path):
                problems.append("%s: leaves the repository" % where)
                continue
            if not os.path.exists(target):
                problems.append("%s: no such file or directory %s" % (where, rel))
                continue
            if anchor:
                if not target.endswith(".md") or os.path.isdir(target):
                    problems.append("%s: an anchor into a file that is not Markdown" % where)
                elif anchor not in anchors(target):
                    problems.append("%s: no heading of %s makes the anchor #%s" % (where, rel, anchor))
    return problems


def run(root):
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    passed = failed = 0
    all_problems = []
    for md in files:
        if not os.path.exists(md):
            continue
        problems = check_file(root, md)
        for p in problems:
            print("FAIL %s" % p)
        all_problems += problems
        if problems:
            failed += 1
        else:
            passed += 1
            print("ok   %s" % os.path.relpath(md, root))
    return passed, failed, all_problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--work")
    a = ap.parse_args()
    if not a.selftest:
        passed, failed, _ = run(os.path.abspath(a.root))
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed else 0
    work = os.path.abspath(a.work or "docs_links_selftest")
    os.makedirs(os.path.join(work, "docs"), exist_ok=True)
    with open(os.path.join(work, "README.md"), "w", encoding="utf-8") as f:
        f.write("# Planted\n\n## Good heading\n\n[ok](#good-heading) [ok](docs/a.md#the-a-doc)\n"
                "[missing](docs/missing.md) [bad anchor](docs/a.md#no-such-heading)\n"
                "[outside](../outside.md) `[in code](docs/missing2.md)`\n")
    with open(os.path.join(work, "docs", "a.md"), "w", encoding="utf-8") as f:
        f.write("# The A doc\n\nBack to [the README](../README.md#planted).\n")
    _, failed, problems = run(work)
    want = ("docs/missing.md", "#no-such-heading", "leaves the repository")
    missing = [w for w in want if not any(w in p for p in problems)]
    extra = [p for p in problems if not any(w in p for w in want)]
    ok = failed == 1 and not missing and not extra
    print("docs_links_selftest: %s" % ("the check fails on the planted missing file, anchor and outside path, "
                                       "and on nothing else" if ok else
                                       "not reported: %s; reported wrongly: %s" % (missing, extra)))
    print("%d passed, %d failed" % (1 if ok else 0, 0 if ok else 1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Cortex-M4 flash of the library, commit by commit (issue 10's flash rule).

    flash_walk.py [--base REV] [--head REV] [--exclude a,b,...] [--dir DIR]

Checks out every first-parent commit from BASE to HEAD (default: HEAD) in
a detached worktree (DIR/tree, default build/flash-walk/tree, removed at
the end; the build tree DIR/cm4 stays), builds the
library for cortex-m4 there (incremental: a commit recompiles what it
changed), and reads flash (text + data) of each object of src/*.c that
exists at that commit with arm-none-eabi-size. It prints, for each commit
that changes the core's flash, the change, the core's total and the
modules that moved, then the total at BASE and at HEAD. The table is also
written to DIR/flash_walk.md.

"Core" is every module of src/ except those of --exclude, by default the
modules that later issues added whole (they are not the core the rule
compares): the LLM layer (http, http_url, sse, provider, strategy_llm,
llm_render, todo), the pairing rule (pairing), the tool vocabularies
(tool_roles), storage placement (work), the configuration guard
(config_guard) and the generated prompt table (ctxc_prompts, prompt text).
Modules split out of a core module (record, sink, settings_*) stay core.

Needs git, cmake, the cross toolchain (`make cortex-m4` installs it) and
whatever the oldest commit's build needs (before issue 10: libjsmn-dev).
A commit that does not build is listed as such and skipped.
"""
import argparse
import os
import subprocess
import sys

EXCLUDE = ("http,http_url,sse,provider,strategy_llm,llm_render,todo,pairing,"
           "tool_roles,work,config_guard,ctxc_prompts")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True,
                          capture_output=True, text=True).stdout


def flash_of(obj):
    out = subprocess.run(["arm-none-eabi-size", obj], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    text, data = out[1].split()[:2]
    return int(text) + int(data)


def measure(repo, tree, build, commit):
    """{module: flash} of the library at `commit`, or None (no build)."""
    git(tree, "checkout", "-q", "--detach", commit)
    with open(os.path.join(os.path.dirname(build), "build.log"), "w") as log:
        for cmd in (["cmake", "-S", tree, "-B", build,
                     "-DCTXC_TARGET=cortex-m4"],
                    ["cmake", "--build", build, "-j", str(os.cpu_count() or 2),
                     "--target", "ctxc"]):
            if subprocess.run(cmd, stdout=log, stderr=log).returncode != 0:
                return None
    sources = {os.path.basename(p)[:-2]
               for p in git(repo, "ls-tree", "--name-only", commit,
                            "src/").split() if p.endswith(".c")}
    sources.add("ctxc_prompts")  # generated into the build tree
    objdir = os.path.join(build, "src", "CMakeFiles", "ctxc.dir")
    sizes = {}
    for root, _, files in os.walk(objdir):
        for f in files:
            if f.endswith(".c.obj") and f[:-6] in sources:
                sizes[f[:-6]] = flash_of(os.path.join(root, f))
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="f4b8370",
                    help="the commit the rule compares with (default: the "
                    "last commit before issue 10's work)")
    ap.add_argument("--head", default="HEAD")
    ap.add_argument("--exclude", default=EXCLUDE)
    ap.add_argument("--dir", default="build/flash-walk")
    a = ap.parse_args()

    repo = git(".", "rev-parse", "--show-toplevel").strip()
    work = os.path.abspath(a.dir)
    tree = os.path.join(work, "tree")
    build = os.path.join(work, "cm4")
    os.makedirs(work, exist_ok=True)
    git(repo, "worktree", "prune")
    if not os.path.isdir(tree):
        git(repo, "worktree", "add", "--detach", tree, a.base)
    exclude = set(filter(None, a.exclude.split(",")))
    commits = [git(repo, "rev-parse", a.base).strip()] + git(
        repo, "rev-list", "--reverse", "--first-parent",
        f"{a.base}..{a.head}").split()

    lines = ["| commit | core change | core | modules | subject |",
             "|---|---:|---:|---|---|"]

    def row(text):
        lines.append(text)
        print(text, flush=True)

    first = prev = None  # (commit, {module: flash}) of the first build, last
    try:
        for c in commits:
            subject = git(repo, "log", "-1", "--format=%s", c).strip()[:100]
            sizes = measure(repo, tree, build, c)
            if sizes is None:
                row(f"| {c[:7]} | no build | | | {subject} |")
                continue
            core = {m: v for m, v in sizes.items() if m not in exclude}
            total = sum(core.values())
            if prev is None:
                first = (c, core)
                row(f"| {c[:7]} | base | {total} | | {subject} |")
            elif total != sum(prev[1].values()):
                old = prev[1]
                moved = ", ".join(
                    f"{m} {core.get(m, 0) - old.get(m, 0):+d}"
                    for m in sorted(set(core) | set(old))
                    if core.get(m, 0) != old.get(m, 0))
                row(f"| {c[:7]} | {total - sum(old.values()):+d} | {total} "
                    f"| {moved} | {subject} |")
            prev = (c, core)
    finally:
        # the build tree stays (a later walk rebuilds only what changed);
        # the checkout does not stay registered in the repository
        git(repo, "worktree", "remove", "--force", tree)
    if first is None:
        sys.exit("flash_walk: no commit of the range builds")
    before, after = sum(first[1].values()), sum(prev[1].values())
    summary = (f"core flash (Cortex-M4, text + data): {before} at "
               f"{first[0][:7]}, {after} at {prev[0][:7]} "
               f"({after - before:+d}); excluded: "
               f"{', '.join(sorted(exclude))}")
    print(summary)
    with open(os.path.join(work, "flash_walk.md"), "w") as f:
        f.write("\n".join(lines) + "\n\n" + summary + "\n")


if __name__ == "__main__":
    main()

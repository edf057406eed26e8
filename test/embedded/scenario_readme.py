#!/usr/bin/env python3
"""Writes the README's target tables from the built scenario image (the
cross tree's `readme-tables` target; boards/mps2-an386/CMakeLists.txt):

    scenario_readme.py README IMAGE MAP CI_DIR SIZE_TOOL EMULATOR...

  scenario-output     the image's output under QEMU (EMULATOR... IMAGE)
  scenario-stack      per entry point: the stack measured on target by
                      painting, the static worst case from the library's
                      call graph (stack_static.py), the budget
  scenario-footprint  flash and RAM of the image (SIZE_TOOL) and of its
                      parts (from the linker MAP: the library, the romfs
                      port, the histories, the scenario + board code, newlib
                      and libgcc)

Each table replaces the text between <!-- NAME:begin --> and
<!-- NAME:end --> in README. Fails when the image fails or a marker is
missing.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linkmap  # noqa: E402
import stack_static  # noqa: E402

# entry point as the image names it -> stack_static.py argument
STATIC = {
    "ctxc_import_text": "ctxc_import_text",
    "ctxc_export": "ctxc_export",
    "ctxc_settings_load": "ctxc_settings_load",
    "ctxc_settings_command": "ctxc_settings_command",
    "ctxc_session_before_send (high-density)":
        "ctxc_session_before_send+compress_run:ctxc__hd_compress"
        "+optimize_with:ctxc__hd_optimize",
    "ctxc_session_compress (top-down-truncation)":
        "ctxc_session_compress+compress_run:ctxc__td_compress",
    "ctxc_session_compress (high-density)":
        "ctxc_session_compress+compress_run:ctxc__hd_compress",
    "ctxc_session_optimize (density step)":
        "ctxc_session_optimize+optimize_with:ctxc__hd_optimize",
}


def replace_between(text, name, body):
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise SystemExit("scenario_readme: README has no %s ... %s" % (begin, end))
    return text[:i + len(begin)] + "\n" + body.rstrip("\n") + "\n" + text[j:]


def static_worst(ci_dir, arg):
    _, frames, kinds, edges = CI
    parts = arg.split("+")
    by_name = {}
    for title in frames:
        by_name.setdefault(stack_static.short(title), title)
    resolve = {}
    for r in parts[1:]:
        caller, _, target = r.partition(":")
        resolve.setdefault(caller, []).append(by_name[target])
    b, notes, _ = stack_static.worst(parts[0], frames, kinds, edges, {}, set(),
                                     resolve)
    return b, notes


SCENARIO_PARTS = ["libctxc.a (the library)", "libctxc_port_romfs.a (romfs port)",
                  "histories in flash (scenario_data.c)",
                  "scenario + board code (scenario.c, target_main.c, image_util.c, startup.c)",
                  "newlib + libgcc (string functions, rdimon, 64-bit division)",
                  "stack (project.yml memory.stack)"]


def scenario_part(obj, name):
    if "libctxc.a(" in obj:
        return 0
    if "libctxc_port_romfs.a(" in obj:
        return 1
    if "scenario_data.c" in obj:
        return 2
    if ".a(" in obj:
        return 4
    return 3


def footprint(image, map_path, size_tool):
    sizes = linkmap.parts(map_path, len(SCENARIO_PARTS), scenario_part, 5)
    return linkmap.table(size_tool, image, SCENARIO_PARTS, sizes) + "\n"


def main():
    global CI
    if len(sys.argv) < 7:
        sys.stderr.write(__doc__)
        return 2
    readme, image, map_path, ci_dir, size_tool = sys.argv[1:6]
    emulator = sys.argv[6:]
    run = subprocess.run(emulator + [image], capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    output = run.stdout + run.stderr
    if run.returncode != 0:
        sys.stdout.write(output)
        raise SystemExit("scenario_readme: the image failed (exit %d)" % run.returncode)
    CI = stack_static.load(ci_dir)
    if not CI[0]:
        raise SystemExit("scenario_readme: no .ci files under " + ci_dir)

    rows = ["| entry point (as the image calls it) | measured on target | "
            "static worst case | static is a lower bound because | budget |",
            "|---|---:|---:|---|---:|"]
    for line in output.splitlines():
        m = re.match(r"^stack: (.+) (\d+) bytes \(budget (\d+)\)", line)
        if not m:
            continue
        entry, used = m.group(1), int(m.group(2))
        b, notes = static_worst(ci_dir, STATIC[entry])
        rows.append("| `%s` | %d | %d | %s | %s |" % (
            entry, used, b, ", ".join(sorted(notes)) or "exact", m.group(3)))
    if len(rows) == 2:
        raise SystemExit("scenario_readme: no stack lines in the image's output")

    with open(readme, encoding="utf-8") as f:
        text = f.read()
    shown = "\n".join(l for l in output.splitlines() if l.strip())
    text = replace_between(text, "scenario-output",
                           "```\n$ " + " ".join(emulator) + " " +
                           "build/cortex-m4/boards/mps2-an386/ctxc_scenario.elf\n" +
                           shown + "\n```")
    text = replace_between(text, "scenario-stack", "\n".join(rows) + "\n")
    text = replace_between(text, "scenario-footprint",
                           footprint(image, map_path, size_tool))
    with open(readme, "w", encoding="utf-8") as f:
        f.write(text)
    print("scenario_readme: wrote the output, stack and footprint tables into " + readme)
    print("\n".join(rows))
    print(footprint(image, map_path, size_tool))
    return 0


CI = None

if __name__ == "__main__":
    sys.exit(main())

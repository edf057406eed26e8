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


def footprint(image, map_path, size_tool):
    out = subprocess.run([size_tool, "-B", image], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    text, data, bss = (int(x) for x in out[1].split()[:3])
    parts = {}
    order = ["libctxc.a (the library)", "libctxc_port_romfs.a (romfs port)",
             "histories in flash (scenario_data.c)",
             "scenario + board code (scenario.c, target_main.c, image_util.c, startup.c)",
             "newlib + libgcc (string functions, rdimon, 64-bit division)",
             "stack (project.yml memory.stack)"]
    for name in order:
        parts[name] = [0, 0, 0]
    out_kind = None
    pending = None
    started = False
    sect = re.compile(r"^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
    with open(map_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("Linker script and memory map"):
                started = True
                continue
            if not started:
                continue
            m = re.match(r"^(\.[A-Za-z_.]+|/DISCARD/)\s", line + " ")
            if m and not line.startswith(" "):
                o = m.group(1)
                out_kind = {".text": 0, ".ARM.exidx": 0, ".init_array": 0,
                            ".data": 1, ".bss": 2, ".stack": 3}.get(o)
                if out_kind == 3:  # no input sections: its size
                    hdr = re.match(r"^\S+\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", line)
                    if hdr:
                        parts[order[5]][2] = int(hdr.group(1), 16)
                continue
            if out_kind is None:
                continue
            if re.match(r"^ \S+$", line):
                pending = line.strip()
                continue
            m = sect.match(line)
            if not m:
                pending = None
                continue
            name = m.group(1) or pending
            pending = None
            size = int(m.group(3), 16)
            obj = m.group(4)
            if name is None or size == 0 or name.startswith("*fill*"):
                continue
            if out_kind == 3:
                parts[order[5]][2] += size
                continue
            if "libctxc.a(" in obj:
                key = order[0]
            elif "libctxc_port_romfs.a(" in obj:
                key = order[1]
            elif "scenario_data.c" in obj:
                key = order[2]
            elif ".a(" in obj:
                key = order[4]
            else:
                key = order[3]
            parts[key][out_kind] += size
    rows = ["Image `ctxc_scenario.elf` (bytes; flash = text + data, RAM = data + bss). "
            "The whole image from `%s`; the parts from the linker map, which "
            "lists mergeable string sections before merging, so the parts "
            "add up to a little more." % os.path.basename(size_tool), "",
            "| part | text | data | bss | flash | RAM |",
            "|---|---:|---:|---:|---:|---:|"]
    for name in order:
        t, d, b = parts[name]
        rows.append("| %s | %d | %d | %d | %d | %d |" % (name, t, d, b, t + d, d + b))
    rows.append("| **whole image** | **%d** | **%d** | **%d** | **%d** | **%d** |"
                % (text, data, bss, text + data, data + bss))
    return "\n".join(rows) + "\n"


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

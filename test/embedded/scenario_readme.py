#!/usr/bin/env python3
"""Writes the target tables of docs/footprint.md from the built scenario image (the
cross tree's `readme-tables` target; boards/mps2-an386/CMakeLists.txt):

    scenario_readme.py DOC.md IMAGE MAP CI_DIR SIZE_TOOL [--OPTION=VALUE...]
                       EMULATOR...

  scenario-output     the image's output under QEMU (EMULATOR... IMAGE)
  scenario-stack      per entry point: the stack measured on target by
                      painting, the static worst case from the library's
                      call graph (stack_static.py), the budget
  scenario-footprint  flash and RAM of the image (SIZE_TOOL) and of its
                      parts (from the linker MAP: the library, the romfs
                      port, the histories, the scenario + board code, newlib
                      and libgcc)

With the options (the cross tree's readme-tables target passes them all):

  library-flash       --lib=libctxc.a: flash per object of the library
                      (test/embedded/size_table.sh)
  library-ram         --ram-object=ram_probe.c.obj --nm=NM: RAM of the
                      caller-owned storage in the board's configuration
                      (test/embedded/ram_table.sh)
  footprint-summary   with --minimal=ELF --minimal-map=MAP
                      --minimal-object=OBJ as well: flash, RAM and stack of
                      the minimal profile and of the full library, one line
                      each; also written into --readme=README.md between its
                      footprint-headline markers

  profile-flash       with --voice-map=MAP --budgets=board_sizes.h as well
                      (and --lib, --minimal-map): the library's flash in the
                      full, voice and minimal profiles beside the board's
                      budgets and the issue's goals (flash_profiles.py)

Each table replaces the text between <!-- NAME:begin --> and
<!-- NAME:end --> in DOC.md (docs/footprint.md). Fails when the image fails or a marker is
missing.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
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
    "ctxc_session_before_send (top-down-truncation)":
        "ctxc_session_before_send+compress_run:ctxc__td_compress",
    "ctxc_session_compress (top-down-truncation)":
        "ctxc_session_compress+compress_run:ctxc__td_compress",
    "ctxc_session_compress (high-density)":
        "ctxc_session_compress+compress_run:ctxc__hd_compress",
    "ctxc_session_optimize (density step)":
        "ctxc_session_optimize+optimize_with:ctxc__hd_optimize",
    # the steady turn's deepest call is its before_send (its appends are
    # shallow): the same chain as before_send with high-density
    "a steady-state turn (high-density: appends, before_send)":
        "ctxc_session_before_send+compress_run:ctxc__hd_compress"
        "+optimize_with:ctxc__hd_optimize",
}


def replace_between(text, name, body):
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise SystemExit("scenario_readme: the document has no %s ... %s" % (begin, end))
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
                  "scenario + board code (scenario.c, voice_day.c, target_main.c, image_util.c, startup.c)",
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


def tool(argv):
    r = subprocess.run(argv, capture_output=True, text=True, check=True)
    return r.stdout


def symbol_ram(nm, obj):
    """Bytes of the data and bss objects an object file defines."""
    total = 0
    for line in tool([nm, "-S", "--defined-only", obj]).splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "bBdD":
            total += int(f[1], 16)
    return total


def summary(opts, emulator, scenario_output, size_tool):
    """(markdown table, README lines): the minimal profile and the full
    library, each with its flash, RAM and stack."""
    import minimal_size  # noqa: E402
    run = subprocess.run(emulator + [opts["minimal"]], capture_output=True,
                         text=True, timeout=120, stdin=subprocess.DEVNULL)
    out = run.stdout + run.stderr
    m = re.search(r"^minimal: (\S+) \(([^)]*)\) stack (\d+) bytes", out, re.M)
    if run.returncode != 0 or not m:
        sys.stdout.write(out)
        raise SystemExit("scenario_readme: the minimal image failed or printed no stack line")
    min_stack, min_entry = int(m.group(3)), "%s (%s)" % (m.group(1), m.group(2))
    _, min_flash, _ = minimal_size.read(opts["minimal-map"])
    min_ram = symbol_ram(opts["nm"], opts["minimal-object"])
    flash_lines = tool(["sh", os.path.join(HERE, "size_table.sh"), size_tool,
                        opts["lib"]]).splitlines()
    total = [l for l in flash_lines if "total" in l]
    full_flash = int(total[-1].strip("|").split("|")[4].strip().strip("*"))
    ram_lines = tool(["sh", os.path.join(HERE, "ram_table.sh"), opts["nm"],
                      opts["ram-object"]]).splitlines()
    full_ram = int(ram_lines[-1].strip("|").split("|")[-1].strip().strip("*"))
    beyond = [l for l in ram_lines if "beyond the history" in l]
    beyond_ram = int(beyond[-1].strip("|").split("|")[-1].strip())
    stacks = [(int(x.group(2)), x.group(1)) for x in
              re.finditer(r"^stack: (.+) (\d+) bytes \(budget", scenario_output, re.M)]
    full_stack, full_entry = max(stacks)
    rows = ["| build | flash | RAM | stack |", "|---|---:|---:|---:|",
            "| minimal profile (`ctxc_minimal_app.elf`: top-down-truncation only, "
            "settings by typed calls, 64 entries, 16 KiB arena) | %d (the library "
            "in the linked image) | %d (its history, work area, settings store and "
            "session) | %d (`%s`) |" % (min_flash, min_ram, min_stack, min_entry),
            "| full library (every strategy, settings commands, JSONL codec, HTTP "
            "client, three providers; board configuration: 256 entries, 96 KiB "
            "arena) | %d (every object of `libctxc.a`) | %d (all caller-owned "
            "storage, provider client included) | %d (`%s`, the deepest entry "
            "point measured) |" % (full_flash, full_ram, full_stack, full_entry)]
    headline = [
        "- Minimal profile (top-down-truncation only, headless, 64 entries): "
        "**%d bytes of flash, %d bytes of RAM, %d bytes of stack**." % (min_flash, min_ram, min_stack),
        "- Full library (every strategy, settings commands, JSONL codec, three "
        "providers; 256 entries, 96 KiB arena): **%d bytes of flash, %d bytes "
        "of RAM, %d bytes of stack**." % (full_flash, full_ram, full_stack),
        "- Of that RAM, beyond the history's arena and slots (work area, "
        "import scratch, settings store, session, provider client): **%d "
        "bytes**; the goal for a voice device is 16 KiB "
        "([what stands between](docs/footprint.md#ram-beyond-the-history))."
        % beyond_ram]
    return ("\n".join(rows) + "\n", "\n".join(headline) + "\n",
            "\n".join(flash_lines) + "\n", "\n".join(ram_lines) + "\n")


def main():
    global CI
    if len(sys.argv) < 7:
        sys.stderr.write(__doc__)
        return 2
    readme, image, map_path, ci_dir, size_tool = sys.argv[1:6]
    opts, emulator = {}, []
    for a in sys.argv[6:]:
        m = re.match(r"^--([a-z-]+)=(.*)$", a)
        if m and not emulator:
            opts[m.group(1)] = m.group(2)
        else:
            emulator.append(a)
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
    written = "the output, stack and footprint tables"
    if all(k in opts for k in ("lib", "ram-object", "nm", "minimal", "minimal-map",
                               "minimal-object")):
        table, headline, flash, ram = summary(opts, emulator, output, size_tool)
        text = replace_between(text, "footprint-summary", table)
        text = replace_between(text, "library-flash", flash)
        text = replace_between(text, "library-ram", ram)
        written += ", the library's flash and RAM tables and the summary"
        if "readme" in opts:
            with open(opts["readme"], encoding="utf-8") as f:
                top = f.read()
            top = replace_between(top, "footprint-headline", headline)
            with open(opts["readme"], "w", encoding="utf-8") as f:
                f.write(top)
            print("scenario_readme: wrote the footprint headline into " + opts["readme"])
        print(table)
    if all(k in opts for k in ("lib", "minimal-map", "voice-map", "budgets")):
        import flash_profiles  # noqa: E402
        objs = {"full": flash_profiles.measure(opts["lib"], size_tool),
                "voice": flash_profiles.measure(opts["voice-map"]),
                "minimal": flash_profiles.measure(opts["minimal-map"])}
        text = replace_between(text, "profile-flash", flash_profiles.table(
            objs, flash_profiles.board_values(opts["budgets"])))
        written += ", the flash per profile"
    with open(readme, "w", encoding="utf-8") as f:
        f.write(text)
    print("scenario_readme: wrote %s into %s" % (written, readme))
    print("\n".join(rows))
    print(footprint(image, map_path, size_tool))
    return 0


CI = None

if __name__ == "__main__":
    sys.exit(main())

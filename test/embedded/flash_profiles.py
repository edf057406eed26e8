#!/usr/bin/env python3
"""The library's flash in each profile of the board (issue 36), from the
built artifacts, against the board's budgets and the issue's goals:

  full     every object of the library archive (libctxc.a, SIZE_TOOL -B:
           object sizes before the final link, so an image pays at most this)
  voice    the library's share of ctxc_voice_app.elf (libctxc_voice.a:
           openai, middle-out + top-down-truncation + high-density, no
           settings commands), from its link map
  minimal  the library's share of ctxc_minimal_app.elf (libctxc_minimal.a),
           from its link map

The link maps list the input sections kept after --gc-sections
(minimal_size.py reads them); mergeable string sections are counted before
merging, so an image's share is a little over what it holds.

    flash_profiles.py --check=PROFILE --budget=N SOURCE [SIZE_TOOL]
        SOURCE is the archive (full; SIZE_TOOL needed) or the image's link
        map. Prints the profile's objects and `the PROFILE profile takes N
        bytes of flash of the budget of B` (exit 0), or `FAIL: ... over the
        budget of B by X` (exit 1).

    flash_profiles.py --lib=libctxc.a --size=SIZE_TOOL --voice-map=MAP
                      --minimal-map=MAP --budgets=board_sizes.h [--doc=DOC.md]
        Prints the profiles' tables (measured, goal, budget; then the
        objects, a column per profile); with --doc writes them between
        <!-- profile-flash:begin --> and <!-- profile-flash:end --> in DOC.md
        (docs/footprint.md). scenario_readme.py calls table() for
        `make readme-tables`.

Budgets and goals come from board_sizes.h: MPS2_FLASH_<PROFILE>_BUDGET (the
check of `make test`) and MPS2_FLASH_<PROFILE>_GOAL (the issue's target).
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import minimal_size  # noqa: E402

PROFILES = ["full", "voice", "minimal"]
WHAT = {
    "full": "full library: every object of `libctxc.a` (every strategy, "
            "settings commands, JSONL codec, HTTP client, three providers)",
    "voice": "voice profile: the library in `ctxc_voice_app.elf` (openai, "
             "middle-out + top-down-truncation + high-density, settings by "
             "typed calls, no settings commands)",
    "minimal": "minimal profile: the library in `ctxc_minimal_app.elf` "
               "(top-down-truncation only, settings by typed calls, no "
               "settings commands)",
}


def archive_objects(size_tool, lib):
    """{object: text + data} of every object in the archive."""
    out = subprocess.run([size_tool, "-B", lib], check=True,
                         capture_output=True, text=True).stdout
    objs = {}
    for line in out.splitlines()[1:]:
        f = line.split()
        if len(f) < 6:
            continue
        name = re.sub(r" \(ex .*\)$", "", " ".join(f[5:]))
        objs[name] = objs.get(name, 0) + int(f[0]) + int(f[1])
    return objs


def map_objects(map_path):
    """{object: flash} of the library's objects kept in a linked image."""
    per_obj, _, _ = minimal_size.read(map_path)
    return per_obj


def measure(source, size_tool=None):
    """{object: flash} of one profile: an archive or a link map (none of
    the library's objects in it: an error, not 0 bytes)."""
    if source.endswith(".a"):
        if size_tool is None:
            raise SystemExit("flash_profiles: an archive needs SIZE_TOOL")
        objs = archive_objects(size_tool, source)
    else:
        objs = map_objects(source)
    if sum(objs.values()) == 0:
        raise SystemExit("flash_profiles: no flash of the library in " + source)
    return objs


def board_values(header):
    """{profile: (budget, goal)} from board_sizes.h."""
    vals = {}
    with open(header, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^#define MPS2_FLASH_([A-Z]+)_(BUDGET|GOAL) ([0-9]+)\b", line)
            if m:
                vals.setdefault(m.group(1).lower(), {})[m.group(2)] = int(m.group(3))
    out = {}
    for p in PROFILES:
        v = vals.get(p, {})
        if "BUDGET" not in v or "GOAL" not in v:
            raise SystemExit("flash_profiles: %s defines no MPS2_FLASH_%s_BUDGET "
                             "and _GOAL" % (header, p.upper()))
        out[p] = (v["BUDGET"], v["GOAL"])
    return out


def short(obj):
    return obj.replace(".obj", "").replace(".o", "")


def kb(n):
    return ("%d KB" % (n // 1024)) if n % 1024 == 0 else "%.1f KB" % (n / 1024.0)


def table(objs, values):
    """The markdown of docs/footprint.md's profile-flash section: one row per
    profile, then the objects with a column per profile."""
    rows = ["| profile | flash | goal (issue 36) | over the goal | budget "
            "(`make test`) |", "|---|---:|---:|---:|---:|"]
    for p in PROFILES:
        total = sum(objs[p].values())
        budget, goal = values[p]
        over = total - goal
        rows.append("| %s | %d | %d (%s) | %s | %d |" % (
            WHAT[p], total, goal, kb(goal),
            ("%d (%.0f %%)" % (over, 100.0 * over / goal)) if over > 0 else "none",
            budget))
    names = sorted(set().union(*(objs[p].keys() for p in PROFILES)),
                   key=lambda o: (-objs["voice"].get(o, 0), -objs["full"].get(o, 0), o))
    rows += ["", "Per object (bytes of flash; `-`: not in the profile's "
             "image), largest in the voice profile first:", "",
             "| object | full | voice | minimal |", "|---|---:|---:|---:|"]
    for o in names:
        if all(objs[p].get(o, 0) == 0 for p in PROFILES):
            continue
        cells = []
        for p in PROFILES:
            cells.append(str(objs[p][o]) if objs[p].get(o, 0) > 0 else "-")
        rows.append("| `%s` | %s |" % (short(o), " | ".join(cells)))
    rows.append("| **total** | %s |" % " | ".join(
        "**%d**" % sum(objs[p].values()) for p in PROFILES))
    return "\n".join(rows) + "\n"


def check(profile, budget, source, size_tool):
    objs = measure(source, size_tool)
    total = sum(objs.values())
    print("| object (%s profile, %s) | flash |" % (profile, os.path.basename(source)))
    print("|---|---:|")
    for o in sorted(objs, key=lambda k: (-objs[k], k)):
        if objs[o] > 0:
            print("| `%s` | %d |" % (short(o), objs[o]))
    print("| **total** | **%d** |" % total)
    if total > budget:
        print("FAIL: flash_profiles: the %s profile takes %d bytes of flash, "
              "over the budget of %d by %d" % (profile, total, budget, total - budget))
        return 1
    print("flash_profiles: the %s profile takes %d bytes of flash of the budget of %d"
          % (profile, total, budget))
    return 0


def replace_between(text, name, body):
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise SystemExit("flash_profiles: the document has no %s ... %s" % (begin, end))
    return text[:i + len(begin)] + "\n" + body.rstrip("\n") + "\n" + text[j:]


def main():
    opts, rest = {}, []
    for a in sys.argv[1:]:
        m = re.match(r"^--([a-z-]+)=(.*)$", a)
        if m:
            opts[m.group(1)] = m.group(2)
        else:
            rest.append(a)
    if "check" in opts:
        if opts["check"] not in PROFILES or "budget" not in opts or not rest:
            sys.stderr.write(__doc__)
            return 2
        return check(opts["check"], int(opts["budget"]), rest[0],
                     rest[1] if len(rest) > 1 else None)
    need = ("lib", "size", "voice-map", "minimal-map", "budgets")
    if any(k not in opts for k in need) or rest:
        sys.stderr.write(__doc__)
        return 2
    objs = {"full": measure(opts["lib"], opts["size"]),
            "voice": measure(opts["voice-map"]),
            "minimal": measure(opts["minimal-map"])}
    body = table(objs, board_values(opts["budgets"]))
    print(body)
    if "doc" in opts:
        with open(opts["doc"], encoding="utf-8") as f:
            text = f.read()
        text = replace_between(text, "profile-flash", body)
        with open(opts["doc"], "w", encoding="utf-8") as f:
            f.write(text)
        print("flash_profiles: wrote the profile-flash tables into " + opts["doc"])
    return 0


if __name__ == "__main__":
    sys.exit(main())

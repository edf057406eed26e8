#!/usr/bin/env python3
"""Native-vocabulary copies of the corpus files, and the check that the
density step prunes the same entries on a copy as on the mapped file.

The converter that made the corpus (docs/testing.md, "The corpus") renamed each
source agent's tools to the spec's names. This helper undoes that for the
agents whose tools high-density's tool table knows (src/tool_roles.h),
following each agent's public tool schema:

  pi           read {path, offset, limit}, write {path, content},
               edit {path, oldText, newText}, bash {command}
  Claude Code  Read {file_path, offset, limit}, Write, Edit, Bash,
               Grep / Glob {pattern, path}, LS {path}
  OpenHands    str_replace_editor {command: view | create | str_replace |
               insert, path, view_range, file_text, old_str, new_str,
               insert_line}, execute_bash {command}

Gemini CLI's names are the spec's (the mapped file is its native copy);
SWE-agent's corpus files have no native copy: the classic ACI has no
structured tools, and the function-calling demonstration's windowed
`edit`/`insert` name their file only through the editor's state (the open
file), which a stateless tool table cannot recover.

    native_vocab.py convert IN.jsonl OUT.jsonl    (exit 2: no native copy)
    native_vocab.py check --cli CTXC --corpus DIR [--work DIR]

`check` runs `ctxc compress FILE --strategy high-density --optimize-only`
on each mapped file and its native copy, prints the density step's counts
of both and fails when the counts or the set of pruned call ids differ, or
when no file had a native copy. Exit 77 (skipped) without a corpus.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

AGENTS = {
    "badlogic/pi-mono": "pi",
    "DRMacIver/claude-reliability": "claude-code",
    "All-Hands-AI/OpenHands": "openhands",
    "google-gemini/gemini-cli": "gemini",
    "princeton-nlp/SWE-agent": "swe-agent",
}


def agent_of(first_entry):
    src = first_entry.get("metadata", {}).get("source", "")
    return AGENTS.get(src.split(":", 1)[0])


def keys(params, rename, first=None):
    """params with keys renamed (missing ones stay missing: a malformed call
    stays malformed), `first` (a dict) in front."""
    out = dict(first or {})
    for k, v in params.items():
        out[rename.get(k, k)] = v
    return out


def ranged(params, path_key):
    """read_line_range {start, end} as offset/limit (no end: no limit)."""
    p = dict(params)
    out = {}
    if "file_path" in p:
        out[path_key] = p.pop("file_path")
    if isinstance(p.get("start"), int):
        start = p.pop("start")
        out["offset"] = start
        if isinstance(p.get("end"), int):
            out["limit"] = p.pop("end") - start + 1
    out.update(p)
    return out


def to_pi(name, p):
    if name in ("read_file", "write_file"):
        return name.split("_")[0], keys(p, {"file_path": "path"})
    if name == "read_line_range":
        return "read", ranged(p, "path")
    if name == "replace":
        return "edit", keys(p, {"file_path": "path", "old_string": "oldText",
                                "new_string": "newText"})
    if name == "run_shell_command":
        return "bash", p
    return name, p


def to_claude(name, p):
    simple = {"read_file": "Read", "write_file": "Write", "replace": "Edit",
              "run_shell_command": "Bash"}
    if name in simple:
        return simple[name], p
    if name == "read_line_range":
        return "Read", ranged(p, "file_path")
    if name in ("search_file_content", "glob", "list_directory"):
        return ({"search_file_content": "Grep", "glob": "Glob",
                 "list_directory": "LS"}[name], keys(p, {"dir_path": "path"}))
    return name, p


def to_openhands(name, p):
    sre = "str_replace_editor"
    if name == "read_file":
        return sre, keys(p, {"file_path": "path"}, {"command": "view"})
    if name == "read_line_range":
        q = {k: v for k, v in p.items() if k not in ("start", "end")}
        q = keys(q, {"file_path": "path"}, {"command": "view"})
        if "start" in p:
            q["view_range"] = [p["start"], p.get("end", -1)]
        return sre, q
    if name == "list_directory":
        return sre, keys(p, {"dir_path": "path"}, {"command": "view"})
    if name == "write_file":
        return sre, keys(p, {"file_path": "path", "content": "file_text"},
                         {"command": "create"})
    if name == "replace":
        return sre, keys(p, {"file_path": "path", "old_string": "old_str",
                             "new_string": "new_str"},
                         {"command": "str_replace"})
    if name == "insert_at_line":
        return sre, keys(p, {"file_path": "path", "line": "insert_line",
                             "content": "new_str"}, {"command": "insert"})
    if name == "run_shell_command":
        return "execute_bash", p
    return name, p


REVERSE = {"pi": to_pi, "claude-code": to_claude, "openhands": to_openhands}


def convert(lines):
    """The native copy of a corpus file's lines, or None when its agent has
    none."""
    entries = [json.loads(l) for l in lines if l.strip()]
    rev = REVERSE.get(agent_of(entries[0])) if entries else None
    if rev is None:
        return None
    renamed = {}
    for e in entries:
        for b in e["blocks"]:
            if b["type"] == "tool_call":
                name, params = rev(b["name"], b["parameters"])
                if name != b["name"]:
                    renamed[b["id"]] = name
                b["name"], b["parameters"] = name, params
            elif b["type"] == "tool_response" and b["callId"] in renamed:
                b["toolName"] = renamed[b["callId"]]
    return [json.dumps(e, ensure_ascii=False, separators=(",", ":"))
            for e in entries]


COUNTS = re.compile(r"read->write pruned (\d+) reads \(entries: (\d+) removed, "
                    r"(\d+) replaced\)")


def call_ids(path):
    ids = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                for b in json.loads(line)["blocks"]:
                    if b["type"] == "tool_call":
                        ids.add(b["id"])
    return ids


def density(cli, path, out):
    r = subprocess.run([cli, "compress", path, "--strategy", "high-density",
                        "--optimize-only", "-o", out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("native_vocab: %s failed on %s:\n%s" %
                         (cli, path, r.stderr))
    m = COUNTS.search(r.stderr)
    if m is None:
        raise SystemExit("native_vocab: no density counts for %s:\n%s" %
                         (path, r.stderr))
    return tuple(int(x) for x in m.groups()), call_ids(path) - call_ids(out)


def check(cli, corpus, work):
    files = sorted(f for f in os.listdir(corpus) if f.endswith(".jsonl"))
    if not files:
        print("native_vocab: no corpus at '%s' (set CTXC_CORPUS to a directory of *.jsonl agent sessions; docs/testing.md, \"The corpus\", says how to get one): skipped" % corpus)
        return 77
    print("| file | agent | mapped: pruned / removed / replaced "
          "| native: pruned / removed / replaced | same pruned calls |")
    print("|---|---|---|---|---|")
    failed, copies = 0, 0
    for name in files:
        path = os.path.join(corpus, name)
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        agent = agent_of(json.loads(lines[0]))
        native = convert(lines)
        mapped, gone = density(cli, path, os.path.join(work, "m-" + name))
        if native is None:
            print("| `%s` | %s | %d / %d / %d | (no native copy) | |" %
                  ((name, agent) + mapped))
            continue
        copies += 1
        npath = os.path.join(work, "native-" + name)
        with open(npath, "w", encoding="utf-8") as f:
            f.write("\n".join(native) + "\n")
        ncounts, ngone = density(cli, npath, os.path.join(work, "n-" + name))
        same = ncounts == mapped and ngone == gone
        failed += not same
        print("| `%s` | %s | %d / %d / %d | %d / %d / %d | %s |" %
              ((name, agent) + mapped + ncounts + ("yes" if same else "NO",)))
    if copies == 0:
        print("native_vocab: no corpus file has a native copy")
        return 1
    return 1 if failed else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "convert":
        with open(argv[2], encoding="utf-8") as f:
            native = convert(f.read().splitlines())
        if native is None:
            return 2
        with open(argv[3], "w", encoding="utf-8") as f:
            f.write("\n".join(native) + "\n")
        return 0
    if len(argv) >= 2 and argv[1] == "check":
        opts = dict(zip(argv[2::2], argv[3::2]))
        cli, corpus = opts.get("--cli"), opts.get("--corpus")
        if cli is None or corpus is None:
            raise SystemExit(__doc__)
        if not os.path.isdir(corpus):
            print("native_vocab: no corpus at '%s' (set CTXC_CORPUS to a directory of *.jsonl agent sessions; docs/testing.md, \"The corpus\", says how to get one): skipped" % corpus)
            return 77
        if "--work" in opts:
            os.makedirs(opts["--work"], exist_ok=True)
            return check(cli, corpus, opts["--work"])
        with tempfile.TemporaryDirectory() as work:
            return check(cli, corpus, work)
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

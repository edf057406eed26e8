#!/usr/bin/env python3
"""Generates the scenario's histories as C arrays (scenario_data.c).

    gen_histories.py OUT.c EXAMPLE.jsonl SEEDS [FULL]

The example session is embedded byte for byte; SEEDS (e.g. 6) more
histories come from a seed-based generator (its own xorshift64*, so the
bytes depend only on the seed): coding-agent turns with reads, writes and
edits of a few files (read-write pruning, file dedupe), repeated shell
commands (recency pruning), thinking and code blocks, text, an unanswered
tool call now and then. FULL (default 0) more histories ("full-N") have
exactly FULL_ENTRIES (256, the board's MPS2_HISTORY_MAX_ENTRIES) entries:
the same generator with shorter blocks (LEAN), so that a whole history
fits the board's 96 KiB arena; they are the largest histories the board
holds, on which the image's entry points are timed (docs/device.md).
Lines stay well under the board's CTXC_CFG_JSON_MAX_TOKENS. The same file
is compiled into the target image and the host build, so both run on the
same bytes.
"""
import json
import sys

MASK = (1 << 64) - 1


class Rng:
    def __init__(self, seed):
        self.s = (0x9E3779B97F4A7C15 ^ (seed * 0xD1B54A32D192ED03)) & MASK
        if self.s == 0:
            self.s = 1

    def next(self):
        x = self.s
        x ^= x >> 12
        x ^= (x << 25) & MASK
        x ^= x >> 27
        self.s = x
        return (x * 0x2545F4914F6CDD1D) & MASK

    def below(self, n):
        return (self.next() >> 33) % n

    def chance(self, pct):
        return self.below(100) < pct

    def pick(self, seq):
        return seq[self.below(len(seq))]


WORDS = ("sensor reading average buffer parser relay heater setpoint band "
         "window sample value error check test build state config log "
         "output input timer offset scale limit count index table entry "
         "module driver queue frame packet header field result status").split()
PATHS = ["src/main.c", "src/sensor.c", "src/control.c", "src/log.c",
         "include/sensor.h", "tests/test_sensor.c", "Makefile", "README.md"]
COMMANDS = ["make test", "make", "git status", "git diff --stat",
            "./build/app --self-test"]
# the full histories: entries each (boards/mps2-an386/board_sizes.h,
# MPS2_HISTORY_MAX_ENTRIES), and the divisor of their block lengths
FULL_ENTRIES = 256
LEAN = 3


def words(r, n):
    return " ".join(r.pick(WORDS) for _ in range(n))


def code_text(r, lines):
    out = []
    for i in range(lines):
        out.append("    int %s_%d = %s(%d);" % (r.pick(WORDS), i, r.pick(WORDS),
                                                r.below(1000)))
    return "\n".join(out)


def meta(r, t, ai):
    m = {"timestamp": 1731942724000 + t * 9100}
    if ai:
        m["model"] = "sim-model-1"
    return m


def line(speaker, blocks, m):
    return json.dumps({"speaker": speaker, "blocks": blocks, "metadata": m},
                      ensure_ascii=False, separators=(",", ":"))


def history(seed, turns, entries=0):
    """turns coding-agent turns; with entries (> 3): turns until the
    history is about to reach that many entries, short text turns up to one
    less, the closing answer last (exactly `entries` lines), blocks LEAN
    times shorter."""
    r = Rng(seed)
    k = LEAN if entries else 1

    def n(x):
        return max(1, x // k)

    out = []
    t = 0
    callno = 0
    out.append(line("human", [{"type": "text", "text": "Task %d: %s." % (
        seed, words(r, n(12) + r.below(n(30))))}], meta(r, t, False)))
    while (turns > 0 and t < turns) or (entries and len(out) < entries - 3):
        t += 1
        kind = r.below(10)
        if kind == 0:
            out.append(line("human", [{"type": "text", "text": words(
                r, n(5) + r.below(n(40)))}], meta(r, t, False)))
            continue
        blocks = []
        if r.chance(50):
            blocks.append({"type": "thinking",
                           "thought": words(r, n(10) + r.below(n(60)))})
        if r.chance(60):
            blocks.append({"type": "text", "text": words(r, n(4) + r.below(n(20)))})
        if kind == 1:
            blocks.append({"type": "code", "language": "c",
                           "code": code_text(r, n(2) + r.below(n(12)))})
            out.append(line("ai", blocks, meta(r, t, True)))
            continue
        calls = []
        for _ in range(1 + r.below(3)):
            callno += 1
            cid = "call_%d_%d" % (seed, callno)
            op = r.below(5)
            path = r.pick(PATHS)
            if op == 0 or op == 1:
                name, params = "read_file", {"file_path": path}
                res = "\n".join(code_text(r, 1) for _ in range(n(3) + r.below(n(25))))
            elif op == 2:
                name, params = "write_file", {"file_path": path,
                                              "content": code_text(r, n(2) + r.below(n(8)))}
                res = "Successfully wrote %s." % path
            elif op == 3:
                name, params = "replace", {"file_path": path,
                                           "old_string": r.pick(WORDS),
                                           "new_string": r.pick(WORDS)}
                res = "Replaced 1 occurrence in %s." % path
            else:
                name, params = "run_shell_command", {"command": r.pick(COMMANDS)}
                res = "\n".join(words(r, 6) for _ in range(n(2) + r.below(n(20))))
            calls.append((cid, name, res))
            blocks.append({"type": "tool_call", "id": cid, "name": name,
                           "parameters": params})
        out.append(line("ai", blocks, meta(r, t, True)))
        answered = calls if not r.chance(8) else calls[:-1]
        if answered:
            resp = []
            for cid, name, res in answered:
                b = {"type": "tool_response", "callId": cid, "toolName": name,
                     "result": res}
                if r.chance(5):
                    b["error"] = "exit status 2"
                resp.append(b)
            out.append(line("tool", resp, meta(r, t, False)))
    while entries and len(out) < entries - 1:
        t += 1
        out.append(line("human", [{"type": "text", "text": words(
            r, n(5) + r.below(n(40)))}], meta(r, t, False)))
    out.append(line("ai", [{"type": "text", "text": "Done: " + words(r, 20)}],
                    meta(r, t + 1, True)))
    return ("\n".join(out) + "\n").encode("utf-8")


def c_array(name, data):
    rows = []
    for i in range(0, len(data), 16):
        rows.append("    " + ", ".join("'\\x%02x'" % b for b in data[i:i + 16]) + ",")
    return "static const char %s[%d] = {\n%s\n};\n" % (name, len(data),
                                                       "\n".join(rows))


def main():
    if len(sys.argv) not in (4, 5):
        sys.stderr.write("usage: gen_histories.py OUT.c EXAMPLE.jsonl SEEDS [FULL]\n")
        return 2
    out_path, example, seeds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    full = int(sys.argv[4]) if len(sys.argv) == 5 else 0
    inputs = []
    with open(example, "rb") as f:
        inputs.append(("example", f.read()))
    for seed in range(1, seeds + 1):
        inputs.append(("gen-%d" % seed, history(seed, 12 + (seed * 7) % 40)))
    for i in range(1, full + 1):
        inputs.append(("full-%d" % i, history(100 + i, 0, FULL_ENTRIES)))
    parts = ["/* Generated by gen_histories.py (the example session, %d "
             "seeded histories and %d of %d entries). Do not edit. */\n"
             % (seeds, full, FULL_ENTRIES),
             "#include \"scenario.h\"\n\n"]
    for i, (_, data) in enumerate(inputs):
        parts.append(c_array("input_%d" % i, data))
    parts.append("\nconst scn_input_t scn_inputs[] = {\n")
    for i, (name, data) in enumerate(inputs):
        parts.append("    {\"%s\", input_%d, %d},\n" % (name, i, len(data)))
    parts.append("};\nconst size_t scn_input_count = %d;\n" % len(inputs))
    text = "".join(parts)
    try:
        with open(out_path, "r", encoding="utf-8") as f:
            if f.read() == text:
                return 0
    except OSError:
        pass
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

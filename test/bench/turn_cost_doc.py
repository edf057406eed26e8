#!/usr/bin/env python3
"""turn_cost_doc.py -- writes test/bench/turn_cost.sh's table into a doc
between <!-- turn-cost:begin --> and <!-- turn-cost:end --> (docs/device.md;
`make device-tables-scenario` and `make device-tables` run it).

  turn_cost_doc.py DOC < table
"""
import sys

BEGIN, END = "<!-- turn-cost:begin -->", "<!-- turn-cost:end -->"


def main():
    doc = sys.argv[1]
    table = [l for l in sys.stdin.read().splitlines() if l.startswith("|")]
    if len(table) < 3:
        raise SystemExit("turn_cost_doc: no table on stdin")
    text = open(doc, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        raise SystemExit("turn_cost_doc: %s has no %s ... %s block" % (doc, BEGIN, END))
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    intro = ("A steady-state turn (test/bench/turn_cost.sh: one human and one ai entry "
             "appended, every other turn a tool call and its result, then "
             "`ctxc_session_before_send` with nothing to compress), in x86-64 "
             "instructions counted by valgrind's callgrind over 20 turns (host builds; "
             "the board's row is the scenario table's steady-state turn above). "
             "`ctest turn_cost_instructions` checks the targets: at most 300,000 a "
             "turn at 256 entries, at 2,048 at most 1.5x that (1.3x in the host "
             "configuration).")
    body = "\n".join([intro, ""] + table)
    open(doc, "w", encoding="utf-8").write(head + BEGIN + "\n" + body + "\n" + END + tail)
    print("turn_cost_doc: wrote the table into %s" % doc)


if __name__ == "__main__":
    main()

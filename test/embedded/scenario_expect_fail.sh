#!/bin/sh
# scenario_expect_fail.sh -- self-test of a target check: COMMAND must exit
# non-zero and print a line matching PATTERN (it plants a fault on purpose).
#
#   scenario_expect_fail.sh PATTERN COMMAND...
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 PATTERN COMMAND..." >&2
    exit 2
fi
pattern=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT INT TERM
st=0
timeout 120 "$@" >"$out" 2>&1 </dev/null || st=$?
grep -v '^| ' "$out" || true
if [ "$st" -eq 0 ]; then
    echo "FAIL: the run passed although a fault was planted"
    exit 1
fi
if [ "$st" -eq 124 ]; then
    echo "FAIL: the run timed out"
    exit 1
fi
if ! grep -q -- "$pattern" "$out"; then
    echo "FAIL: exit $st, but no line matches '$pattern'"
    exit 1
fi
echo "OK: the planted fault was caught (exit $st)"

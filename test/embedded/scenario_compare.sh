#!/bin/sh
# scenario_compare.sh -- the scenario's result table on the target equals the
# host's (boards/mps2-an386/scenario): the rows between "scenario results"
# and "scenario end" of both runs must be identical (entries, tokens, CRCs).
#
#   scenario_compare.sh HOST_EXE EMULATOR... IMAGE
set -eu
if [ $# -lt 3 ]; then
    echo "usage: $0 HOST_EXE EMULATOR... IMAGE" >&2
    exit 2
fi
host_exe=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

st=0
"$host_exe" >"$work/host.out" 2>&1 || st=$?
if [ "$st" -ne 0 ]; then
    cat "$work/host.out"
    echo "FAIL: the host run failed (exit $st)"
    exit 1
fi
st=0
timeout 120 "$@" >"$work/target.out" 2>&1 </dev/null || st=$?
if [ "$st" -ne 0 ]; then
    cat "$work/target.out"
    echo "FAIL: the target run failed (exit $st)"
    exit 1
fi
sed -n '/^scenario results/,/^scenario end/p' "$work/host.out" >"$work/host.table"
sed -n '/^scenario results/,/^scenario end/p' "$work/target.out" >"$work/target.table"
rows=$(grep -c '^| ' "$work/target.table" || true)
if [ "$rows" -lt 3 ]; then
    cat "$work/target.out"
    echo "FAIL: no result table in the target's output"
    exit 1
fi
if ! diff -u "$work/host.table" "$work/target.table"; then
    echo "FAIL: the target's table differs from the host's (above: - host, + target)"
    exit 1
fi
echo "OK: target and host tables identical ($((rows - 2)) rows)"

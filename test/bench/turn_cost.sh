#!/usr/bin/env bash
# The cost of a steady-state turn in executed instructions (issue 37):
# valgrind's callgrind counts measured_turns() of turn_cost (20 turns: one
# human and one ai entry each, a tool call and its result every other turn,
# then ctxc_session_before_send with nothing to compress) at 256 and at
# 2,048 entries, for high-density and top-down-truncation, in two builds:
# the host configuration and the library without the work-area index (the
# board's setting). Instruction counts repeat exactly for the same binary
# and input, whatever else the machine does.
#
#   test/bench/turn_cost.sh [--check] HOST_BINARY NOINDEX_BINARY
#
# Prints one table row per build and strategy. With --check it fails when a
# turn costs more than 300,000 instructions at 256 entries, or the cost at
# 2,048 is more than 1.5x the cost at 256 (1.3x in the host configuration);
# TURN_COST_TARGET sets another per-turn target (the self-test: 1000).
set -euo pipefail
target=${TURN_COST_TARGET:-300000}
check=0
if [ "${1:-}" = "--check" ]; then
    check=1
    shift
fi
host=${1:?turn_cost binary, host configuration}
noindex=${2:?turn_cost binary, no work-area index}
turns=20
if ! command -v valgrind >/dev/null 2>&1; then
    echo "turn_cost: valgrind is not installed (apt-get install valgrind)"
    exit $((check ? 1 : 0))
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# per_turn BINARY ENTRIES STRATEGY: instructions of one turn
per_turn() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
        --toggle-collect=measured_turns "$1" "$2" "$turns" "$3" once \
        >"$tmp/out" 2>"$tmp/vg.err" || {
        echo "turn_cost: $1 $2 $3 failed:" >&2
        cat "$tmp/out" "$tmp/vg.err" >&2
        exit 1
    }
    local total
    total=$(sed -n 's/^summary: *//p' "$tmp/cg.out")
    echo $((total / turns))
}

failed=0
echo "| build | strategy | instructions a turn, 256 entries | 2,048 entries | 2,048 / 256 |"
echo "|---|---|---:|---:|---:|"
for build in noindex host; do
    bin=$noindex
    limit=150
    label="board setting (no work-area index)"
    if [ $build = host ]; then
        bin=$host
        limit=130
        label="host configuration"
    fi
    for strategy in high-density top-down-truncation; do
        a=$(per_turn "$bin" 256 $strategy)
        b=$(per_turn "$bin" 2048 $strategy)
        ratio=$((b * 100 / a))
        printf '| %s | %s | %d | %d | %d.%02d |\n' "$label" $strategy "$a" "$b" \
            $((ratio / 100)) $((ratio % 100))
        if [ "$a" -gt "$target" ]; then
            echo "turn_cost: FAIL: $label, $strategy: $a instructions a turn at 256 entries (target $target)"
            failed=1
        fi
        if [ "$ratio" -gt "$limit" ]; then
            echo "turn_cost: FAIL: $label, $strategy: 2048/256 = $ratio/100 (target $limit/100)"
            failed=1
        fi
    done
done
if [ $check -eq 1 ] && [ $failed -ne 0 ]; then
    exit 1
fi
echo "turn_cost: within the targets: $([ $failed -eq 0 ] && echo yes || echo no)"

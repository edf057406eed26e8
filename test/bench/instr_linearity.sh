#!/usr/bin/env bash
# Linearity of the LLM-free steps in executed instructions, not seconds:
# valgrind's callgrind counts the instructions of one function (and what it
# calls, libc left out: see count()) in `ctxc compress` of every corpus file
# at 1x and at 10x (the 10x
# files the benchmark wrote to <build>/bench/). Instruction counts repeat
# exactly for the same binary and input, whatever else the machine does, so
# the 10x/1x ratio here shows the algorithm's growth without the cache-size
# and noise effects of wall time (bench_strategies' "10x/1x" columns).
#
#   test/bench/instr_linearity.sh CTXC_BINARY BENCH_DIR CORPUS_DIR
#
# Prints one line per step: total instructions at 1x and 10x over the files
# and their ratio (target <= 12, as for time), and the worst file.
set -euo pipefail

cli=${1:?ctxc binary}
dir=${2:?the benchmark work directory (10x files)}
corpus=${3:?corpus directory}

if [ ! -d "$corpus" ]; then
    # the benchmark's own fallback: the shipped example session
    corpus="$(dirname "$0")/../../boards/host/examples"
fi
if ! command -v valgrind >/dev/null 2>&1; then
    echo "instructions: valgrind not installed: skipped (apt-get install valgrind)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CTXC_HOME="$tmp/home"
mkdir -p "$CTXC_HOME"

# instructions FUNCTION ARGS...: instructions executed inside FUNCTION
count() {
    local fn=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
        --toggle-collect="$fn" "$cli" "$@" >/dev/null 2>"$tmp/vg.err" || {
        echo "instructions: $cli $* failed under valgrind:" >&2
        cat "$tmp/vg.err" >&2
        exit 1
    }
    # ctxc's own instructions: libc's (memcpy/memmove/memset, ...) left
    # out, because callgrind counts each byte a `rep movsb` moves as one
    # instruction, so a copy's count depends on its size class, not only on
    # its bytes (the bytes a step moves are linear: each kept record moves
    # at most once)
    callgrind_annotate --auto=no --threshold=100 "$tmp/cg.out" 2>/dev/null |
        awk '/^ *[0-9,]+ +\(/ && !/PROGRAM TOTALS/ && !/libc\.so/ {
                 gsub(",", "", $1); n += $1 }
             END { printf "%d\n", n }'
}

tokens() {
    "$cli" stats "$1" | sed -n 's/^tokens (estimated): \([0-9]*\)$/\1/p'
}

steps=("density step|ctxc_session_optimize|--optimize-only"
    "density step, recency on|ctxc_session_optimize|--optimize-only --density recencyPruning=true"
    "high-density compress|ctxc_session_compress|")
declare -A sum1 sum10 worst worst_file
files=0
for one in "$corpus"/*.jsonl; do
    name=$(basename "$one" .jsonl)
    ten="$dir/$name.10x.jsonl"
    [ -f "$ten" ] || continue
    files=$((files + 1))
    t1=$(tokens "$one")
    t10=$(tokens "$ten")
    for s in "${steps[@]}"; do
        IFS='|' read -r label fn extra <<<"$s"
        # shellcheck disable=SC2086
        i1=$(count "$fn" compress "$one" --strategy high-density \
            --context-limit $((t1 / 2)) -o /dev/null $extra)
        # shellcheck disable=SC2086
        i10=$(count "$fn" compress "$ten" --strategy high-density \
            --context-limit $((t10 / 2)) -o /dev/null $extra)
        sum1[$label]=$((${sum1[$label]:-0} + i1))
        sum10[$label]=$((${sum10[$label]:-0} + i10))
        r=$(awk -v a="$i10" -v b="$i1" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
        if awk -v r="$r" -v w="${worst[$label]:-0}" 'BEGIN { exit !(r > w) }'; then
            worst[$label]=$r
            worst_file[$label]=$name
        fi
    done
done
if [ "$files" -eq 0 ]; then
    echo "instructions: no 10x files in $dir (run the benchmark first)"
    exit 0
fi
printf '\nInstructions of the ctxc code (callgrind, %d files; exact, repeatable): 10x/1x target <= 12\n' "$files"
printf '%-28s %15s %15s  %-11s %s\n' "step" "instr 1x" "instr 10x" "10x/1x" "worst file"
for s in "${steps[@]}"; do
    IFS='|' read -r label _ _ <<<"$s"
    r=$(awk -v a="${sum10[$label]}" -v b="${sum1[$label]}" 'BEGIN { printf "%.2f", a / b }')
    v=$(awk -v r="$r" 'BEGIN { print (r <= 12 ? "PASS" : "MISS") }')
    printf '%-28s %15s %15s  %-11s %s (%s)\n' "$label" "${sum1[$label]}" \
        "${sum10[$label]}" "$r $v" "${worst[$label]}" "${worst_file[$label]}"
done

#!/bin/sh
# One libFuzzer target of the clang fuzz tree (build/fuzz, CTXC_FUZZ=ON):
# used by `make fuzz` and by the ctest entries libfuzzer_<target> of
# `make test` (test/fuzz/CMakeLists.txt).
#
#   libfuzzer.sh <binary> <target> <seconds> <seed dir> <corpus dir> <crash dir> [libFuzzer options...]
#
# 1. replays every file of <seed dir> and of regressions/<target>/ (next to
#    this script) once, one by one, so a failing input is named;
# 2. fuzzes for <seconds> from <corpus dir> (new inputs go there; `-`: a
#    fresh temporary directory, removed afterwards), the seeds and the
#    regressions, with the target's dictionary (dict/); crash files go to
#    <crash dir>. The options (e.g. -seed=1) are passed to this run.
#
# Fails when the binary or the seed dir is missing, or an input fails.
set -eu

if [ $# -lt 6 ]; then
    echo "usage: $0 <binary> <target> <seconds> <seed dir> <corpus dir> <crash dir> [libFuzzer options...]" >&2
    exit 2
fi
bin=$1 target=$2 seconds=$3 seeds=$4 corpus=$5 crashes=$6
shift 6
here=$(cd "$(dirname "$0")" && pwd)
regressions=$here/regressions/$target

if [ ! -x "$bin" ]; then
    echo "libfuzzer: no fuzz binary $bin (the clang fuzz tree: make test / make fuzz build it)" >&2
    exit 1
fi
for d in "$seeds" "$regressions"; do
    if [ ! -d "$d" ]; then
        echo "libfuzzer: no directory $d" >&2
        exit 1
    fi
done

case $target in
commands) dict=$here/dict/commands.dict ;;
http | sse) dict=$here/dict/http.dict ;;
manifest) dict="" ;;
*) dict=$here/dict/json.dict ;;
esac

tmp=""
if [ "$corpus" = "-" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    corpus=$tmp
fi
mkdir -p "$corpus" "$crashes"

# 1. every seed and regression input, as single runs (libFuzzer runs the
# arguments one by one when they are all files)
n=$(find "$seeds" "$regressions" -type f | wc -l)
echo "libfuzzer: $target: replaying $n inputs ($seeds, $regressions)"
if ! find "$seeds" "$regressions" -type f -print0 | sort -z |
    xargs -0 "$bin" -artifact_prefix="$crashes/" >"$crashes/replay.log" 2>&1; then
    grep -v '^Executed \|^Running: ' "$crashes/replay.log" | tail -n 60
    echo "libfuzzer: $target: an input failed on replay (the last 'Running:' line names it; full log $crashes/replay.log):" >&2
    grep '^Running: ' "$crashes/replay.log" | tail -n 1 >&2
    exit 1
fi

# 2. fuzzing
echo "libfuzzer: $target: fuzzing for $seconds s"
"$bin" -max_total_time="$seconds" -print_final_stats=1 ${dict:+-dict="$dict"} \
    -artifact_prefix="$crashes/" "$@" "$corpus" "$seeds" "$regressions"

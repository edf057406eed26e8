#!/bin/sh
# check_symbols_selftest.sh -- proves check_symbols.sh catches what it must.
#
#   check_symbols_selftest.sh NM CC AR [CFLAGS...]
#
# Builds three tiny static libraries with the given toolchain and asserts:
#   selftest_uses_malloc.c    -> check fails, naming the object and malloc/free
#   selftest_defines_calloc.c -> check fails, naming calloc (a definition)
#   selftest_clean.c          -> check passes
set -eu

if [ $# -lt 3 ]; then
    echo "usage: $0 NM CC AR [CFLAGS...]" >&2
    exit 2
fi
nm_tool=$1
cc=$2
ar=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
check="$here/check_symbols.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# -O0: keep the compiler from folding a malloc/free pair away.
build() { # build CFLAGS... ($name.c -> $work/lib$name.a)
    "$cc" "$@" -c -O0 -o "$work/$name.o" "$here/$name.c" 2>"$work/cc.log" || {
        cat "$work/cc.log" >&2
        echo "SELFTEST ERROR: cannot compile $name.c with $cc" >&2
        exit 2
    }
    rm -f "$work/lib$name.a"
    "$ar" rcs "$work/lib$name.a" "$work/$name.o"
}

failures=0
expect() { # expect NAME RC PATTERN...
    name=$1
    want=$2
    shift 2
    rc=0
    sh "$check" "$nm_tool" "$work/lib$name.a" >"$work/out.log" 2>&1 || rc=$?
    sed 's/^/    | /' "$work/out.log"
    if [ "$rc" -ne "$want" ]; then
        echo "SELFTEST FAIL: $name: check_symbols exited $rc, expected $want"
        failures=$((failures + 1))
        return 0
    fi
    for pattern in "$@"; do
        if ! grep -q -- "$pattern" "$work/out.log"; then
            echo "SELFTEST FAIL: $name: output lacks '$pattern'"
            failures=$((failures + 1))
        fi
    done
    echo "selftest ok: $name (exit $rc)"
}

for name in selftest_uses_malloc selftest_defines_calloc selftest_clean; do
    build "$@"
done

expect selftest_uses_malloc 1 "selftest_uses_malloc.o: uses malloc" "selftest_uses_malloc.o: uses free"
expect selftest_defines_calloc 1 "selftest_defines_calloc.o: defines calloc"
expect selftest_clean 0 "OK: no heap allocation symbols"

if [ "$failures" -ne 0 ]; then
    echo "FAIL: $failures self-test assertion(s) failed for $cc / $nm_tool"
    exit 1
fi
echo "OK: check_symbols.sh fails on allocator symbols and passes a clean library ($cc)"

#!/bin/sh
# check_symbols.sh -- the embedded memory contract, checked on a built library.
#
#   check_symbols.sh [--list-undefined] NM LIBRARY
#
# Fails (exit 1) when any object in LIBRARY references or defines a heap
# allocator symbol (see FORBIDDEN), printing each offending object and symbol.
# With --list-undefined it also prints every undefined external symbol of the
# library (what the library needs from libc / the integrator). Exit 2 on usage
# or tool errors.
#
# alloca() and VLAs leave no symbol behind; -Walloca -Wvla -Werror (project.yml
# warnings) catch those at compile time.
set -eu

FORBIDDEN="malloc calloc realloc free strdup strndup alloca __builtin_alloca
_malloc_r _free_r _calloc_r _realloc_r
aligned_alloc posix_memalign memalign valloc pvalloc reallocarray"

list_undefined=0
if [ "${1:-}" = "--list-undefined" ]; then
    list_undefined=1
    shift
fi
if [ $# -ne 2 ]; then
    echo "usage: $0 [--list-undefined] NM LIBRARY" >&2
    exit 2
fi
nm_tool=$1
lib=$2

if ! command -v "$nm_tool" >/dev/null 2>&1; then
    echo "check_symbols: '$nm_tool' not found (Debian: binutils / binutils-arm-none-eabi; \`make test\` installs them)" >&2
    exit 2
fi
if [ ! -f "$lib" ]; then
    echo "check_symbols: library '$lib' does not exist (build it first: \`make test\` builds every target)" >&2
    exit 2
fi

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT INT TERM
# POSIX format: "lib.a[obj.o]: symbol TYPE [value size]"
if ! "$nm_tool" -A -P "$lib" >"$tmp"; then
    echo "check_symbols: $nm_tool failed on $lib" >&2
    exit 2
fi

echo "check_symbols: $lib ($nm_tool)"

if [ "$list_undefined" -eq 1 ]; then
    # Undefined in some object and defined in none: what the library needs
    # from libc, libgcc or the integrator.
    undef=$(awk '
        $3 == "U" || $3 == "w" || $3 == "v" { used[$2] = 1; next }
        NF >= 3 { defined[$2] = 1 }
        END { for (s in used) if (!(s in defined)) print s }' "$tmp" | sort)
    count=$(printf '%s\n' "$undef" | grep -c . || true)
    echo "undefined external symbols ($count):"
    if [ "$count" -gt 0 ]; then
        printf '%s\n' "$undef" | awk '
            { if (len > 0 && len + 1 + length($0) > 78) { print line; len = 0 }
              line = (len == 0) ? "  " $0 : line " " $0; len = length(line) }
            END { if (len > 0) print line }'
    fi
fi

bad=$(awk -v forbidden="$FORBIDDEN" '
    BEGIN { n = split(forbidden, f, /[ \t\n]+/); for (i = 1; i <= n; i++) if (f[i] != "") bad[f[i]] = 1 }
    NF >= 3 && ($2 in bad) {
        obj = $1
        sub(/:$/, "", obj)
        if (obj ~ /\]$/) { sub(/^.*\[/, "", obj); sub(/\]$/, "", obj) }
        kind = ($3 == "U" || $3 == "w" || $3 == "v") ? "uses" : "defines"
        printf "  %s: %s %s\n", obj, kind, $2
    }' "$tmp")

if [ -n "$bad" ]; then
    echo "FAIL: heap allocation symbols in $lib (the library must not allocate; see docs/design.md, \"Memory model\"):"
    printf '%s\n' "$bad"
    exit 1
fi
echo "OK: no heap allocation symbols ($(echo $FORBIDDEN | sed 's/ /, /g'))"

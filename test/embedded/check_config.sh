#!/bin/sh
# check_config.sh -- the compile-time configuration works as documented:
#   * defaults come from the generated ctxc_manifest.h,
#   * a ctxc_config.h on the include path overrides them,
#   * -DCTXC_CONFIG_FILE=... overrides them (and wins over ctxc_config.h),
#   * impossible combinations stop the build with #error naming the option.
#
#   check_config.sh CC INCLUDE_DIR GEN_DIR
set -eu
if [ $# -ne 3 ]; then
    echo "usage: $0 CC INCLUDE_DIR GEN_DIR" >&2
    exit 2
fi
cc=$1
inc=$2
gen=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
fails=0

probe() { # probe NAME EXPECTED_ENTRIES [CFLAGS...]: must compile
    name=$1
    want=$2
    shift 2
    cat >"$work/probe.c" <<EOC
#include "ctxc/ctxc.h"
_Static_assert(CTXC_CFG_HISTORY_MAX_ENTRIES == $want, "unexpected value");
int probe(void);
int probe(void) { return CTXC_CFG_HISTORY_MAX_ENTRIES; }
EOC
    if "$cc" -std=c11 -c -o "$work/probe.o" "$@" -I"$inc" -I"$gen" "$work/probe.c" 2>"$work/log"; then
        echo "ok: $name (CTXC_CFG_HISTORY_MAX_ENTRIES = $want)"
    else
        cat "$work/log"
        echo "FAIL: $name"
        fails=$((fails + 1))
    fi
}

reject() { # reject NAME MESSAGE [CFLAGS...]: must fail with MESSAGE
    name=$1
    msg=$2
    shift 2
    printf '#include "ctxc/ctxc.h"\nint probe(void);\nint probe(void) { return 0; }\n' >"$work/bad.c"
    if "$cc" -std=c11 -c -o "$work/bad.o" "$@" -I"$inc" -I"$gen" "$work/bad.c" 2>"$work/log"; then
        echo "FAIL: $name compiled, but must stop with #error"
        fails=$((fails + 1))
    elif grep -q "$msg" "$work/log"; then
        echo "ok: $name rejected: $(grep -o "#error.*" "$work/log" | head -n 1)"
    else
        cat "$work/log"
        echo "FAIL: $name failed without the message '$msg'"
        fails=$((fails + 1))
    fi
}

want_default=$(sed -n 's/^#define CTXC_MANIFEST_HISTORY_MAX_ENTRIES \([0-9]*\).*/\1/p' "$gen/ctxc_manifest.h")
probe "manifest default" "$want_default"

mkdir -p "$work/board"
printf '#define CTXC_CFG_HISTORY_MAX_ENTRIES 42\n' >"$work/board/ctxc_config.h"
probe "ctxc_config.h on the include path" 42 -I"$work/board"

printf '#define CTXC_CFG_HISTORY_MAX_ENTRIES 77\n' >"$work/mine.h"
probe "-DCTXC_CONFIG_FILE" 77 -I"$work/board" "-DCTXC_CONFIG_FILE=\"$work/mine.h\""

reject "one history entry" "CTXC_CFG_HISTORY_MAX_ENTRIES must be at least 2" -DCTXC_CFG_HISTORY_MAX_ENTRIES=1
reject "70000 history entries" "at most 65535" -DCTXC_CFG_HISTORY_MAX_ENTRIES=70000
reject "tiny arena" "CTXC_CFG_HISTORY_ARENA_BYTES must be at least 256" -DCTXC_CFG_HISTORY_ARENA_BYTES=100
reject "depth 65" "CTXC_CFG_JSON_MAX_DEPTH must be at most 64" -DCTXC_CFG_JSON_MAX_DEPTH=65
reject "depth 2" "CTXC_CFG_JSON_MAX_DEPTH must be at least 4" -DCTXC_CFG_JSON_MAX_DEPTH=2
reject "8 JSON tokens" "CTXC_CFG_JSON_MAX_TOKENS must be at least 16" -DCTXC_CFG_JSON_MAX_TOKENS=8
reject "10-byte messages" "CTXC_CFG_ERROR_MESSAGE_LEN must be 0" -DCTXC_CFG_ERROR_MESSAGE_LEN=10
reject "tiny settings values" "CTXC_CFG_SETTINGS_VALUE_BYTES must be at least 32" -DCTXC_CFG_SETTINGS_VALUE_BYTES=8
reject "tiny settings file buffer" "CTXC_CFG_SETTINGS_FILE_BYTES must be 0 (no settings file) or at least CTXC_SETTINGS_FILE_MIN_BYTES = 1339 + 10 x CTXC_CFG_SETTINGS_VALUE_BYTES (2619 with the default 128)" -DCTXC_CFG_SETTINGS_FILE_BYTES=100
probe "no settings file buffer" "$want_default" -DCTXC_CFG_SETTINGS_FILE_BYTES=0
# 1024 is above the old floor of 512 and below the real minimum: the message
# says how much is needed
reject "settings file buffer under a full file" "at least CTXC_SETTINGS_FILE_MIN_BYTES = 1339 + 10 x" -DCTXC_CFG_SETTINGS_FILE_BYTES=1024
reject "profile names longer than values" "CTXC_CFG_SETTINGS_PROFILE_NAME_MAX must be below" -DCTXC_CFG_SETTINGS_PROFILE_NAME_MAX=200
reject "profile names longer than paths" "too long for CTXC_CFG_PATH_MAX" -DCTXC_CFG_PATH_MAX=64 -DCTXC_CFG_SETTINGS_PROFILE_NAME_MAX=60
reject "tiny HTTP I/O buffer" "CTXC_CFG_HTTP_IO_BUFFER_BYTES must be at least 64" -DCTXC_CFG_HTTP_IO_BUFFER_BYTES=16
reject "no HTTP headers" "CTXC_CFG_HTTP_MAX_HEADERS must be at least 1" -DCTXC_CFG_HTTP_MAX_HEADERS=0
reject "tiny SSE buffer" "CTXC_CFG_HTTP_SSE_BUFFER_BYTES must be at least 64" -DCTXC_CFG_HTTP_SSE_BUFFER_BYTES=10
reject "no strategy" "at least one CTXC_CFG_STRATEGY" -DCTXC_CFG_STRATEGY_MIDDLE_OUT=0 \
    -DCTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION=0 -DCTXC_CFG_STRATEGY_ONE_SHOT=0 -DCTXC_CFG_STRATEGY_HIGH_DENSITY=0

# The library builds with error texts compiled out.
src=$(cd "$inc/../src" && pwd)
for f in "$src"/*.c; do
    if ! "$cc" -std=c11 -Wall -Wextra -Werror -c -o "$work/lib.o" -DCTXC_CFG_ERROR_MESSAGE_LEN=0 \
        -I"$inc" -I"$gen" -isystem "$gen/jsmn" "$f" 2>"$work/log"; then
        cat "$work/log"
        echo "FAIL: $(basename "$f") does not build with CTXC_CFG_ERROR_MESSAGE_LEN=0"
        fails=$((fails + 1))
    fi
done
echo "ok: library builds with CTXC_CFG_ERROR_MESSAGE_LEN=0"

if [ "$fails" -ne 0 ]; then
    echo "check_config: $fails check(s) failed"
    exit 1
fi
echo "check_config: all checks passed"

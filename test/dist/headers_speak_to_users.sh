#!/bin/sh
# headers_speak_to_users.sh INCLUDE_DIR -- the public headers' comments are
# for a user of the library: no requirement ids (REQ-...) or issue numbers
# of this project's tracker, and no placeholder macro names where the real
# one is meant (CTXC_CFG_STRATEGY_<NAME> in a message). Issue 30 point 9.
set -eu
bad=$(grep -nE 'REQ-[A-Z]{2}|[Ii]ssue [0-9]+' "$1"/ctxc/*.h || true)
if [ -n "$bad" ]; then
    echo "$bad"
    echo "FAIL: requirement ids or issue numbers in public headers"
    exit 1
fi
echo "ok: $(ls "$1"/ctxc/*.h | wc -l) public headers without requirement ids or issue numbers"

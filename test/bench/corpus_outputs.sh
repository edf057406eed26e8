#!/usr/bin/env bash
# Checksums of what the CLI makes of every corpus file: `fmt` (canonical
# export), and `compress` with each LLM-free strategy at two fixed context
# limits (so a change that moves a cut shows up). One line per output:
#   <sha256-prefix> <tokens-after> <file> <what>
# Used to show that a refactor leaves outputs byte-identical (run it before
# and after, then diff). Usage: corpus_outputs.sh [CTXC] [CORPUS_DIR]
set -euo pipefail
cli=${1:-build/host/ctxc}
corpus=${2:-${CTXC_CORPUS:-}}
if ! ls "$corpus"/*.jsonl >/dev/null 2>&1; then
    echo "corpus_outputs: no corpus at '$corpus' (give CORPUS_DIR or set CTXC_CORPUS; docs/testing.md, \"The corpus\")" >&2
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$corpus"/*.jsonl; do
    name=$(basename "$f" .jsonl)
    sum=$("$cli" fmt "$f" | sha256sum | cut -c1-16)
    echo "$sum - $name fmt"
    for s in top-down-truncation high-density; do
        for limit in 20000 60000; do
            "$cli" compress "$f" --strategy "$s" --context-limit "$limit" \
                -o "$tmp/out.jsonl" 2>"$tmp/err.txt"
            sum=$(sha256sum <"$tmp/out.jsonl" | cut -c1-16)
            tok=$(grep -E '^tokens' "$tmp/err.txt" | awk '{print $NF}')
            echo "$sum $tok $name $s@$limit"
        done
    done
done

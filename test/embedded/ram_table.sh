#!/bin/sh
# ram_table.sh -- RAM of ctxc's caller-owned storage, read from the compiled
# RAM probe object (boards/<board>/ram_probe.c): a line per storage, the
# storage beyond the history (all but the history's arena and slot array,
# and but the separate HTTP work area: a firmware with a provider client
# uses the client's own), and the total.
#
#   ram_table.sh NM OBJECT [BUDGET]
#
# With BUDGET (bytes) it fails (exit 1) when the storage beyond the history
# takes more (the board's MPS2_RAM_BEYOND_HISTORY_BUDGET).
set -eu
if [ $# -ne 2 ] && [ $# -ne 3 ]; then
    echo "usage: $0 NM OBJECT [BUDGET]" >&2
    exit 2
fi
nm_tool=$1
obj=$2
budget=${3:-}
if [ ! -f "$obj" ]; then
    echo "ram_table: object '$obj' does not exist" >&2
    exit 2
fi
echo "RAM of the caller-owned storage (bytes, from $(basename "$obj"))"
echo
echo "| storage | symbol | bytes |"
echo "|---|---|---:|"
total=0
# nm -S: "address size type name" (hex); keep data/bss objects of the probe.
"$nm_tool" -S "$obj" | while read -r addr size type name; do
    case "$type" in b|B|d|D) ;; *) continue ;; esac
    bytes=$(printf '%d' "0x$size")
    case "$name" in
    ram_history_slots_) what="history slot array (CTXC_CFG_HISTORY_MAX_ENTRIES x 16)" ;;
    ram_history_arena_) what="history byte arena (CTXC_CFG_HISTORY_ARENA_BYTES)" ;;
    ram_history) what="ctxc_history_t" ;;
    ram_import) what="ctxc_import_t (JSON token scratch, CTXC_CFG_JSON_MAX_TOKENS x 20)" ;;
    ram_error) what="ctxc_error_t (CTXC_CFG_ERROR_MESSAGE_LEN)" ;;
    ram_work) what="ctxc_work_t" ;;
    ram_work_map_) what="work: view map (entries x 2)" ;;
    ram_work_boundary_) what="work: boundary data ((entries + 1) x 2)" ;;
    ram_work_marks_) what="work: density marks (entries x 2)" ;;
    ram_work_rem_) what="work: density removals (entries x 4)" ;;
    ram_work_ops_) what="work: plan ops ((2 x entries + 2) x 24)" ;;
    ram_work_repl_) what="work: density replacements (entries x 24)" ;;
    ram_work_index_) what="work: id and key indexes (2 x index slots x 16)" ;;
    ram_work_scratch_) what="work: scratch for inserted entries (CTXC_CFG_WORK_SCRATCH_BYTES)" ;;
    ram_session) what="ctxc_session_t" ;;
    ram_settings) what="ctxc_settings_store_t (two layers + settings file buffer)" ;;
    ram_http_work) what="HTTP client work area (CTXC_HTTP_WORK_BYTES; only during a request)" ;;
    ram_provider_client) what="ctxc_provider_client_t (HTTP work area + JSON tokens + key, URL, error buffers)" ;;
    *) what="$name" ;;
    esac
    echo "| $what | \`$name\` | $bytes |"
done
# the totals: everything, and what is beyond the history
total=0
beyond=0
for row in $("$nm_tool" -S "$obj" | awk '$3 ~ /^[bBdD]$/ { print $4 ":" $2 }'); do
    name=${row%%:*}
    bytes=$(printf '%d' "0x${row#*:}")
    total=$((total + bytes))
    case "$name" in
    ram_history_arena_|ram_history_slots_|ram_http_work) ;;
    *) beyond=$((beyond + bytes)) ;;
    esac
done
echo "| **beyond the history** (all but its arena and slot array, and but the separate HTTP work area: a provider client holds its own) | | $beyond |"
echo "| **total** | | $total |"
if [ -n "$budget" ]; then
    if [ "$beyond" -gt "$budget" ]; then
        echo "ram_table: the storage beyond the history takes $beyond bytes, over the budget of $budget" >&2
        exit 1
    fi
    echo "ram_table: the storage beyond the history takes $beyond bytes of the budget of $budget" >&2
fi

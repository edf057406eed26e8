#!/bin/sh
# size_table.sh -- flash/RAM per object file of a static library.
#
#   size_table.sh [SIZE] LIBRARY      (SIZE defaults to arm-none-eabi-size)
#
# Prints a markdown table of text/data/bss per object plus a total line.
# Sizes are those of the object files before the final link: with
# -ffunction-sections -fdata-sections, --gc-sections at link time drops
# whatever the application does not use, so a firmware image pays at most this.
set -eu

if [ $# -eq 1 ]; then
    size_tool=arm-none-eabi-size
    lib=$1
elif [ $# -eq 2 ]; then
    size_tool=$1
    lib=$2
else
    echo "usage: $0 [SIZE] LIBRARY" >&2
    exit 2
fi
if ! command -v "$size_tool" >/dev/null 2>&1; then
    echo "size_table: '$size_tool' not found (Debian: binutils-arm-none-eabi)" >&2
    exit 2
fi
if [ ! -f "$lib" ]; then
    echo "size_table: library '$lib' does not exist (build it first: \`make cortex-m4\`)" >&2
    exit 2
fi

# Berkeley format: "text data bss dec hex filename", filename "x.o (ex lib.a)".
"$size_tool" -B "$lib" | awk -v lib="$lib" '
    NR == 1 { next }
    {
        name = $6
        for (i = 7; i <= NF; i++) name = name " " $i
        sub(/ \(ex .*\)$/, "", name)
        rows++
        obj[rows] = name; text[rows] = $1; data[rows] = $2; bss[rows] = $3
        if (length(name) > w) w = length(name)
        tt += $1; td += $2; tb += $3
    }
    END {
        if (w < 9) w = 9
        shown = lib; sub(/^.*\/build\//, "build/", shown) # not the checkout path
        printf "Size of %s (bytes; flash = text + data, RAM = data + bss)\n\n", shown
        printf "| %-*s | %8s | %8s | %8s | %8s | %8s |\n", w, "object", "text", "data", "bss", "flash", "RAM"
        dash = sprintf("%*s", w, ""); gsub(/ /, "-", dash)
        printf "|-%s-|---------:|---------:|---------:|---------:|---------:|\n", dash
        for (i = 1; i <= rows; i++)
            printf "| %-*s | %8d | %8d | %8d | %8d | %8d |\n", w, obj[i], text[i], data[i], bss[i], text[i] + data[i], data[i] + bss[i]
        printf "| %-*s | %8d | %8d | %8d | %8d | %8d |\n", w, "**total**", tt, td, tb, tt + td, td + tb
    }'

#!/bin/sh
# dist_needs_only_cmake.sh SOURCE_DIR WORK -- `make dist`'s CMake tree
# (CTXC_DIST_ONLY) configures and packs with nothing on PATH but cmake and
# make: no compiler, libedit or mbedTLS (issue 30 point 7); the tarball
# carries the firmware quick start and the bare-metal example.
set -eu
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work/bin"
for tool in cmake make; do
    ln -s "$(command -v "$tool")" "$work/bin/$tool"
done
PATH="$work/bin" CC=/nonexistent/cc cmake -S "$src" -B "$work/tree" \
    -DCTXC_DIST_ONLY=ON "-DCTXC_DIST_DIR=$work/out" >"$work/configure.log" 2>&1 || {
    cat "$work/configure.log"
    echo "FAIL: the dist tree does not configure with only cmake and make"
    exit 1
}
PATH="$work/bin" cmake --build "$work/tree" --target dist >"$work/build.log" 2>&1 || {
    cat "$work/build.log"
    echo "FAIL: the dist target does not pack with only cmake and make"
    exit 1
}
if grep -q "CMAKE_C_COMPILER:" "$work/tree/CMakeCache.txt"; then
    echo "FAIL: the dist tree looked for a C compiler"
    exit 1
fi
tarball=$(ls "$work"/out/*.tar.gz)
for f in docs/firmware-quickstart.md examples/bare-metal/Makefile \
         examples/bare-metal/example_config.h examples/bare-metal/example_port.c \
         include/ctxc/ctxc_manifest.h src/ctxc_prompts.c; do
    if ! tar tzf "$tarball" | grep -q "/$f\$"; then
        echo "FAIL: $f is not in $tarball"
        exit 1
    fi
done
if grep -q "repository's README" "$work"/out/*/README.md; then
    echo "FAIL: the dist README sends the reader to the repository"
    exit 1
fi
echo "ok: $tarball packed with only cmake and make on PATH"

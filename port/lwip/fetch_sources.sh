#!/bin/sh
# fetch_sources.sh DIR -- lwIP 2.1.3 and mbedTLS 2.28 as Debian ships them,
# unpacked into DIR (the build tree; never committed): DIR/lwip and
# DIR/mbedtls (symlinks to the unpacked lwip-2.1.3*/ and mbedtls-2.28*/).
#
# `apt-get source` with a private apt state under DIR/apt: one deb-src entry
# for this machine's Debian suite (VERSION_CODENAME of /etc/os-release,
# deb.debian.org, signed by the Debian archive keyring), its own lists and
# cache. The machine's apt configuration is neither read for sources nor
# changed, and no root is needed. Needs apt-get and dpkg-source (dpkg-dev;
# `make test` installs it). Does nothing when both trees are there.
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ -f "$dir/lwip/src/core/tcp.c" ] && [ -f "$dir/mbedtls/library/ssl_tls.c" ]; then
    echo "fetch_sources: $dir: lwip and mbedtls already there"
    exit 0
fi
for tool in apt-get dpkg-source; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "fetch_sources: $tool not found (Debian: apt-get install dpkg-dev; \`make test\` installs it)" >&2
        exit 2
    }
done
suite=""
if [ -r /etc/os-release ]; then
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
fi
if [ -z "$suite" ]; then
    echo "fetch_sources: no VERSION_CODENAME in /etc/os-release (not Debian?)" >&2
    exit 2
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
apt="$dir/apt"
rm -rf "$apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/src"
echo "deb-src [signed-by=$keyring] http://deb.debian.org/debian $suite main" > "$apt/sources.list"
set -- -o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" \
    -o "Dir::State::Status=/var/lib/dpkg/status" -o Debug::NoLocking=1
if [ "$(id -u)" -eq 0 ]; then
    # apt drops to the _apt user for downloads; it could not write here
    set -- "$@" -o APT::Sandbox::User=root
fi
echo "fetch_sources: apt-get source lwip mbedtls ($suite, deb.debian.org) into $dir"
apt-get -q "$@" update >"$apt/update.log" 2>&1 || {
    cat "$apt/update.log" >&2
    echo "fetch_sources: apt-get update failed (network? see above)" >&2
    exit 1
}
(cd "$apt/src" && apt-get -q "$@" source lwip mbedtls) >"$apt/source.log" 2>&1 || {
    cat "$apt/source.log" >&2
    echo "fetch_sources: apt-get source lwip mbedtls failed (see above)" >&2
    exit 1
}
lw=$(ls -d "$apt"/src/lwip-2.1.3*/ 2>/dev/null | head -n 1)
mb=$(ls -d "$apt"/src/mbedtls-2.28*/ 2>/dev/null | head -n 1)
if [ -z "$lw" ] || [ -z "$mb" ]; then
    echo "fetch_sources: Debian $suite does not ship lwIP 2.1.3 and mbedTLS 2.28:" \
        "$(ls "$apt/src" | grep -v '\.' | tr '\n' ' ')" >&2
    exit 1
fi
rm -rf "$dir/lwip" "$dir/mbedtls"
mv "$lw" "$dir/$(basename "$lw")"
mv "$mb" "$dir/$(basename "$mb")"
ln -s "$(basename "$lw")" "$dir/lwip"
ln -s "$(basename "$mb")" "$dir/mbedtls"
echo "fetch_sources: $dir/$(basename "$lw") $dir/$(basename "$mb")"

#!/usr/bin/env bash
# Builds the C library and lays it out for C (and any C FFI) users:
#   PREFIX/include/mdoc_respond.h
#   PREFIX/lib/libmdocrespond.so     (run path to the Swift runtime of the toolchain that built it)
#   PREFIX/lib/libmdocrespond.a      (needs the Swift runtime at link time: link with swiftc)
#   PREFIX/lib/pkgconfig/mdocrespond.pc
#   usage: scripts/build-c.sh [--debug] [PREFIX]     (default PREFIX: .build/c; release build unless --debug)
# Then: cc app.c $(PKG_CONFIG_PATH=PREFIX/lib/pkgconfig pkg-config --cflags --libs mdocrespond)
set -euo pipefail
cd "$(dirname "$0")/.."
config=release
if [ "${1:-}" = "--debug" ]; then config=debug; shift; fi
prefix=${1:-.build/c}
mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
prefix=$(cd "$prefix" && pwd)
swift build -c "$config" -j 2 --product mdocrespond >&2
swift build -c "$config" -j 2 --product mdocrespond-static >&2
bin=$(swift build -c "$config" --show-bin-path)
install -m 0644 include/mdoc_respond.h "$prefix/include/"
install -m 0755 "$bin/libmdocrespond.so" "$prefix/lib/"
install -m 0644 "$bin/libmdocrespond-static.a" "$prefix/lib/libmdocrespond.a"
runtime=$(dirname "$(dirname "$(command -v swift)")")/lib/swift/linux
version=$(sed -nE 's/^version = "([^"]+)"/\1/p' python/pyproject.toml)
abi=$(sed -nE 's/^#define MDOC_RESPOND_ABI_VERSION ([0-9]+).*/\1/p' include/mdoc_respond.h)
cat > "$prefix/lib/pkgconfig/mdocrespond.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: mdocrespond
Description: mdoc-respond: the wallet side of presenting an mdoc through the W3C Digital Credentials API (C ABI $abi)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lmdocrespond -Wl,-rpath,\${libdir} -Wl,-rpath,$runtime
PC
echo "$prefix"

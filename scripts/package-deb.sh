#!/usr/bin/env bash
# The Debian packages, split as Debian policy separates them (scripts/package.sh calls this):
#   libmdocrespondABI   /usr/lib/<triplet>/libmdocrespond.so.ABI (the C ABI, the Swift runtime inside),
#                       a shlibs file and an ldconfig trigger
#   libmdocrespond-dev  the header and consent-model schema, the link-time name, the pkg-config file
#   mdoc-respond        the CLI (the Swift runtime and libstdc++ inside), its man page (made from its
#                       own --help), the built-in test data (test keys, published on purpose)
# Each package carries the Swift runtime at most once (linked statically: Debian has no Swift runtime
# package to share); the CLI does not need the library. Every package has a DEP-5 copyright file and
# a changelog; `lintian` (Debian's) reports no error (scripts/dist-check.sh).
#   usage: scripts/package-deb.sh LIBRARY DIST      (LIBRARY: the built libmdocrespond.so.ABI;
#                                                    DIST: where dist/mdoc-respond is and the .debs go)
set -euo pipefail
cd "$(dirname "$0")/.."
library=$1
dist=$2
version=$(tr -d '[:space:]' < VERSION)
abi=$(sed -nE 's/^#define MDOC_RESPOND_ABI_VERSION ([0-9]+).*/\1/p' include/mdoc_respond.h)
soname="libmdocrespond.so.$abi"
libpkg="libmdocrespond$abi"
triplet=x86_64-linux-gnu
maintainer="mdoc-respond developers <maintainers@mdoc-respond.invalid>"
work=$(mktemp -d "${TMPDIR:-/tmp}/mdoc-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Dates from the commit, so the same tree gives the same packages.
stamp=$(git log -1 --format=%ct 2>/dev/null || date +%s)
# What the binaries need of the system, in Debian 12's names with Debian 13's (t64) alternatives.
glibc=$(objdump -T "$dist/mdoc-respond" "$library" | grep -oE 'GLIBC_[0-9]+\.[0-9]+' | sed 's/GLIBC_//' | sort -V | tail -1)
depends_common="libc6 (>= $glibc), libssl3 (>= 3.0.0) | libssl3t64, libzstd1"

docs() {   # $1: package root, $2: package name, $3: copyright "Files:" stanza for its binaries
    local doc="$1/usr/share/doc/$2"
    mkdir -p "$doc"
    {
        echo "$2 ($version) unstable; urgency=medium"
        echo
        echo "  * Release $version. The project's history is its git log."
        echo
        echo " -- $maintainer  $(date -u -R -d "@$stamp")"
    } | gzip -9n > "$doc/changelog.gz"
    cat > "$doc/copyright" <<TXT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: mdoc-respond
Comment: Loaded from the system at run time, not shipped: OpenSSL 3 (Apache-2.0), Zstandard
 (BSD-3-Clause), glibc, libgcc_s, libstdc++ (the library), a PKCS#11 module the holder configures.
 Installed separately (scripts/zk-setup.sh in the source) and loaded when present: the ISRG Longfellow
 prover (MPL-2.0) and the Longfellow circuits (Apache-2.0); not part of these packages.

Files: *
Copyright: 2026 the mdoc-respond developers
License: Apache-2.0
$3
License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
 compliance with the License. Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF
 ANY KIND, either express or implied. See the License for the specific language governing permissions
 and limitations under the License.
 .
 On Debian systems, the full text of the Apache License, Version 2.0 can be found in
 /usr/share/common-licenses/Apache-2.0.
TXT
}

control() {   # $1: package root; the control fields on stdin (Installed-Size added here)
    local size
    size=$(du -sk --exclude=DEBIAN "$1" | cut -f1)
    mkdir -p "$1/DEBIAN"
    { cat; echo "Installed-Size: $size"; } > "$1/DEBIAN/control"
    (cd "$1" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$1/DEBIAN/md5sums"
}

build() {   # $1: package root, $2: package name
    find "$1" -type d -exec chmod 0755 {} +
    dpkg-deb --root-owner-group -Zxz --build "$1" "$dist/${2}_${version}_amd64.deb" > /dev/null
}

runtime_stanza="
Files: usr/lib/$triplet/$soname usr/bin/mdoc-respond
Copyright: 2026 the mdoc-respond developers
 Apple Inc. and the Swift project authors (the Swift runtime, linked in)
 Free Software Foundation, Inc. (libstdc++, linked into usr/bin/mdoc-respond)
License: Apache-2.0 and Apache-2.0 with the Swift Runtime Library Exception and GPL-3+ with GCC-exception-3.1
Comment: The Swift runtime's exception and the GCC Runtime Library Exception permit linking these
 libraries into a program under any licence.
"

# The runtime library.
lib="$work/$libpkg"
mkdir -p "$lib/usr/lib/$triplet"
install -m 0644 "$library" "$lib/usr/lib/$triplet/$soname"
docs "$lib" "$libpkg" "$runtime_stanza"
control "$lib" <<CTL
Package: $libpkg
Source: mdoc-respond
Version: $version
Architecture: amd64
Multi-Arch: same
Maintainer: $maintainer
Depends: $depends_common, libstdc++6 (>= 12), libgcc-s1
Section: libs
Priority: optional
Description: wallet side of presenting a mobile document (C library)
 Answers W3C Digital Credentials API requests for mdocs (mDL, EU PID, age
 attestation): ISO/IEC 18013-7 Annex C and OpenID4VP 1.0 over the DC API.
 .
 This package contains the shared library (C ABI $abi), the Swift runtime
 linked in.
CTL
echo "libmdocrespond $abi $libpkg (>= $version)" > "$lib/DEBIAN/shlibs"
{
    echo "$soname $libpkg #MINVER#"
    grep -oE '\bmdoc_[a-z_]+\(' include/mdoc_respond.h | sort -u | tr -d '(' | sed "s/^/ /; s/\$/@Base $version/"
} > "$lib/DEBIAN/symbols"
echo "activate-noawait ldconfig" > "$lib/DEBIAN/triggers"
chmod 0644 "$lib/DEBIAN/shlibs" "$lib/DEBIAN/symbols" "$lib/DEBIAN/triggers"
build "$lib" "$libpkg"

# The development files.
dev="$work/libmdocrespond-dev"
mkdir -p "$dev/usr/include" "$dev/usr/lib/$triplet/pkgconfig"
install -m 0644 include/mdoc_respond.h include/mdoc_consent_model.schema.json "$dev/usr/include/"
ln -s "$soname" "$dev/usr/lib/$triplet/libmdocrespond.so"
cat > "$dev/usr/lib/$triplet/pkgconfig/mdocrespond.pc" <<PC
prefix=/usr
includedir=\${prefix}/include
libdir=\${prefix}/lib/$triplet

Name: mdocrespond
Description: mdoc-respond: the wallet side of presenting an mdoc through the W3C Digital Credentials API (C ABI $abi)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lmdocrespond
PC
docs "$dev" libmdocrespond-dev ""
control "$dev" <<CTL
Package: libmdocrespond-dev
Source: mdoc-respond
Version: $version
Architecture: amd64
Multi-Arch: same
Maintainer: $maintainer
Depends: $libpkg (= $version)
Section: libdevel
Priority: optional
Description: wallet side of presenting a mobile document (development files)
 Answers W3C Digital Credentials API requests for mdocs (mDL, EU PID, age
 attestation): ISO/IEC 18013-7 Annex C and OpenID4VP 1.0 over the DC API.
 .
 This package contains the C header, the consent model's JSON schema and the
 pkg-config file.
CTL
build "$dev" libmdocrespond-dev

# The CLI, its man page and the built-in test data.
cli="$work/mdoc-respond"
mkdir -p "$cli/usr/bin" "$cli/usr/share/mdoc-respond" "$cli/usr/share/man/man1"
install -m 0755 "$dist/mdoc-respond" "$cli/usr/bin/"
cp -r TestVectors "$cli/usr/share/mdoc-respond/test-vectors"
find "$cli/usr/share/mdoc-respond" -type f -exec chmod 0644 {} +
# The zero-knowledge installer the CLI's advice names, with the engine's circuit table beside it.
install -m 0755 scripts/zk-setup.sh "$cli/usr/share/mdoc-respond/zk-setup.sh"
scripts/zk-setup.sh --table > "$cli/usr/share/mdoc-respond/zk-circuits.txt"
chmod 0644 "$cli/usr/share/mdoc-respond/zk-circuits.txt"
scripts/manpage.sh "$dist/mdoc-respond" "$version" "$stamp" | gzip -9n > "$cli/usr/share/man/man1/mdoc-respond.1.gz"
docs "$cli" mdoc-respond "$runtime_stanza"
install -m 0644 NOTICE "$cli/usr/share/doc/mdoc-respond/NOTICE"
control "$cli" <<CTL
Package: mdoc-respond
Version: $version
Architecture: amd64
Maintainer: $maintainer
Depends: $depends_common
Section: utils
Priority: optional
Description: wallet side of presenting a mobile document (command-line tool)
 Answers W3C Digital Credentials API requests for mdocs (mDL, EU PID, age
 attestation): ISO/IEC 18013-7 Annex C and OpenID4VP 1.0 over the DC API.
 .
 This package contains mdoc-respond, which answers, inspects and builds
 requests, manages credential contexts and runs a demonstration on built-in
 test data.
CTL
build "$cli" mdoc-respond

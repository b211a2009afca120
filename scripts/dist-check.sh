#!/usr/bin/env bash
# Checks the dist/ artifacts (scripts/package.sh) the way a server without Swift runs them: in a mount
# namespace with an empty tmpfs over the Swift toolchain's root, so nothing of the toolchain can be
# found. There: the CLI's demo from another directory; the README's C example compiled with cc against
# the unpacked SDK through pkg-config (no RUNPATH in the program; run with LD_LIBRARY_PATH); the wheel
# (its manylinux tag confirmed by the pinned auditwheel) installed into a fresh venv running the
# README's Python example; the three .debs unpacked with dpkg -x, their CLI, and lintian (Debian's:
# no error or warning). No artifact may need libcbor. Every answer is opened and verified by the
# independent peer (Tests/interop/dist_peer.py).
#   usage: scripts/dist-check.sh      (root, or a user allowed to create mount namespaces; runs on its
#                                      own after scripts/package.sh: it makes the peers' venv itself)
# Prints "dist artifacts: N passed, M failed"; exits 4 when namespaces are not allowed here.
set -euo pipefail
cd "$(dirname "$0")/.."
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
version=$(tr -d '[:space:]' < VERSION)
if [ "${1:-}" != "--inside" ]; then
    # Outside the namespace, while the toolchain and the network are there: the peers' venv, the
    # wheel's tag, and lintian.
    [ -n "${MDOC_INTEROP_PYTHON:-}" ] || MDOC_INTEROP_PYTHON=$(scripts/interop-venv.sh)
    export MDOC_INTEROP_PYTHON
    wheel=(dist/mdoc_respond-"$version"-py3-none-manylinux_*_x86_64.whl)
    [ -f "${wheel[0]}" ] || { echo "dist: no manylinux wheel in dist/ (scripts/package.sh)" >&2; exit 1; }
    show=$(.build/package-venv/bin/auditwheel show "${wheel[0]}")
    tag=$(sed -nE 's/.*platform tag: "(manylinux_[0-9]+_[0-9]+_x86_64)".*/\1/p' <<< "$(tr '\n' ' ' <<< "$show")")
    if [ -z "$tag" ] || [[ "${wheel[0]}" != *"$tag.whl" ]]; then
        echo "dist: auditwheel does not confirm the wheel's tag:" >&2
        echo "$show" >&2
        exit 1
    fi
    echo "dist: ${wheel[0]} is $tag (auditwheel show)"
    if ! command -v lintian > /dev/null; then
        echo "dist: lintian is missing (scripts/bootstrap.sh installs it)" >&2
        exit 1
    fi
    lintian --no-cfg --fail-on error,warning dist/*.deb 2> >(grep -v 'root privileges' >&2) \
        || { echo "dist: lintian reports errors or warnings" >&2; exit 1; }
    echo "dist: lintian: no error or warning on $(ls dist/*.deb | wc -l) packages"
fi
python=$MDOC_INTEROP_PYTHON
if [ "${1:-}" != "--inside" ]; then
    if ! unshare -m true 2>/dev/null; then
        echo "dist-check: mount namespaces are not allowed here; the artifacts were not checked" >&2
        exit 4
    fi
    exec unshare -m bash -c "mount -t tmpfs -o size=1m tmpfs '$toolchain' && exec '$0' --inside"
fi
# Inside: the toolchain is gone.
if [ -e "$toolchain/lib/swift/linux/libswiftCore.so" ] || command -v swiftc >/dev/null 2>&1; then
    echo "dist-check: the toolchain is still visible" >&2
    exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/mdoc-dist.XXXXXX")
trap 'rm -rf "$work"' EXIT
repo=$PWD
cp -r TestVectors/context "$work/context"
chmod 700 "$work/context" "$work/context/keys"
chmod 600 "$work/context/context.cbor" "$work/context/keys/"*

# The CLI: the demo (Annex C, OpenID4VP and the zero-knowledge leg) from an unrelated directory. When
# it was linked with libstdc++ inside (scripts/build-static-cli.sh), the system's libstdc++ is hidden
# from it (/dev/null mounted over the file) for the run: it must not need one.
# (No reader here stops early: under pipefail a writer killed by SIGPIPE would end the script silently.)
hidden=""
needed=$(readelf -d dist/mdoc-respond)
# Nothing loaded from beside the binary: no RPATH or RUNPATH ($ORIGIN would let a library placed next
# to it run on --help).
if grep -qE '\((RPATH|RUNPATH)\)' <<< "$needed"; then
    echo "dist: dist/mdoc-respond carries an RPATH/RUNPATH:" >&2
    grep -E '\((RPATH|RUNPATH)\)' <<< "$needed" >&2
    exit 1
fi
if ! grep -q 'NEEDED.*libstdc++' <<< "$needed"; then
    hidden=$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/ && !found { print $NF; found = 1 }')
    [ -n "$hidden" ] && mount --bind /dev/null "$hidden"
fi
(cd "$work" && "$repo/dist/mdoc-respond" demo > "$work/demo.log" 2>&1) || { cat "$work/demo.log" >&2; exit 1; }
[ -n "$hidden" ] && umount "$hidden"
grep -q "age_over_18 = true" "$work/demo.log" || grep -q "zero-knowledge.*skipped" "$work/demo.log"
echo "dist: dist/mdoc-respond demo ok from $work$([ -n "$hidden" ] && echo " (without the system's libstdc++)")"

# The SDK: the README's C example, compiled through the unpacked SDK's pkg-config file.
tar -C "$work" -xzf "dist/mdoc-respond-sdk-$version-linux-x86_64.tar.gz"
sdk="$work/mdoc-respond-sdk-$version-linux-x86_64"
for f in "$repo/dist/mdoc-respond" "$sdk/lib/libmdocrespond.so"; do
    if readelf -d "$f" | grep -E 'NEEDED.*libcbor'; then
        echo "dist: $f needs libcbor" >&2
        exit 1
    fi
done
if readelf -d "$sdk/lib/libmdocrespond.so" | grep -qE '\((RPATH|RUNPATH)\)'; then
    echo "dist: the SDK's libmdocrespond.so carries an RPATH/RUNPATH" >&2
    exit 1
fi
python3 - "$work" <<'PY'
import re, sys
text = open("README.md").read()
for lang, first, name in (("c", "/* example.c", "example.c"), ("python", "# example.py", "example.py")):
    (block,) = [b for b in re.findall(r"```" + lang + r"\n(.*?)```", text, re.S) if b.startswith(first)]
    open(f"{sys.argv[1]}/{name}", "w").write(block)
PY
# shellcheck disable=SC2046
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror "$work/example.c" \
    $(PKG_CONFIG_PATH="$sdk/lib/pkgconfig" pkg-config --cflags --libs mdocrespond) -o "$work/example"
if readelf -d "$work/example" | grep -qE '\((RPATH|RUNPATH)\)'; then
    echo "dist: the SDK's pkg-config file wrote an RPATH/RUNPATH into the program" >&2
    exit 1
fi

# The wheel, into a fresh venv, offline (the library is inside it).
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-index \
    dist/mdoc_respond-"$version"-py3-none-manylinux_*_x86_64.whl

# The .debs, unpacked into one root; the README's C example built against the development package's
# header and library too.
for deb in dist/*.deb; do dpkg -x "$deb" "$work/deb"; done
lib="$work/deb/usr/lib/x86_64-linux-gnu"
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror "$work/example.c" -I"$work/deb/usr/include" -L"$lib" -lmdocrespond \
    -o "$work/deb-example"

"$python" Tests/interop/dist_peer.py --vectors TestVectors \
    "cli=sh -c 'exec \"$repo/dist/mdoc-respond\" respond --request \"\$0\" --origin \"\$1\"'" \
    "sdk-example=env LD_LIBRARY_PATH=$sdk/lib $work/example $work/context" \
    "wheel-example=$work/venv/bin/python $work/example.py $work/context" \
    "deb-example=env LD_LIBRARY_PATH=$lib $work/deb-example $work/context" \
    "deb=sh -c 'exec \"$work/deb/usr/bin/mdoc-respond\" respond --request \"\$0\" --origin \"\$1\"'"

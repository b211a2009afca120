#!/usr/bin/env bash
# Checks the dist/ artifacts (scripts/package.sh) the way a server without Swift runs them: in a mount
# namespace with an empty tmpfs over the Swift toolchain's root, so nothing of the toolchain can be
# found. There: the CLI's demo from another directory; the README's C example compiled with cc against
# the unpacked SDK through pkg-config; the wheel installed into a fresh venv running the README's Python
# example; the .deb unpacked with dpkg -x and its CLI. Every answer is opened and verified by the
# independent peer (Tests/interop/dist_peer.py).
#   usage: scripts/dist-check.sh      (root, or a user allowed to create mount namespaces)
# Prints "dist artifacts: N passed, M failed"; exits 4 when namespaces are not allowed here.
set -euo pipefail
cd "$(dirname "$0")/.."
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
version=$(tr -d '[:space:]' < VERSION)
python=${MDOC_INTEROP_PYTHON:-python3}
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

# The wheel, into a fresh venv, offline (the library is inside it).
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-index \
    "dist/mdoc_respond-$version-py3-none-linux_x86_64.whl"

# The .deb, unpacked.
dpkg -x "dist/mdoc-respond_${version}_amd64.deb" "$work/deb"

"$python" Tests/interop/dist_peer.py --vectors TestVectors \
    "cli=sh -c 'exec \"$repo/dist/mdoc-respond\" respond --request \"\$0\" --origin \"\$1\"'" \
    "sdk-example=$work/example $work/context" \
    "wheel-example=$work/venv/bin/python $work/example.py $work/context" \
    "deb=sh -c 'exec \"$work/deb/usr/bin/mdoc-respond\" respond --request \"\$0\" --origin \"\$1\"'"

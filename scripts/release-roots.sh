#!/usr/bin/env bash
# Release-time check (not CI: it needs root, debootstrap and a few minutes per root): the dist/ artifacts
# (scripts/package.sh) installed the way a stranger would, in minimal Debian 12 (bookworm) and Debian 13
# (trixie) roots made with debootstrap from the configured Debian mirror, with no Swift toolchain and no
# -dev package of any dependency:
#   - the three .debs installed with apt (which resolves their dependencies from the mirror);
#   - `mdoc-respond --version`, `context init --test-data` (a private copy of the test context) and the
#     demo (Annex C, OpenID4VP; the zero-knowledge leg reports the prover missing);
#   - the wheel installed with pip into a venv, and the README's Python example;
#   - the README's C example compiled against libmdocrespond-dev through pkg-config, in the root, with
#     the root's cc; and against the unpacked SDK through its pkg-config file (no RUNPATH written);
#   - the standalone CLI (dist/mdoc-respond and its data) from /opt;
#   - answers of the installed CLI, the standalone CLI, the wheel and both C builds verified by the
#     independent peer
#     (Tests/interop/dist_peer.py, run outside the root with the pinned peers).
# Prints a transcript; exits non-zero at the first failure.
#   usage: scripts/release-roots.sh [--keep] [SUITE...]     (default suites: bookworm trixie; the roots
#                                                             live in /var/tmp/mdoc-roots/SUITE; --keep
#                                                             reuses a root made before)
set -euo pipefail
cd "$(dirname "$0")/.."
keep=0
if [ "${1:-}" = "--keep" ]; then keep=1; shift; fi
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(bookworm trixie)
[ "$(id -u)" -eq 0 ] || { echo "release-roots: needs root (debootstrap, chroot)" >&2; exit 3; }
command -v debootstrap > /dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap > /dev/null
mirror=$(sed -nE 's/^URIs: (http[^ ]*debian)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
version=$(tr -d '[:space:]' < VERSION)
wheel=(dist/mdoc_respond-"$version"-py3-none-manylinux_*_x86_64.whl)
sdk=mdoc-respond-sdk-$version-linux-x86_64
for f in dist/mdoc-respond_"$version"_amd64.deb dist/libmdocrespond*_"$version"_amd64.deb "${wheel[0]}" \
    "dist/$sdk.tar.gz" dist/mdoc-respond; do
    [ -f "$f" ] || { echo "release-roots: $f is missing (scripts/package.sh)" >&2; exit 1; }
done
python=$(scripts/interop-venv.sh)
# Run as root: nothing is written under a path another user could have prepared. The examples go to a
# fresh private directory; the roots' directory must be root's own real directory (not a symlink).
examples=$(mktemp -d "${TMPDIR:-/tmp}/mdoc-release-examples.XXXXXX")
roots=/var/tmp/mdoc-roots
trap 'rm -rf "$examples"' EXIT
if [ -e "$roots" ] || [ -L "$roots" ]; then
    if [ -L "$roots" ] || [ ! -d "$roots" ] || [ "$(stat -c %u "$roots")" != 0 ]; then
        echo "release-roots: $roots is not root's own directory; remove it first" >&2
        exit 1
    fi
else
    mkdir -m 0700 "$roots"
fi
python3 - "$examples" <<'PY'
import os, re, sys
os.makedirs(sys.argv[1], exist_ok=True)
text = open("README.md").read()
for lang, first, name in (("c", "/* example.c", "example.c"), ("python", "# example.py", "example.py")):
    (block,) = [b for b in re.findall(r"```" + lang + r"\n(.*?)```", text, re.S) if b.startswith(first)]
    open(f"{sys.argv[1]}/{name}", "w").write(block)
PY

step() { printf '\n[%s] $ %s\n' "$suite" "$*"; }
for suite in "${suites[@]}"; do
    root=$roots/$suite
    if [ $keep -eq 0 ] || [ ! -x "$root/usr/bin/apt-get" ]; then
        rm -rf "$root"
        mkdir -p "$root"
        step debootstrap --variant=minbase "$suite" "$root" "$mirror"
        debootstrap --variant=minbase "$suite" "$root" "$mirror" > "$roots/$suite.debootstrap.log" 2>&1 \
            || { tail -20 "$roots/$suite.debootstrap.log" >&2; exit 1; }
    fi
    mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
    mountpoint -q "$root/dev" || mount --bind /dev "$root/dev"
    trap 'umount "$root/proc" "$root/dev" 2>/dev/null || true; rm -rf "$examples"' EXIT
    in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
    rm -rf "$root/tmp/mdoc"
    mkdir -p "$root/tmp/mdoc"
    cp dist/*.deb "${wheel[0]}" "dist/$sdk.tar.gz" "$examples"/* "$root/tmp/mdoc/"
    rm -rf "$root/opt/mdoc-respond"
    mkdir -p "$root/opt/mdoc-respond"
    cp -r dist/mdoc-respond dist/mdoc-respond-data "$root/opt/mdoc-respond/"
    step "cat /etc/debian_version"
    in_root cat /etc/debian_version
    step "apt-get install ./mdoc-respond_${version}_amd64.deb ./libmdocrespond*.deb python3-venv gcc libc6-dev pkg-config ca-certificates"
    in_root sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/mdoc/*.deb python3-venv gcc libc6-dev pkg-config ca-certificates' \
        > "$roots/$suite.apt.log" 2>&1 || { tail -30 "$roots/$suite.apt.log" >&2; exit 1; }
    # The host's local certificate authorities (e.g. a TLS-inspecting egress), so the root reaches PyPI
    # as the host does; nothing else of the host goes in.
    if ls /usr/local/share/ca-certificates/*.crt > /dev/null 2>&1; then
        cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
        in_root update-ca-certificates > /dev/null 2>&1
    fi
    in_root dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\n' mdoc-respond 'libmdocrespond*' 'libssl3*' \
        libzstd1 python3 | awk '$1 == "ii" { print $2, $3 }'
    step "dpkg -l '*-dev' (only libc6-dev for the C example, and ours); command -v swift"
    in_root dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' '*-dev' | awk '$1 == "ii" { printf "%s ", $2 }'
    echo
    if in_root sh -c 'command -v swift swiftc' ; then echo "release-roots: a Swift toolchain is in the root" >&2; exit 1; fi
    echo "(no swift, no swiftc)"
    step "mdoc-respond --version"
    in_root mdoc-respond --version
    step "mdoc-respond context init --test-data --context /tmp/ctx"
    rm -rf "$root/tmp/ctx"
    in_root mdoc-respond context init --test-data --context /tmp/ctx
    step "/usr/share/mdoc-respond/zk-setup.sh (the installer the CLI's advice names; pip from the venv below)"
    in_root sh -c 'rm -rf /tmp/venv && python3 -m venv /tmp/venv && PATH=/tmp/venv/bin:$PATH /usr/share/mdoc-respond/zk-setup.sh'
    step "mdoc-respond demo"
    in_root sh -c 'cd /tmp && mdoc-respond demo' > "$roots/$suite.demo.log" 2>&1 \
        || { cat "$roots/$suite.demo.log" >&2; exit 1; }
    grep -E "verified|skipped|age_over_18" "$roots/$suite.demo.log" | head -12
    step "/tmp/venv/bin/pip install --no-index /tmp/mdoc/$(basename "${wheel[0]}")"
    in_root sh -c "/tmp/venv/bin/pip install -q --no-index /tmp/mdoc/$(basename "${wheel[0]}") && /tmp/venv/bin/python -c 'import mdoc_respond; print(\"mdoc_respond\", mdoc_respond.__version__)'"
    step "cc example.c \$(pkg-config --cflags --libs mdocrespond)   (libmdocrespond-dev)"
    in_root sh -c 'cd /tmp/mdoc && cc -std=c11 -Wall -Wextra -Werror example.c $(pkg-config --cflags --libs mdocrespond) -o example && ls -l example'
    step "tar xzf $sdk.tar.gz; cc example.c \$(PKG_CONFIG_PATH=SDK/lib/pkgconfig pkg-config --cflags --libs mdocrespond)"
    in_root sh -c "cd /tmp/mdoc && rm -rf $sdk && tar xzf $sdk.tar.gz && cc -std=c11 -Wall -Wextra -Werror example.c \
        \$(PKG_CONFIG_PATH=$sdk/lib/pkgconfig pkg-config --cflags --libs mdocrespond) -o sdk-example \
        && if readelf -d sdk-example 2>/dev/null | grep -E 'RPATH|RUNPATH'; then exit 1; fi && echo 'no RUNPATH' \
        && LD_LIBRARY_PATH=$sdk/lib ldd sdk-example | grep mdocrespond"
    step "/opt/mdoc-respond/mdoc-respond --version   (the standalone CLI)"
    in_root /opt/mdoc-respond/mdoc-respond --version
    step "dist_peer.py: answers of the .deb CLI, the wheel, both C builds and the standalone CLI, verified outside the root"
    req="$root/tmp/mdoc/request.json"
    "$python" Tests/interop/dist_peer.py --vectors TestVectors \
        "deb-cli=sh -c 'cp \"\$0\" $req && exec chroot $root /usr/bin/mdoc-respond respond --context /tmp/ctx --request /tmp/mdoc/request.json --origin \"\$1\"'" \
        "wheel-example=sh -c 'cp \"\$0\" $req && exec chroot $root /tmp/venv/bin/python /tmp/mdoc/example.py /tmp/ctx /tmp/mdoc/request.json \"\$1\"'" \
        "deb-c-example=sh -c 'cp \"\$0\" $req && exec chroot $root /tmp/mdoc/example /tmp/ctx /tmp/mdoc/request.json \"\$1\"'" \
        "sdk-example=sh -c 'cp \"\$0\" $req && exec chroot $root /usr/bin/env LD_LIBRARY_PATH=/tmp/mdoc/$sdk/lib /tmp/mdoc/sdk-example /tmp/ctx /tmp/mdoc/request.json \"\$1\"'" \
        "standalone-cli=sh -c 'cp \"\$0\" $req && exec chroot $root /opt/mdoc-respond/mdoc-respond respond --context /tmp/ctx --request /tmp/mdoc/request.json --origin \"\$1\"'"
    umount "$root/proc" "$root/dev"
    trap 'rm -rf "$examples"' EXIT
done

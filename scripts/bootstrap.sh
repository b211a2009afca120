#!/usr/bin/env bash
# Installs the Debian packages the build needs, if any are missing. Idempotent; needs root (or sudo).
set -euo pipefail
missing=()
for pkg in libcbor-dev libssl-dev pkg-config libp11-kit-dev softhsm2 p11-kit-modules libzstd-dev valgrind lintian; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
    echo "bootstrap: installing ${missing[*]}" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# The interop tests need python3 with venv support (a pinned pyhpke peer is installed from PyPI).
if ! python3 -c "import venv, ensurepip" >/dev/null 2>&1; then
    echo "bootstrap: installing python3-venv" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3 python3-venv >/dev/null
fi
command -v swift >/dev/null || { echo "bootstrap: the Swift toolchain is not on PATH" >&2; exit 1; }

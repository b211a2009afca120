#!/usr/bin/env bash
# Makes (once) .build/interop-venv with the pinned independent peers from PyPI
# (Tests/interop/requirements.txt: pyhpke, cryptography, cbor2, pymdoccbor, jwcrypto, pylongfellow, ...)
# and prints its python. Used by scripts/test.sh and scripts/dist-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/interop-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import pyhpke, cbor2, pymdoccbor, cryptography, jwcrypto, pytest, mypy, jsonschema, pylongfellow" 2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/interop/requirements.txt >&2
fi
echo "$PWD/$venv/bin/python"

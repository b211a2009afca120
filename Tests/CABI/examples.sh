#!/usr/bin/env bash
# Extracts the README's C and Python examples (the ```c block starting "/* example.c" and the ```python
# block starting "# example.py") exactly as printed, compiles the C one against the library as
# scripts/build-c.sh lays it out (through its pkg-config file), installs the Python binding as the
# README says (pip install ./python, leaving the tree as it was), and runs both on a private copy of
# the built-in test context.
#   usage: Tests/CABI/examples.sh            (prints "example ok: NAME" per example)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d "${TMPDIR:-/tmp}/mdoc-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import re, sys
text = open("README.md").read()
for lang, first, name in (("c", "/* example.c", "example.c"), ("python", "# example.py", "example.py")):
    blocks = [b for b in re.findall(r"```" + lang + r"\n(.*?)```", text, re.S) if b.startswith(first)]
    if len(blocks) != 1:
        sys.exit(f"README: expected one {lang} block starting {first!r}, found {len(blocks)}")
    open(f"{sys.argv[1]}/{name}", "w").write(blocks[0])
PY
cp -r TestVectors/context "$work/context"
chmod 700 "$work/context" "$work/context/keys"
chmod 600 "$work/context/context.cbor" "$work/context/keys/"*
request=TestVectors/requests/mdl-digitalRequestList-v1.0-none.json
origin=https://verifier.example
# Laid out by scripts/build-c.sh (debug build) and compiled through its pkg-config file, as the README says.
dist=$(scripts/build-c.sh --debug "$work/dist" 2> "$work/build.log") || { cat "$work/build.log" >&2; exit 1; }
# shellcheck disable=SC2046
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror "$work/example.c" \
    $(PKG_CONFIG_PATH="$dist/lib/pkgconfig" pkg-config --cflags --libs mdocrespond) -o "$work/example"
"$work/example" "$work/context" "$request" "$origin" > "$work/c.out" 2> "$work/c.err" || { cat "$work/c.err" >&2; exit 1; }
grep -q '"org.iso.18013.5.1/family_name"' "$work/c.err" && [ -s "$work/c.out" ]
echo "example ok: README C example ($(wc -c < "$work/c.out") response bytes)"
# The Python one as the README installs it: `pip install ./python` into a fresh venv (offline: the
# in-tree backend needs nothing from PyPI; it takes the library just built), which must leave the
# source tree as it was.
before=$(git status --porcelain --ignored python 2>/dev/null || true)
python3 -m venv "$work/venv"
MDOC_RESPOND_LIBRARY="$dist/lib/libmdocrespond.so" "$work/venv/bin/pip" install -q --no-index \
    --disable-pip-version-check ./python > "$work/pip.log" 2>&1 || { cat "$work/pip.log" >&2; exit 1; }
after=$(git status --porcelain --ignored python 2>/dev/null || true)
[ "$before" = "$after" ] || { echo "pip install ./python changed the tree: $after" >&2; exit 1; }
(cd "$work" && "$work/venv/bin/python" "$work/example.py" "$work/context" "$OLDPWD/$request" "$origin") \
    > "$work/py.out" 2> "$work/py.err" || { cat "$work/py.err" >&2; exit 1; }
grep -q 'org.iso.18013.5.1.mDL asks for' "$work/py.err" && [ -s "$work/py.out" ]
echo "example ok: README Python example ($(wc -c < "$work/py.out") response bytes)"

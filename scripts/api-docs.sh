#!/usr/bin/env bash
# Builds the API reference with the toolchain's own DocC from the package's symbol graphs (no package
# fetched, no plugin): one archive per library module, in .build/api-docs/MODULE.doccarchive (open with
# `docc preview`, or serve the static files of `docc process-archive transform-for-static-hosting`).
# Every public declaration's documentation is checked (--analyze): a warning (a parameter left
# undocumented, a documented parameter that does not exist, a broken symbol link) fails the build.
#   usage: scripts/api-docs.sh [MODULE...]      (default: every library module of Package.swift)
set -euo pipefail
cd "$(dirname "$0")/.."
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(DigitalCredentials Presentment AnnexC OpenID4VP DCAPIFraming AnnexCReader
    OpenID4VPReader MdocCBOR HPKE JOSE WebEncoding CryptoCore PKCS11 Longfellow)
# The dump exits non-zero on a fresh build tree for the test-discovery modules it cannot load (they are
# built only with the tests); what is checked is that every module documented here has a fresh graph.
mkdir -p .build
stamp=.build/api-docs-stamp
touch "$stamp"
swift package dump-symbol-graph --skip-synthesized-members > .build/api-docs-symbols.log 2>&1 || true
graphs=$(dirname "$(swift build --show-bin-path)")/symbolgraph
for m in "${modules[@]}"; do
    if [ ! "$graphs/$m.symbols.json" -nt "$stamp" ]; then
        grep -iE "error" .build/api-docs-symbols.log >&2 || true
        echo "api-docs: no symbol graph written for $m" >&2
        exit 1
    fi
done
out=.build/api-docs
work=$(mktemp -d "${TMPDIR:-/tmp}/mdoc-docc.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
warnings=0
for m in "${modules[@]}"; do
    mkdir -p "$work/$m"
    cp "$graphs/$m.symbols.json" "$work/$m/"
    cp "$graphs/$m"@*.symbols.json "$work/$m/" 2>/dev/null || true
    rm -rf "$out/$m.doccarchive"
    docc convert --additional-symbol-graph-dir "$work/$m" --fallback-display-name "$m" \
        --fallback-bundle-identifier "org.mdoc-respond.$m" --output-path "$out/$m.doccarchive" --analyze \
        > "$work/$m.log" 2>&1 || { cat "$work/$m.log" >&2; exit 1; }
    n=$(grep -c 'warning:' "$work/$m.log" || true)
    if [ "$n" -gt 0 ]; then
        grep -A3 'warning:' "$work/$m.log" >&2
        warnings=$((warnings + n))
    fi
    echo "api-docs: $m ($(find "$out/$m.doccarchive/data/documentation" -name '*.json' | wc -l) pages, $n warnings)"
done
echo "api-docs: ${#modules[@]} modules, $warnings warnings"
[ "$warnings" -eq 0 ]

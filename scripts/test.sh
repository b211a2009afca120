#!/usr/bin/env bash
# The whole test suite: unit and vector tests, then the benchmark harness in quick mode (which
# asserts nothing about time; it only proves the harness still runs). Ends with one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Pinned independent HPKE peer (pyhpke + cryptography from PyPI) for the interop test.
venv=.build/interop-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import pyhpke" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/interop/requirements.txt
fi
export MDOC_INTEROP_PYTHON="$PWD/$venv/bin/python"
swift build -j 2 --build-tests
set +e
swift test -j 2 --skip-build 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
swift build -c release -j 2 --product mdoc-bench
.build/release/mdoc-bench --quick
# Swift Testing's summary: "Test run with N tests in M suites passed|failed ... with K issues".
summary=$(grep -E "Test run with [0-9]+ tests?" "$log" | tail -1 || true)
total=$(sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p' <<<"$summary")
failed=$(grep -cE "^✘ Test .* failed" "$log" || true)
total=${total:-0}
echo "tests: $((total - failed)) passed, $failed failed"
exit "$status"

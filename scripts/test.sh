#!/usr/bin/env bash
# The whole test suite: unit and vector tests, then the benchmark harness in quick mode (which
# asserts nothing about time; it only proves the harness still runs). Ends with one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Pinned independent peers from PyPI (pyhpke, cryptography, cbor2, pymdoccbor) for the interop tests.
venv=.build/interop-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import pyhpke, cbor2, pymdoccbor, cryptography" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/interop/requirements.txt
fi
export MDOC_INTEROP_PYTHON="$PWD/$venv/bin/python"
swift build -j 2 --build-tests
set +e
swift test -j 2 --skip-build 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# The independent Annex C verifier drives the CLI and checks every response itself.
set +e
"$venv/bin/python" Tests/interop/annexc_peer.py --cli .build/debug/mdoc-respond --vectors TestVectors
peer=$?
set -e
# The whole suite again on optimized code (-O, what `mdoc-respond` and library users ship): catches
# behaviour that differs between debug and release builds. Its own scratch path, so the release
# products built below keep their flags.
set +e
swift build -c release --build-tests -Xswiftc -enable-testing --scratch-path .build/release-tests -j 2 > .build/release-tests.log 2>&1 \
    && swift test -c release --skip-build --scratch-path .build/release-tests -j 2 >> .build/release-tests.log 2>&1
optimized=$?
set -e
echo "optimized build: $( [ $optimized -eq 0 ] && echo passed || echo FAILED ) ($(grep -Eo 'Test run with [0-9]+ tests' .build/release-tests.log | tail -1))"
[ $optimized -eq 0 ] || tail -60 .build/release-tests.log >&2
# Sanitizers: the whole suite under AddressSanitizer (LeakSanitizer on; leaks inside the toolchain's
# Foundation are listed in Tests/lsan.supp; the stress test runs 2 000 accepts there) and the
# concurrency and stress tests (20 000 accepts from 2 threads) under ThreadSanitizer.
set +e
MDOC_STRESS_ACCEPTS=2000 LSAN_OPTIONS="suppressions=$PWD/Tests/lsan.supp" swift test --sanitize=address --scratch-path .build/asan -j 2 > .build/asan.log 2>&1
asan=$?
swift test --sanitize=thread --scratch-path .build/tsan -j 2 --filter "EndToEndTests/concurrency|StressTests|PooledContextTests|ContextStoreTests" > .build/tsan.log 2>&1
tsan=$?
set -e
grep -h "^stress:" .build/tsan.log | sed 's/^/TSan /' || true
echo "sanitizers: address $( [ $asan -eq 0 ] && echo clean || echo FAILED ) ($(grep -Eo 'Test run with [0-9]+ tests' .build/asan.log | tail -1)), thread $( [ $tsan -eq 0 ] && echo clean || echo FAILED )"
[ $asan -eq 0 ] || tail -60 .build/asan.log >&2
[ $tsan -eq 0 ] || tail -60 .build/tsan.log >&2
# Each fuzz target briefly under libFuzzer + AddressSanitizer (long runs: scripts/fuzz.sh 3600).
set +e
scripts/fuzz.sh "${MDOC_FUZZ_SECONDS:-30}"
fuzz=$?
set -e
swift build -c release -j 2 --product mdoc-bench
swift build -c release -j 2 --product mdoc-respond
.build/release/mdoc-bench --quick
# Swift Testing's summary: "Test run with N tests in M suites passed|failed ... with K issues".
summary=$(grep -E "Test run with [0-9]+ tests?" "$log" | tail -1 || true)
total=$(sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p' <<<"$summary")
failed=$(grep -cE "^✘ Test .* failed" "$log" || true)
total=${total:-0}
echo "tests: $((total - failed)) passed, $failed failed"
[ "$peer" -eq 0 ] || { echo "annexc interop failed" >&2; exit 1; }
[ "$fuzz" -eq 0 ] || { echo "fuzzing found a problem" >&2; exit 1; }
[ "$optimized" -eq 0 ] || { echo "the optimized test run failed" >&2; exit 1; }
[ "$asan" -eq 0 ] && [ "$tsan" -eq 0 ] || { echo "a sanitizer run failed" >&2; exit 1; }
exit "$status"

#!/usr/bin/env bash
# The whole test suite: unit and vector tests, then the benchmark harness in quick mode (which
# asserts nothing about time; it only proves the harness still runs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
swift build -j 2 --build-tests
swift test -j 2 --skip-build
swift build -c release -j 2 --product mdoc-bench
.build/release/mdoc-bench --quick

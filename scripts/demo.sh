#!/usr/bin/env bash
# The main job: builds the CLI and runs its demo on the built-in data.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/zk-setup.sh >&2
swift build -c release --product mdoc-respond -j 2 >&2
# The built-in test data of this checkout (the binary reads no path compiled into it).
MDOC_RESPOND_TESTVECTORS="$PWD/TestVectors" .build/release/mdoc-respond demo "$@"

#!/usr/bin/env bash
# Instruction counts per call (valgrind --tool=callgrind) for the operations of mdoc-bench --op,
# each as (run with N iterations − run with 0 iterations) / N, so setup cost cancels out.
# Repeatable on a noisy machine, unlike wall time. Usage: scripts/instructions.sh [N] [op ...]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}; shift || true
ops=("$@"); [ ${#ops[@]} -gt 0 ] || ops=(accept floor accept_reader_auth floor_reader_auth parse respond)
command -v valgrind >/dev/null || { echo "valgrind is required (apt-get install valgrind)" >&2; exit 3; }
swift build -c release --product mdoc-bench -j 2 >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}'; }
declare -A per
for op in "${ops[@]}"; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/$op.0" .build/release/mdoc-bench --op "$op" --iterations 0 >/dev/null 2>&1
    valgrind --tool=callgrind --callgrind-out-file="$tmp/$op.n" .build/release/mdoc-bench --op "$op" --iterations "$n" >/dev/null 2>&1
    per[$op]=$(( ($(total "$tmp/$op.n") - $(total "$tmp/$op.0")) / n ))
    echo "{\"bench\":\"instructions.$op\",\"instructions_per_call\":${per[$op]}}"
done
for pair in "accept floor" "accept_reader_auth floor_reader_auth"; do
    set -- $pair
    if [ -n "${per[$1]:-}" ] && [ -n "${per[$2]:-}" ]; then
        awk -v a="${per[$1]}" -v b="${per[$2]}" -v n="$1" 'BEGIN { printf "{\"bench\":\"instructions.%s\",\"ratio_to_floor\":%.3f}\n", n, a / b }'
    fi
done

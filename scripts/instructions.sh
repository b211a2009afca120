#!/usr/bin/env bash
# Instruction counts and malloc calls per call (valgrind --tool=callgrind) for mdoc-bench --op
# operations, each as (run with N iterations − run with 0 iterations) / N, so setup cancels out (every
# run makes one warm-up call first, so one-time runtime work cancels too: the steady state).
# Repeatable on a noisy machine, unlike wall time.
#   scripts/instructions.sh [N] [op ...]       print JSON lines
#   scripts/instructions.sh --check [N]        compare with benchmarks/instructions-baseline.json,
#                                              exit 1 when a figure is more than MDOC_PERF_TOLERANCE
#                                              (a fraction, default 0.03) above it (CI's gate)
#   scripts/instructions.sh --write-baseline [N]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=print
case "${1:-}" in --check) mode=check; shift ;; --write-baseline) mode=write; shift ;; esac
n=${1:-20}; shift || true
ops=("$@"); [ ${#ops[@]} -gt 0 ] || ops=(accept accept_ios floor accept_reader_auth floor_reader_auth parse respond oid4vp_accept oid4vp_floor oid4vp_accept_signed oid4vp_floor_signed oid4vp_parse facade_parse facade_accept facade_accept_store)
tolerance=${MDOC_PERF_TOLERANCE:-0.03}
command -v valgrind >/dev/null || { echo "valgrind is required (apt-get install valgrind)" >&2; exit 3; }
swift build -c release --product mdoc-bench -j 2 >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}'; }
mallocs() { python3 - "$1" <<'PY'
import re, sys
names = {}; cur = None; total = 0
for line in open(sys.argv[1]):
    m = re.match(r'cfn=\((\d+)\)(?: (.*))?$', line)
    if m:
        if m.group(2): names[m.group(1)] = m.group(2)
        cur = names.get(m.group(1)); continue
    m = re.match(r'fn=\((\d+)\)(?: (.*))?$', line)
    if m and m.group(2): names[m.group(1)] = m.group(2)
    m = re.match(r'calls=(\d+)', line)
    if m and cur == 'malloc': total += int(m.group(1))
print(total)
PY
}
declare -A per allocs
out=""
for op in "${ops[@]}"; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/$op.0" .build/release/mdoc-bench --op "$op" --iterations 0 >/dev/null 2>&1
    valgrind --tool=callgrind --callgrind-out-file="$tmp/$op.n" .build/release/mdoc-bench --op "$op" --iterations "$n" >/dev/null 2>&1
    per[$op]=$(( ($(total "$tmp/$op.n") - $(total "$tmp/$op.0")) / n ))
    allocs[$op]=$(( ($(mallocs "$tmp/$op.n") - $(mallocs "$tmp/$op.0")) / n ))
    line="{\"bench\":\"instructions.$op\",\"instructions_per_call\":${per[$op]},\"mallocs_per_call\":${allocs[$op]}}"
    echo "$line"
    out+="$line"$'\n'
done
for pair in "accept floor" "accept_ios floor" "accept_reader_auth floor_reader_auth" "oid4vp_accept oid4vp_floor" "oid4vp_accept_signed oid4vp_floor_signed" \
    "oid4vp_accept oid4vp_floor_encoded" "cold_accept_1 cold_floor_1" "cold_accept_4 cold_floor_4" \
    "cold_accept_32 cold_floor_32"; do
    set -- $pair
    if [ -n "${per[$1]:-}" ] && [ -n "${per[$2]:-}" ]; then
        awk -v a="${per[$1]}" -v b="${per[$2]}" -v n="$1" -v f="$2" 'BEGIN { printf "{\"bench\":\"instructions.%s\",\"floor\":\"%s\",\"ratio_to_floor\":%.3f}\n", n, f, a / b }'
    fi
done
baseline=benchmarks/instructions-baseline.json
if [ "$mode" = write ]; then
    mkdir -p benchmarks
    printf "%s" "$out" > "$baseline"
    echo "baseline written to $baseline"
elif [ "$mode" = check ]; then
    [ -f "$baseline" ] || { echo "no baseline at $baseline" >&2; exit 3; }
    python3 - "$baseline" "$tolerance" <<PY
import json, sys
base = {json.loads(l)["bench"]: json.loads(l) for l in open(sys.argv[1]) if l.strip()}
now = {json.loads(l)["bench"]: json.loads(l) for l in """$out""".splitlines() if l.strip()}
limit = 1 + float(sys.argv[2])
bad = 0
for k, v in now.items():
    if k not in base:
        print(f"{k}: {v['instructions_per_call']} (no baseline)")
        continue
    r = v["instructions_per_call"] / base[k]["instructions_per_call"]
    flag = "REGRESSION" if r > limit else "ok"
    bad += r > limit
    print(f"{k}: {v['instructions_per_call']} vs baseline {base[k]['instructions_per_call']} ({r:.3f}x) {flag}")
print(f"performance gate: {len(now) - bad} within {limit:.2f}x of the baseline, {bad} over")
sys.exit(1 if bad else 0)
PY
fi

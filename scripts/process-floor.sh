#!/usr/bin/env bash
# The `mdoc-respond respond` process against its floor: benchmarks/process-floor.c, the same OpenSSL
# calls alone in a C process (built here with cc into .build/release/mdoc-process-floor, where
# mdoc-bench finds it for its interleaved wall figures `cli.respond.process*`).
# Counts per process, on the reference readerAuth request and the same request unsigned: instructions
# (valgrind --tool=callgrind, whole process; by object: libcrypto, libc, the dynamic loader, the rest:
# the binary with its Swift runtime, libstdc++, libcbor)
# and minor page faults; for the floor, the static CLI (built as scripts/package.sh builds it) and the
# dynamic release CLI. Repeatable on a noisy machine, unlike wall time.
#   scripts/process-floor.sh            print JSON lines
#   scripts/process-floor.sh --build    only build the floor
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build/release
# shellcheck disable=SC2046
cc -O2 -Wall -Wextra -Werror -o .build/release/mdoc-process-floor benchmarks/process-floor.c \
    $(pkg-config --cflags --libs libcrypto)
[ "${1:-}" = "--build" ] && exit 0
command -v valgrind >/dev/null || { echo "valgrind is required (apt-get install valgrind)" >&2; exit 3; }
swift build -c release -j 2 --product mdoc-respond >/dev/null
scripts/build-static-cli.sh >/dev/null 2>&1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
vectors=$PWD/TestVectors
# The CLI answers from this checkout's test data (it reads no path compiled into it).
export MDOC_RESPOND_TESTVECTORS="${MDOC_RESPOND_TESTVECTORS:-$vectors}"
objects() {   # callgrind file → "total libcrypto libc loader rest" (rest: the binary, libstdc++, libcbor, ...)
    python3 - "$1" <<'PY'
import re, sys
# Exclusive costs from the raw file: each cost line belongs to the current object (ob=), except the
# line after calls=, which is the call's inclusive cost.
names = {}; ob = ""; after_call = False; by = {"libcrypto": 0, "libc": 0, "loader": 0, "rest": 0}
for line in open(sys.argv[1]):
    m = re.match(r"(c?ob)=\((\d+)\)(?: (.*))?$", line)
    if m:
        if m.group(3): names[m.group(2)] = m.group(3)
        if m.group(1) == "ob": ob = names.get(m.group(2), "")
        continue
    if line.startswith("calls="): after_call = True; continue
    if line[:1].isdigit() or line[:1] in "+-*":
        if after_call: after_call = False; continue
        parts = line.split()
        if len(parts) < 2: continue
        n = int(parts[1])
        key = ("libcrypto" if "/libcrypto.so" in ob else "libc" if "/libc.so" in ob
               else "loader" if "/ld-linux" in ob else "rest")
        by[key] += n
print(sum(by.values()), by["libcrypto"], by["libc"], by["loader"], by["rest"])
PY
}
faults() { /usr/bin/time -f "%R" "$@" 2>&1 >/dev/null | tail -1; }
declare -A totals
for mode in signed unsigned; do
    file=$([ $mode = signed ] && echo readerAuth || echo none)
    respond=(respond --request "$vectors/requests/mdl-dataObject-v1.0-$file.json" --origin https://verifier.example
        --clock 2027-03-01T12:00:00Z --out /dev/null)
    for which in floor static dynamic; do
        case $which in
            floor) cmd=(.build/release/mdoc-process-floor "$vectors" "$mode") ;;
            static) cmd=(.build/dist/release/mdoc-respond "${respond[@]}") ;;
            dynamic) cmd=(.build/release/mdoc-respond "${respond[@]}") ;;
        esac
        valgrind --tool=callgrind --callgrind-out-file="$tmp/$which.$mode" "${cmd[@]}" >/dev/null 2>&1
        read -r total crypto libc loader rest < <(objects "$tmp/$which.$mode")
        pf=$(faults "${cmd[@]}")
        name=$([ $which = floor ] && echo "process_floor" || echo "process_$which")
        echo "{\"bench\":\"cli.respond.$name.$mode\",\"instructions\":$total,\"libcrypto\":$crypto,\"libc\":$libc,\"loader\":$loader,\"rest\":$rest,\"minor_faults\":$pf}"
        totals[$which]=$total
    done
    awk -v s="${totals[static]}" -v d="${totals[dynamic]}" -v f="${totals[floor]}" -v m="$mode" 'BEGIN {
        printf "{\"bench\":\"cli.respond.process.%s\",\"static_to_floor\":%.3f,\"dynamic_to_floor\":%.3f}\n", m, s / f, d / f }'
done

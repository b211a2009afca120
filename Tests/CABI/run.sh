#!/usr/bin/env bash
# Builds Tests/CABI/abi_test.c with the system compiler under AddressSanitizer and UBSan, links it to
# the libmdocrespond.so in LIBDIR, and runs it against a private copy of the built-in test context.
#   usage: Tests/CABI/run.sh [--static] LIBDIR [LABEL]   (prints the test's "abi: N passed, M failed" line)
# With --static the program links LIBDIR/libmdocrespond-static.a instead (swiftc as the link driver, for
# the Swift runtime; no sanitizers).
set -euo pipefail
cd "$(dirname "$0")/../.."
static=0
if [ "${1:-}" = "--static" ]; then static=1; shift; fi
libdir=$1
label=${2:-abi}
work=$(mktemp -d "${TMPDIR:-/tmp}/mdoc-abi.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A clean clone's files carry the umask's modes; the engine opens only private contexts.
cp -r TestVectors/context "$work/context"
chmod 700 "$work/context" "$work/context/keys"
chmod 600 "$work/context/context.cbor" "$work/context/keys/"*
swift_lib=$(dirname "$(dirname "$(command -v swift)")")/lib/swift/linux
if [ "$static" -eq 1 ]; then
    "${CC:-cc}" -std=c11 -Wall -Wextra -Werror -pedantic -g -c -Iinclude Tests/CABI/abi_test.c -o "$work/abi_test.o"
    swiftc "$work/abi_test.o" "$libdir/libmdocrespond-static.a" -lcrypto -lcbor -o "$work/abi_test" 2> "$work/cc.log" \
        || { cat "$work/cc.log" >&2; exit 1; }
    "$work/abi_test" "$work/context" "$work/context/context.cbor" "$work/context" \
        TestVectors/requests/mdl-dataObject-v1.0-none.json TestVectors/requests/mdl-dataObject-v1.0-readerAuth.json \
        https://verifier.example 2026-06-01T00:00:00Z | sed "s/^abi:/$label:/"
    exit "${PIPESTATUS[0]}"
fi
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
    -Iinclude Tests/CABI/abi_test.c -o "$work/abi_test" \
    -L"$libdir" -lmdocrespond -Wl,-rpath,"$PWD/$libdir" -Wl,-rpath,"$swift_lib" -lpthread 2> "$work/cc.log" \
    || { cat "$work/cc.log" >&2; exit 1; }
# The header also compiles as C++ (extern "C" guards). Linker chatter (the toolchain's gold on an ASan
# library) goes to a log shown only on failure.
if command -v "${CXX:-c++}" > /dev/null; then
    printf '#include "mdoc_respond.h"\nint main(void) { return mdoc_abi_version() == MDOC_RESPOND_ABI_VERSION ? 0 : 1; }\n' > "$work/cxx.cc"
    "${CXX:-c++}" -std=c++17 -fsanitize=address,undefined -Wall -Wextra -Werror -Iinclude "$work/cxx.cc" -o "$work/cxx" -L"$libdir" -lmdocrespond \
        -Wl,-rpath,"$PWD/$libdir" -Wl,-rpath,"$swift_lib" 2> "$work/cxx.log" || { cat "$work/cxx.log" >&2; exit 1; }
    "$work/cxx"
fi
ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" LSAN_OPTIONS="suppressions=$PWD/Tests/lsan.supp" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    "$work/abi_test" "$work/context" "$work/context/context.cbor" "$work/context" \
    TestVectors/requests/mdl-dataObject-v1.0-none.json TestVectors/requests/mdl-dataObject-v1.0-readerAuth.json \
    https://verifier.example 2026-06-01T00:00:00Z | sed "s/^abi:/$label:/"
exit "${PIPESTATUS[0]}"

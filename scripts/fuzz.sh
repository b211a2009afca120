#!/usr/bin/env bash
# libFuzzer + AddressSanitizer runs of the fuzz targets in Fuzz/ (a separate package, so the main
# build never links a libFuzzer main). Seeds come from TestVectors/ and, when present, ../shared/vectors.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      targets: FuzzCBOR FuzzRequest FuzzOpenID4VP FuzzZkRequest FuzzHPKEOpen FuzzContext FuzzPKCS11URI FuzzABI (default: all)
#   MDOC_FUZZ_JOBS=N        N processes per target on the one corpus (executions are summed)
#   MDOC_FUZZ_MAX_LEN=BYTES input size cap (default per target)
# A crash, leak or timeout fails the run; the input is kept in .build/fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}; shift || true
# No zero-knowledge prover for the fuzzed engines (the C ABI's included): proofs take seconds each.
export MDOC_ZK_DIR=/nonexistent/mdoc-zk
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(FuzzCBOR FuzzRequest FuzzOpenID4VP FuzzZkRequest FuzzHPKEOpen FuzzContext FuzzPKCS11URI FuzzABI)
work=.build/fuzz
mkdir -p "$work/artifacts"
shared=${MDOC_SHARED_VECTORS:-../shared/vectors}
python3 - "$work" "$shared" <<'PY'
import binascii, glob, json, os, sys
work, shared = sys.argv[1], sys.argv[2]
def put(d, name, data):
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, name), "wb").write(data)
n = 0
for f in glob.glob("TestVectors/credentials/**/*.cbor", recursive=True) + glob.glob("TestVectors/context/*.cbor"):
    put(f"{work}/seeds-FuzzCBOR", f"t{n}", open(f, "rb").read()); n += 1
if os.path.isdir(shared):
    for e in json.load(open(f"{shared}/cbor/appendix_a.json")):
        put(f"{work}/seeds-FuzzCBOR", f"a{n}", binascii.unhexlify(e["hex"])); n += 1
    for c in json.load(open(f"{shared}/cbor/rfc8949_appendix_f1_not_well_formed.json"))["categories"]:
        for h in c["hex"]:
            put(f"{work}/seeds-FuzzCBOR", f"f{n}", binascii.unhexlify(h)); n += 1
    for f in glob.glob(f"{shared}/iso18013-5/*.hex"):
        put(f"{work}/seeds-FuzzCBOR", f"d{n}", binascii.unhexlify(open(f).read().strip())); n += 1
else:
    print("NOTICE: shared vectors not found; fuzzing with TestVectors seeds only")
put(f"{work}/seeds-FuzzContext", "context", open("TestVectors/context/context.cbor", "rb").read())
# zkRequest values: a v7 one-attribute Longfellow spec (required and not), another system, a bare map.
def cbor_text(t):
    b = t.encode()
    return (bytes([0x60 + len(b)]) if len(b) < 24 else bytes([0x78, len(b)])) + b
def zk_request(system, required, attrs=1):
    spec = (b"\xa3" + cbor_text("zkSystemId") + cbor_text("id-1") + cbor_text("system") + cbor_text(system)
            + cbor_text("params") + b"\xa2" + cbor_text("version") + b"\x07" + cbor_text("num_attributes") + bytes([attrs]))
    return b"\xa2" + cbor_text("systemSpecs") + b"\x81" + spec + cbor_text("zkRequired") + (b"\xf5" if required else b"\xf4")
for i, z in enumerate([zk_request("longfellow-libzk-v1", True), zk_request("longfellow-libzk-v1", False),
                       zk_request("other", True), zk_request("longfellow-libzk-v1", True, 2), b"\xa0"]):
    put(f"{work}/seeds-FuzzZkRequest", f"z{i}", z)
put(f"{work}/seeds-FuzzHPKEOpen", "empty", b"\x00" * 90)
for i, u in enumerate([
        b"pkcs11:token=Wallet%20HSM;manufacturer=SoftHSM%20project;serial=1a2b;model=SoftHSM%20v2;slot-id=7;object=mdl-1;id=%01%02%ff;type=private?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/run/pin",
        b"pkcs11:object=k?x-pin-env=WALLET_PIN&module-path=/m.so",
        b"pkcs11:id=%aa;library-version=3;library-manufacturer=x;library-description=y;slot-description=s;slot-manufacturer=m",
        b"pkcs11:object=k?pin-source=file:///run/pin"]):
    put(f"{work}/seeds-FuzzPKCS11URI", f"u{i}", u)
for i, seed in enumerate([
        b'\x00{"testing":true,"clock":"2026-06-01T00:00:00Z","protocol":"answerable","missingElements":"report","selfCheck":true,"allowAppOrigins":false,"preferA256GCM":true,"limits":{"maxRequestBytes":1000,"maxDocRequests":2,"maxRequestedElements":9,"maxAlternativeSetSize":3,"maxNestingDepth":9,"maxDataItems":99,"maxCredentialQueries":2},"trust":{"anchors":[],"authorities":["0a0b"],"requireReaderAuthentication":false,"requireTrustedReader":true}}',
        b'\x01{"approve":["org.iso.18013.5.1/family_name"],"using":{"0":"mdl"},"consented":{"org.iso.18013.5.1.mDL":["org.iso.18013.5.1/family_name"]}}',
        b'\x01{"approve":{"0":["org.iso.18013.5.1/age_over_21"]}}',
        b'\x02https://verifier.example']):
    put(f"{work}/seeds-FuzzABI", f"s{i}", seed)
for i, c in enumerate(json.load(open("TestVectors/requests/manifest.json"))):
    put(f"{work}/seeds-FuzzABI", f"r{i}", b"\x03" + open("TestVectors/" + c["file"], "rb").read())
for i, c in enumerate(json.load(open("TestVectors/requests/manifest.json"))):
    put(f"{work}/seeds-FuzzRequest", f"r{i}", c["origin"].encode() + b"\n" + open("TestVectors/" + c["file"], "rb").read())
for i, c in enumerate(json.load(open("TestVectors/requests/openid4vp/manifest.json"))):
    put(f"{work}/seeds-FuzzOpenID4VP", f"o{i}", c["origin"].encode() + b"\n" + open("TestVectors/" + c["file"], "rb").read())
# The shape that once made the JSON reader quadratic: an object of many escaped keys of one length
# beside a valid entry. A small one seeds the corpus; a large one (60 KiB) is run once per target
# under the time-per-input limit below, so a reader that is not linear in its input fails the run
# (kept out of the corpus: a 60 KiB seed would lift libFuzzer's length limit and slow every run).
valid = json.load(open("TestVectors/requests/mdl-digitalRequestList-v1.0-none.json"))
entry = json.dumps(valid["digital"]["requests"][0], separators=(",", ":"))
def escaped(n):
    keys = ",".join('"' + "\\u0061" * 30 + "%06d" % k + '":0' for k in range(n))
    return b"https://verifier.example\n" + (
        '{"digital":{"requests":[{"protocol":"openid4vp-v1-unsigned","data":{' + keys + '}},' + entry + ']}}').encode()
for target in ("FuzzRequest", "FuzzOpenID4VP"):
    put(f"{work}/seeds-{target}", "escaped-keys", escaped(12))
    put(work, f"worst-{target}", escaped(300))
PY
# A small context (two 1.5 KB credentials) as a second FuzzContext seed: mutations of a 3.5 KB snapshot
# run several times faster than of the 36 KB built-in one. Needs a built CLI; skipped otherwise.
cli=""
for c in .build/debug/mdoc-respond .build/release/mdoc-respond; do [ -x "$c" ] && cli=$c && break; done
if [ -n "$cli" ]; then
    small=$(mktemp -d)
    if "$cli" context init --context "$small" >/dev/null \
        && "$cli" context import --context "$small" --issuer-signed TestVectors/credentials/mdl-expired.issuer-signed.cbor \
               --device-key TestVectors/context/keys/mdl-expired.pem --id e >/dev/null \
        && "$cli" context import --context "$small" --issuer-signed TestVectors/credentials/pid-untrusted-issuer.issuer-signed.cbor \
               --device-key TestVectors/context/keys/pid-untrusted-issuer.pem --id p >/dev/null; then
        cp "$small/context.cbor" "$work/seeds-FuzzContext/small"
    fi
    rm -rf "$small"
fi
# The fuzz build lives in a scratch directory named by a hash of every source file, so any source
# change builds from scratch. SwiftPM's incremental build has been seen to keep a fuzz target compiled
# against an older layout of a dependency's struct (a key type grew by 8 bytes; the stale target then
# reserved too little stack for it and ASan reported a phantom stack-buffer-overflow).
stamp=$(find Package.swift Sources Fuzz/Package.swift Fuzz/Sources -type f | LC_ALL=C sort | xargs cat | sha1sum | cut -c1-16)
scratch="$PWD/$work/build-$stamp"
for old in "$work"/build-*; do [ "$old" = "$scratch" ] || rm -rf "$old"; done
for t in "${targets[@]}"; do
    # SwiftPM passes --sanitize=fuzzer and --sanitize=address to swiftc as two separate flags and the
    # driver keeps only the last, so the frontend would get ASan but no coverage instrumentation
    # (libFuzzer then runs blind: "no interesting inputs", corp 1/1b). The combined -Xswiftc flag
    # instruments every Swift module, dependencies included; --sanitize=fuzzer still tells SwiftPM to
    # let libFuzzer supply main.
    (cd Fuzz && swift build -c release --scratch-path "$scratch" --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address -j 2 --product "$t" 2>&1 \
        | grep -v "Cannot export local symbol" | grep -E "error|warning: " >&2 || true)
    mkdir -p "$work/corpus-$t"
    # Input size cap per target: CBOR structures past 16 KiB only repeat what smaller ones exercise
    # (and slow each execution); HPKE open needs enc + a short ciphertext.
    case "$t" in FuzzCBOR) maxlen=16384 ;; FuzzHPKEOpen) maxlen=4096 ;; FuzzContext) maxlen=16384 ;; FuzzPKCS11URI) maxlen=8192 ;; *) maxlen=65536 ;; esac
    # Time per input: the request readers answer a 64 KiB input in milliseconds even under ASan, so
    # one second catches work that grows faster than the input (the quadratic duplicate-key check
    # took seconds on such inputs); the other targets keep a generous bound.
    case "$t" in FuzzRequest | FuzzOpenID4VP | FuzzABI) timeout=${MDOC_FUZZ_TIMEOUT:-1} ;; *) timeout=${MDOC_FUZZ_TIMEOUT:-10} ;; esac
    # MDOC_FUZZ_JOBS=N runs N processes on the one corpus (each picks up what the others find when it
    # reloads the directory); the count reported is their sum.
    jobs=${MDOC_FUZZ_JOBS:-1}
    if [ -f "$work/worst-$t" ] && ! "$scratch/release/$t" -timeout="$timeout" -rss_limit_mb=2048 "$work/worst-$t" >"$work/$t.worst.log" 2>&1; then
        tail -20 "$work/$t.worst.log" >&2
        echo "fuzz: $t FAILED on the 60 KiB escaped-keys input (more than ${timeout}s: the JSON reader is not linear)" >&2
        exit 1
    fi
    pids=()
    for ((k = 1; k <= jobs; k++)); do
        "$scratch/release/$t" -max_total_time="$secs" -rss_limit_mb=2048 -max_len="${MDOC_FUZZ_MAX_LEN:-$maxlen}" -timeout="$timeout" \
            -artifact_prefix="$work/artifacts/$t-" "$work/corpus-$t" "$work/seeds-$t" >"$work/$t.$k.log" 2>&1 &
        pids+=($!)
    done
    rc=0; failed=1
    for ((k = 1; k <= jobs; k++)); do wait "${pids[k - 1]}" || { rc=$?; failed=$k; }; done
    # The combined log ends with the failing process's, so the tail shown on failure is its.
    { for ((k = 1; k <= jobs; k++)); do [ "$k" -eq "$failed" ] || cat "$work/$t.$k.log"; done; cat "$work/$t.$failed.log"; } > "$work/$t.log"
    runs=0; cov=0
    for ((k = 1; k <= jobs; k++)); do
        r=$(grep -Eo "Done [0-9]+ runs" "$work/$t.$k.log" | grep -Eo "[0-9]+" || echo 0)
        c=$(grep -Eo "cov: [0-9]+" "$work/$t.$k.log" | tail -1 | grep -Eo "[0-9]+" || echo 0)
        runs=$((runs + ${r:-0})); [ "${c:-0}" -gt "$cov" ] && cov=${c:-0}
    done
    rm -f "$work/$t".[0-9]*.log
    log="$work/$t.log"
    if [ "$rc" -eq 0 ] && [ "${cov:-0}" -lt 50 ]; then
        echo "fuzz: $t is not coverage-instrumented (cov ${cov:-0}); refusing to report a blind run" >&2
        exit 1
    fi
    if [ "$rc" -ne 0 ]; then
        tail -40 "$log" >&2
        echo "fuzz: $t FAILED (exit $rc) after $runs runs; input saved in $work/artifacts/" >&2
        exit 1
    fi
    echo "fuzz: $t $runs executions in ${secs}s$([ "$jobs" -gt 1 ] && echo " ($jobs processes)"), coverage $cov edges, corpus $(ls "$work/corpus-$t" | wc -l) files, no crash, leak or timeout"
done

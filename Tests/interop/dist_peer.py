#!/usr/bin/env python3
"""Answers requests with each packaged artifact (scripts/package.sh) and verifies every answer with the
independent Annex C verifier (annexc_peer: cbor2, cryptography, pyhpke; no project code). Each
artifact is a command that takes a request file and an origin and writes the response to stdout.

usage: dist_peer.py --vectors TestVectors/ NAME=COMMAND...   (COMMAND: a shell word list, the request
file and the origin appended; prints 'N passed, M failed'). A NAME ending in "-example" is the README's
example, whose holder approves family_name only: exactly that must come back; otherwise everything asked.
"""
import argparse, datetime, os, shlex, subprocess, sys, tempfile

import annexc_peer
from cryptography import x509
from cryptography.hazmat.primitives import serialization

MDL, MNS = "org.iso.18013.5.1.mDL", "org.iso.18013.5.1"
ORIGIN = "https://verifier.example"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vectors", required=True)
    ap.add_argument("artifacts", nargs="+")
    a = ap.parse_args()
    pki = os.path.join(a.vectors, "pki")
    iaca = x509.load_der_x509_certificate(open(os.path.join(pki, "iaca.der"), "rb").read())
    reader_key = serialization.load_pem_private_key(open(os.path.join(pki, "reader.key.pem"), "rb").read(), None)
    chain = [open(os.path.join(pki, "reader.der"), "rb").read()]
    now = datetime.datetime.now(datetime.timezone.utc)
    passed = failed = 0
    for spec in a.artifacts:
        name, command = spec.split("=", 1)
        for framing, signing in (("digital", "none"), ("data", "readerAuth")):
            asked = ["family_name", "age_over_18", "portrait"]
            raw, state = annexc_peer.build_request([(MDL, MNS, asked)], framing, "1.0", signing, reader_key, chain)
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                f.write(raw)
                f.flush()
                r = subprocess.run(shlex.split(command) + [f.name, ORIGIN], capture_output=True, timeout=120)
            try:
                assert r.returncode == 0, r.stderr.decode()[-400:]
                disclosed = annexc_peer.verify(r.stdout, state, iaca, now)
                expected = ["family_name"] if name.endswith("-example") else asked
                assert disclosed == {MDL: sorted(f"{MNS}/{e}" for e in expected)}, disclosed
                passed += 1
            except Exception as e:
                failed += 1
                print(f"FAIL {name} ({framing}, {signing}): {type(e).__name__}: {e}", file=sys.stderr)
    print(f"dist artifacts: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Independent check of mdoc-respond's zero-knowledge answers. Uses cbor2, cryptography, pyhpke and
pylongfellow's google-cpp backend (Google's C++ Longfellow: the other implementation; the engine proves
with ISRG's Rust one), and no code from this project. It builds Annex C requests with
`requestInfo.zkRequest` like a verifier, runs `mdoc-respond respond`, decrypts each answer, checks the
ZkDocument as deployed verifiers read it (tag-24 documentData, tag-0 timestamp, the echoed zkSystemId,
empty deviceSigned, the claims, the document signer under the test IACA) and verifies the proof with
google-cpp. With --spool, it also verifies every proof the Swift suite made (written there by the tests).

usage: zk_peer.py --cli PATH --vectors TestVectors/ --zk-dir DIR [--spool DIR]   (prints 'N passed, M failed')
"""
import argparse, base64, datetime, glob, hashlib, json, os, subprocess, sys

import cbor2
from cbor2 import CBORTag
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from pyhpke import AEADId, CipherSuite, KDFId, KEMId
from pylongfellow import Pylongfellow
from pylongfellow.mdoc._types import PublicKey, RequestedAttribute

SUITE = CipherSuite.new(KEMId.DHKEM_P256_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES128_GCM)
ORIGIN = "https://verifier.example"
AV = "eu.europa.ec.av.1"
MDL, MDL_NS = "org.iso.18013.5.1.mDL", "org.iso.18013.5.1"
# google/longfellow-zk kZkSpecs rows (version, attributes, circuit_hash, block_enc_hash, block_enc_sig).
V7_1 = (7, 1, "8d079211715200ff06c5109639245502bfe94aa869908d31176aae4016182121", 4151, 4096)
V6_1 = (6, 1, "137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6", 4096, 2945)


def b64u(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def unb64u(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
def enc(x): return cbor2.dumps(x, canonical=True)


def spec(row, system_id=None):
    v, n, h, bh, bs = row
    return {"zkSystemId": system_id or f"longfellow-libzk-v1_{v}_{n}_{bh}_{bs}_{h}", "system": "longfellow-libzk-v1",
            "params": {"version": v, "circuit_hash": h, "num_attributes": n, "block_enc_hash": bh, "block_enc_sig": bs}}


def build_request(doctype, ns, elements, specs, required):
    """A 1.1 DeviceRequest with one DocRequest asking `elements` by proof, in the {digital} framing."""
    sk = ec.generate_private_key(ec.SECP256R1())
    nums = sk.public_key().public_numbers()
    cose = {1: 2, -1: 1, -2: nums.x.to_bytes(32, "big"), -3: nums.y.to_bytes(32, "big")}
    ei = b64u(enc(["dcapi", {"nonce": os.urandom(16), "recipientPublicKey": cose}]))
    transcript = enc([None, None, ["dcapi", hashlib.sha256(enc([ei, ORIGIN])).digest()]])
    items = {"docType": doctype, "nameSpaces": {ns: {e: False for e in elements}},
             "requestInfo": {"zkRequest": {"systemSpecs": specs, "zkRequired": required}}}
    dr = {"version": "1.1", "docRequests": [{"itemsRequest": CBORTag(24, enc(items))}]}
    data = {"deviceRequest": b64u(enc(dr)), "encryptionInfo": ei}
    raw = json.dumps({"digital": {"requests": [{"protocol": "org-iso-mdoc", "data": data}]}}).encode()
    sk_bytes = sk.private_numbers().private_value.to_bytes(32, "big")
    return raw, {"key": sk_bytes, "transcript": transcript, "specs": specs, "doctype": doctype, "ns": ns,
                 "elements": elements}


def open_response(out, state):
    """The DeviceResponse inside the CLI's answer (the Android envelope or {"response"})."""
    j = json.loads(out)
    b64 = j["data"]["response"] if "data" in j else j["response"]
    _, sealed = cbor2.loads(unb64u(b64))
    sk = SUITE.kem.deserialize_private_key(state["key"])
    ctx = SUITE.create_recipient_context(sealed["enc"], sk, info=state["transcript"])
    return cbor2.loads(ctx.open(sealed["cipherText"]))


def circuit_file(zk_dir, row):
    return open(os.path.join(zk_dir, "circuits", row[2]), "rb").read()


def verify_zk_document(zk, transcript, expected_claims, iaca, row, system_id, doctype, now, zk_dir):
    """Checks one ZkDocument as zk-age-verifier reads it, then its proof with google-cpp. Raises on failure."""
    dd = zk["documentData"]
    assert isinstance(dd, CBORTag) and dd.tag == 24, "documentData is not tag-24 encoded CBOR"
    data = cbor2.loads(dd.value)
    assert data["docType"] == doctype, "docType"
    assert data["zkSystemId"] == system_id, "zkSystemId not echoed"
    ts = data["timestamp"]
    assert isinstance(ts, datetime.datetime) and ts.tzinfo is not None, "timestamp is not tag 0"
    assert abs((ts - now).total_seconds()) <= 300, "stale proof"
    assert data.get("deviceSigned", {}) == {}, "deviceSigned not empty"
    claims = [(ns, item["elementIdentifier"], item["elementValue"]) for ns, items in data["issuerSigned"].items()
              for item in items]
    assert sorted(claims) == sorted(expected_claims), f"claims {claims}"
    chain = data["msoX5chain"]
    der = chain[0] if isinstance(chain, list) else chain
    ds = x509.load_der_x509_certificate(der)
    iaca.public_key().verify(ds.signature, ds.tbs_certificate_bytes, ec.ECDSA(ds.signature_hash_algorithm))
    assert ds.issuer == iaca.subject, "DS not issued by the test IACA"
    # Nothing but the ZkDocument: no MSO, no issuer signature, no device key.
    assert set(data) <= {"docType", "zkSystemId", "timestamp", "issuerSigned", "deviceSigned", "msoX5chain"}
    nums = ds.public_key().public_numbers()
    lf = Pylongfellow(backend="google-cpp")
    lf.load_circuit(circuit_file(zk_dir, row), row[0], row[1])
    lf.verify(PublicKey(nums.x, nums.y), transcript,
              [RequestedAttribute(ns, ident, cbor2.dumps(v)) for ns, ident, v in claims],
              ts.astimezone(datetime.timezone.utc), zk["proof"], doctype)


def run_cli(cli, raw, args, zk_dir):
    env = dict(os.environ, MDOC_ZK_DIR=zk_dir)
    return subprocess.run([cli, "respond", "--request", "-", "--origin", ORIGIN] + args, input=raw,
                          capture_output=True, env=env, timeout=120)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--vectors", required=True)
    ap.add_argument("--zk-dir", required=True)
    ap.add_argument("--spool")
    a = ap.parse_args()
    iaca = x509.load_der_x509_certificate(open(os.path.join(a.vectors, "pki/iaca.der"), "rb").read())
    passed = failed = 0

    def check(name, fn):
        nonlocal passed, failed
        try:
            fn()
            passed += 1
        except Exception as e:  # one line per failure, then the count
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}", file=sys.stderr)

    def answered(name, doctype, ns, elements, row, required, extra=()):
        def run():
            s = spec(row)
            raw, st = build_request(doctype, ns, elements, [s], required)
            r = run_cli(a.cli, raw, list(extra), a.zk_dir)
            assert r.returncode == 0, r.stderr.decode()
            dr = open_response(r.stdout, st)
            assert "documents" not in dr and len(dr["zkDocuments"]) == 1, "not one ZkDocument alone"
            verify_zk_document(dr["zkDocuments"][0], st["transcript"], [(ns, e, True) for e in elements], iaca, row,
                               s["zkSystemId"], doctype, datetime.datetime.now(datetime.timezone.utc), a.zk_dir)
        check(name, run)

    def refused(name, specs, required, rule, extra=()):
        def run():
            raw, _ = build_request(AV, AV, ["age_over_18"], specs, required)
            r = run_cli(a.cli, raw, list(extra), a.zk_dir)
            assert r.returncode == 1 and r.stdout == b"", f"exit {r.returncode}, {len(r.stdout)} bytes"
            assert f": {rule}:" in r.stderr.decode(), r.stderr.decode()
        check(name, run)

    # Proofs the engine makes, verified by the other implementation.
    answered("AV age_over_18, v7, zkRequired", AV, AV, ["age_over_18"], V7_1, True)
    # (The v6 circuits prove only items encoded with elementValue before elementIdentifier, as the AV
    # profile's example does; the test issuer writes the identifier first, so its credentials prove on v7.)
    answered("mDL age_over_18, v7, zkRequired false (a proof is still preferred)", MDL, MDL_NS, ["age_over_18"],
             V7_1, False)
    # Never a plain presentation where a proof is required; a fallback only by approval.
    bogus = spec((7, 1, "00" * 32, 4151, 4096))
    refused("unknown circuit hash, zkRequired", [bogus], True, "zk.noCircuit")
    refused("wrong attribute count, zkRequired", [spec((7, 2, V7_1[2], 4151, 4096))], True, "zk.attributeCount")
    tampered = spec(V7_1)
    tampered["params"]["block_enc_sig"] = 4097
    refused("a spec with a tampered block parameter, zkRequired", [tampered], True, "zk.noCircuit")
    refused("no circuit, zkRequired false, fallback not approved", [bogus], False, "zk.fallbackNotApproved")

    def fallback():
        raw, st = build_request(AV, AV, ["age_over_18"], [bogus], False)
        r = run_cli(a.cli, raw, ["--approve-plain-fallback", "0"], a.zk_dir)
        assert r.returncode == 0, r.stderr.decode()
        dr = open_response(r.stdout, st)
        assert "zkDocuments" not in dr and len(dr["documents"]) == 1, "the approved fallback is a plain document"
    check("no circuit, zkRequired false, fallback approved: a plain presentation", fallback)

    # Every proof the Swift suite made.
    for path in sorted(glob.glob(os.path.join(a.spool, "*.json"))) if a.spool else []:
        def spooled(path=path):
            rec = json.load(open(path))
            row = next(r for r in (V7_1, V6_1) if r[2] == rec["circuitHash"])
            zk = cbor2.loads(bytes.fromhex(rec["zkDocument"]))
            verify_zk_document(zk, bytes.fromhex(rec["transcript"]),
                               [(c[0], c[1], cbor2.loads(bytes.fromhex(c[2]))) for c in rec["claims"]],
                               x509.load_der_x509_certificate(bytes.fromhex(rec["iaca"])), row, rec["zkSystemId"],
                               rec["docType"], datetime.datetime.fromisoformat(rec["at"].replace("Z", "+00:00")),
                               a.zk_dir)
        check("spooled " + os.path.basename(path), spooled)
    print(f"zk interop (google-cpp): {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

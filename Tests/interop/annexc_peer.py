#!/usr/bin/env python3
"""Independent Annex C verifier for mdoc-respond's CLI. Uses only cbor2, cryptography, pyhpke and
pymdoccbor (no code from this project): it builds requests like a web page, runs
`mdoc-respond respond`, then decrypts and verifies each response itself. It also issues a credential
with pymdoccbor, imports it with `mdoc-respond context import`, and checks the CLI answers from it.

usage: annexc_peer.py --cli PATH --vectors TestVectors/   (prints 'N passed, M failed')
"""
import argparse, base64, datetime, hashlib, json, os, subprocess, sys, tempfile

import cbor2
from cbor2 import CBORTag
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from cryptography.x509.oid import NameOID
from pyhpke import AEADId, CipherSuite, KDFId, KEMId

SUITE = CipherSuite.new(KEMId.DHKEM_P256_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES128_GCM)
ORIGIN = "https://verifier.example"


def b64u(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def unb64u(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
def enc(x): return cbor2.dumps(x, canonical=True)
def raw_sig(der, n=32):
    r, s = decode_dss_signature(der)
    return r.to_bytes(n, "big") + s.to_bytes(n, "big")
def der_sig(raw):
    n = len(raw) // 2
    return encode_dss_signature(int.from_bytes(raw[:n], "big"), int.from_bytes(raw[n:], "big"))
def cose_key_to_public(k):
    return ec.EllipticCurvePublicNumbers(int.from_bytes(k[-2], "big"), int.from_bytes(k[-3], "big"), ec.SECP256R1()).public_key()


def build_request(docs, framing, version, signing, reader_key, reader_chain, alternatives=None, use_cases=None):
    """docs: [(docType, namespace, [elements])]; alternatives: {element: [[element, ...], ...]} for the
    first document (1.1 requestInfo.alternativeDataElements). Returns (raw JSON bytes, state)."""
    sk = ec.generate_private_key(ec.SECP256R1())
    nums = sk.public_key().public_numbers()
    cose = {1: 2, -1: 1, -2: nums.x.to_bytes(32, "big"), -3: nums.y.to_bytes(32, "big")}
    ei = b64u(enc(["dcapi", {"nonce": os.urandom(16), "recipientPublicKey": cose}]))
    transcript = enc([None, None, ["dcapi", hashlib.sha256(enc([ei, ORIGIN])).digest()]])
    st = cbor2.loads(transcript)
    items = []
    for k, (doctype, ns, elems) in enumerate(docs):
        ir = {"docType": doctype, "nameSpaces": {ns: {e: False for e in elems}}}
        if alternatives and k == 0:
            ir["requestInfo"] = {"alternativeDataElements": [
                {"requestedElement": [ns, req], "alternativeElementSets": [[[ns, e] for e in s] for s in sets]} for req, sets in alternatives.items()]}
        items.append(CBORTag(24, enc(ir)))

    def sign(payload):
        protected = enc({1: -7})
        tbs = enc(["Signature1", protected, b"", payload])
        sig = raw_sig(reader_key.sign(tbs, ec.ECDSA(hashes.SHA256())))
        x5 = reader_chain[0] if len(reader_chain) == 1 else reader_chain
        return [protected, {33: x5}, None, sig]

    doc_requests = []
    for it in items:
        d = {"itemsRequest": it}
        if signing == "readerAuth":
            d["readerAuth"] = sign(enc(CBORTag(24, enc(["ReaderAuthentication", st, it]))))
        doc_requests.append(d)
    dr = {"version": version, "docRequests": doc_requests}
    dri = None
    if use_cases:
        dri = CBORTag(24, enc({"useCases": [{"mandatory": m, "documentSets": sets} for m, sets in use_cases]}))
        dr["deviceRequestInfo"] = dri
    if signing == "readerAuthAll":
        dr["readerAuthAll"] = [sign(enc(CBORTag(24, enc(["ReaderAuthenticationAll", st, items, dri]))))]
    data = {"deviceRequest": b64u(enc(dr)), "encryptionInfo": ei}
    wrapped = {"data": data, "protocol": {"protocol": "org-iso-mdoc", "data": data},
               "requests": {"requests": [{"protocol": "openid4vp-v1-unsigned", "data": {}}, {"protocol": "org-iso-mdoc", "data": data}]},
               "digital": {"digital": {"requests": [{"protocol": "org-iso-mdoc", "data": data}]}}}[framing]
    return json.dumps(wrapped).encode(), {"sk": sk, "transcript": transcript, "docs": docs}


def verify(response_bytes, state, iaca, now, full=False):
    """Decrypts and verifies a response; returns {docType: sorted element names}, or with full=True
    (names, {docType: {name: value}}, {docType: {ns/elem: code}} errors, documentErrors list)."""
    text = response_bytes.lstrip()
    if text[:1] == b"{":
        j = json.loads(text)
        er_bytes = unb64u(j["data"]["response"] if "data" in j else j["response"])
    else:
        er_bytes = response_bytes
    er = cbor2.loads(er_bytes)
    assert er[0] == "dcapi", "EncryptedResponse label"
    skr = SUITE.kem.deserialize_private_key(state["sk"].private_numbers().private_value.to_bytes(32, "big"))
    ctx = SUITE.create_recipient_context(er[1]["enc"], skr, info=state["transcript"])
    plaintext = ctx.open(er[1]["cipherText"], aad=b"")
    dr = cbor2.loads(plaintext)
    assert dr["version"] == "1.0" and dr["status"] == 0, "DeviceResponse version/status"
    disclosed, values, errors = {}, {}, {}
    for doc in dr["documents"]:
        isd = doc["issuerSigned"]
        prot, unprot, payload, sig = isd["issuerAuth"]
        x5 = unprot[33]
        chain = [x5] if isinstance(x5, bytes) else list(x5)
        ds = x509.load_der_x509_certificate(chain[0])
        ds.verify_directly_issued_by(iaca)
        assert ds.not_valid_before_utc <= now <= ds.not_valid_after_utc, "DS certificate validity"
        ds.public_key().verify(der_sig(sig), enc(["Signature1", prot, b"", payload]), ec.ECDSA(hashes.SHA256()))
        mso = cbor2.loads(cbor2.loads(payload).value)
        assert mso["docType"] == doc["docType"], "MSO docType"
        vi = mso["validityInfo"]
        def t(x): return datetime.datetime.fromisoformat(str(x.value if isinstance(x, CBORTag) else x).replace("Z", "+00:00"))
        assert t(vi["validFrom"]) <= now <= t(vi["validUntil"]), "MSO validity"
        names = []
        for ns, items in isd.get("nameSpaces", {}).items():  # optional (18013-5: ? "nameSpaces")
            for item in items:
                digest = hashlib.sha256(enc(item)).digest()
                inner = cbor2.loads(item.value)
                assert mso["valueDigests"][ns][inner["digestID"]] == digest, "value digest"
                names.append(f"{ns}/{inner['elementIdentifier']}")
                values.setdefault(doc["docType"], {})[f"{ns}/{inner['elementIdentifier']}"] = (inner["elementValue"], bytes(item.value))
        ds_ = doc["deviceSigned"]
        st = cbor2.loads(state["transcript"])
        dab = enc(CBORTag(24, enc(["DeviceAuthentication", st, doc["docType"], ds_["nameSpaces"]])))
        dprot, _, dpayload, dsig = ds_["deviceAuth"]["deviceSignature"]
        assert dpayload is None, "detached device signature"
        cose_key_to_public(mso["deviceKeyInfo"]["deviceKey"]).verify(der_sig(dsig), enc(["Signature1", dprot, b"", dab]), ec.ECDSA(hashes.SHA256()))
        disclosed[doc["docType"]] = sorted(names)
        for ns, elems in doc.get("errors", {}).items():
            for e, code in elems.items():
                errors.setdefault(doc["docType"], {})[f"{ns}/{e}"] = code
    if full:
        return disclosed, values, errors, [list(e.items())[0] for e in dr.get("documentErrors", [])]
    return disclosed


def issued_items(path):
    """{ns/elem: (value, IssuerSignedItemBytes content)} read straight from an IssuerSigned file."""
    isd = cbor2.loads(open(path, "rb").read())
    out = {}
    for ns, items in isd.get("nameSpaces", {}).items():  # optional (18013-5: ? "nameSpaces")
        for item in items:
            inner = cbor2.loads(item.value)
            out[f"{ns}/{inner['elementIdentifier']}"] = (inner["elementValue"], bytes(item.value))
    return out


# With --pkcs11: `--context DIR` of a copy of the built-in context whose keys live in a SoftHSM2 token.
CONTEXT_ARGS = []


def run_cli(cli, raw, args):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        f.write(raw); f.flush()
        p = subprocess.run([cli, "respond", "--request", f.name, "--origin", ORIGIN] + CONTEXT_ARGS + list(args), capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--vectors", required=True)
    ap.add_argument("--pkcs11", action="store_true",
                    help="answer from a copy of the built-in context whose device keys are in a SoftHSM2 token")
    a = ap.parse_args()
    if a.pkcs11:
        import atexit, token_context
        ctx, root = token_context.build(a.cli, a.vectors)
        atexit.register(token_context.cleanup, root)
        CONTEXT_ARGS[:] = ["--context", ctx]
    pki = os.path.join(a.vectors, "pki")
    iaca = x509.load_der_x509_certificate(open(os.path.join(pki, "iaca.der"), "rb").read())
    reader_key = serialization.load_pem_private_key(open(os.path.join(pki, "reader.key.pem"), "rb").read(), None)
    reader_chain = [open(os.path.join(pki, "reader.der"), "rb").read()]
    now = datetime.datetime.now(datetime.timezone.utc)
    mdl, mns = "org.iso.18013.5.1.mDL", "org.iso.18013.5.1"
    pid = "eu.europa.ec.eudi.pid.1"
    passed = failed = 0
    cases = []
    for framing in ["data", "protocol", "requests", "digital"]:
        for version in ["1.0", "1.1"]:
            for signing in ["none", "readerAuth", "readerAuthAll"]:
                if signing == "readerAuthAll" and version == "1.0":
                    continue
                cases.append((f"{framing}-{version}-{signing}", [(mdl, mns, ["family_name", "birth_date", "portrait", "age_over_18"])], framing, version, signing, "auto"))
    cases.append(("pid-json", [(pid, pid, ["given_name", "age_over_18"])], "digital", "1.0", "readerAuth", "json"))
    cases.append(("multi-doc-cbor", [(mdl, mns, ["family_name"]), (pid, pid, ["nationality"])], "data", "1.0", "none", "cbor"))
    for name, docs, framing, version, signing, fmt in cases:
        try:
            raw, state = build_request(docs, framing, version, signing, reader_key, reader_chain)
            rc, out, err = run_cli(a.cli, raw, ["--format", fmt])
            assert rc == 0, f"CLI exit {rc}: {err.strip()}"
            disclosed = verify(out, state, iaca, now)
            expected = {d: sorted(f"{ns}/{e}" for e in elems) for d, ns, elems in docs}
            assert disclosed == expected, f"disclosed {disclosed} != {expected}"
            passed += 1
        except Exception as e:
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
    # A refused request: wrong origin for a signed request must exit 1 with no output.
    raw, state = build_request([(mdl, mns, ["family_name"])], "data", "1.0", "readerAuth", reader_key, reader_chain)
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        f.write(raw); f.flush()
        p = subprocess.run([a.cli, "respond", "--request", f.name, "--origin", "https://evil.example"] + CONTEXT_ARGS, capture_output=True)
    if p.returncode == 1 and not p.stdout and b"readerAuthenticationFailed" in p.stderr:
        passed += 1
    else:
        failed += 1
        print("FAIL wrong-origin: expected exit 1 with readerAuthenticationFailed")

    # alternativeDataElements: the substitute is released by default, never when only the requested
    # elements are approved, and a set naming the whole credential is never honoured.
    subst = [(mdl, mns, ["age_over_25", "family_name"])]
    for name, alts, approve, expected_rc, expected in [
            ("substitute-default", {"age_over_25": [["birth_date"]]}, "all", 0, [f"{mns}/birth_date", f"{mns}/family_name"]),
            ("substitute-not-approved", {"age_over_25": [["birth_date"]]}, f"{mns}/age_over_25,{mns}/family_name", 0, [f"{mns}/family_name"]),
            ("substitute-half-set-approved", {"age_over_25": [["birth_date", "issue_date"]]}, f"{mns}/family_name,{mns}/birth_date", 0, [f"{mns}/family_name"]),
            ("substitute-whole-credential", {"age_over_25": [["family_name", "given_name", "birth_date", "portrait", "document_number", "resident_address",
                                                             "issue_date", "expiry_date"]]}, "all", 0, [f"{mns}/family_name"]),
            ("substitute-other-namespace", {"age_over_25": [["birth_date"]]}, "all", 0, None)]:
        try:
            d = subst if name != "substitute-other-namespace" else [(mdl, mns, ["age_over_25", "family_name"])]
            raw, state = build_request(d, "data", "1.1", "none", reader_key, reader_chain, alternatives=alts)
            if name == "substitute-other-namespace":
                # Rewrite the alternative into another namespace: the wallet must not honour it.
                j = json.loads(raw)
                dr = cbor2.loads(unb64u(j["deviceRequest"]))
                ir = cbor2.loads(dr["docRequests"][0]["itemsRequest"].value)
                ir["requestInfo"]["alternativeDataElements"][0]["alternativeElementSets"] = [[["org.iso.18013.5.1.aamva", "birth_date"]]]
                dr["docRequests"][0]["itemsRequest"] = CBORTag(24, enc(ir))
                j["deviceRequest"] = b64u(enc(dr))
                raw = json.dumps(j).encode()
                expected = [f"{mns}/family_name"]
            rc, out, err = run_cli(a.cli, raw, ["--approve", approve])
            assert rc == expected_rc, f"CLI exit {rc}: {err.strip()}"
            disclosed = verify(out, state, iaca, now)
            assert disclosed == {mdl: expected}, f"disclosed {disclosed} != {expected}"
            passed += 1
        except Exception as e:
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")

    # A reader with a valid signature whose self-signed certificate chains to no anchor: answered.
    try:
        rogue = ec.generate_private_key(ec.SECP256R1())
        rname = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Python Demo Verifier")])
        rcert = (x509.CertificateBuilder().subject_name(rname).issuer_name(rname).public_key(rogue.public_key()).serial_number(5)
                 .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30)).sign(rogue, hashes.SHA256()))
        raw, state = build_request([(mdl, mns, ["family_name"])], "digital", "1.0", "readerAuth", rogue, [rcert.public_bytes(serialization.Encoding.DER)])
        rc, out, err = run_cli(a.cli, raw, [])
        assert rc == 0, f"CLI exit {rc}: {err.strip()}"
        assert verify(out, state, iaca, now) == {mdl: [f"{mns}/family_name"]}
        passed += 1
    except Exception as e:
        failed += 1
        print(f"FAIL self-signed reader answered: {type(e).__name__}: {e}")

    # Element values: what comes back is byte for byte what the issuer signed, read independently
    # from the credential file; missing elements are reported under --missing report; an optional use
    # case nobody can answer is listed in documentErrors.
    try:
        issued = issued_items(os.path.join(a.vectors, "credentials", "mdl.issuer-signed.cbor"))
        asked = ["family_name", "given_name", "birth_date", "age_over_21", "driving_privileges", "portrait"]
        raw, state = build_request([(mdl, mns, asked)], "data", "1.0", "none", reader_key, reader_chain)
        rc, out, err = run_cli(a.cli, raw, [])
        assert rc == 0, f"CLI exit {rc}: {err.strip()}"
        _, values, _, _ = verify(out, state, iaca, now, full=True)
        assert sorted(values[mdl]) == sorted(f"{mns}/{e}" for e in asked), f"released {sorted(values[mdl])}"
        for k, (v, item) in values[mdl].items():
            assert item == issued[k][1], f"{k}: IssuerSignedItemBytes differ from the issued ones"
            assert v == issued[k][0], f"{k}: value differs from the issued one"
        assert values[mdl][f"{mns}/family_name"][0] == "Mustermann"
        passed += 1
    except Exception as e:
        failed += 1
        print(f"FAIL element values: {type(e).__name__}: {e}")
    try:
        docs = [(mdl, mns, ["family_name", "biometric_template_face", "age_over_99"]), ("org.example.library-card.1", "org.example.library", ["member_id"])]
        raw, state = build_request(docs, "digital", "1.1", "none", reader_key, reader_chain, use_cases=[(True, [[0]]), (False, [[1]])])
        rc, out, err = run_cli(a.cli, raw, ["--missing", "report"])
        assert rc == 0, f"CLI exit {rc}: {err.strip()}"
        disclosed, _, errors, doc_errors = verify(out, state, iaca, now, full=True)
        assert disclosed == {mdl: [f"{mns}/family_name"]}, f"disclosed {disclosed}"
        assert errors == {mdl: {f"{mns}/age_over_99": 0, f"{mns}/biometric_template_face": 0}}, f"errors {errors}"
        assert doc_errors == [("org.example.library-card.1", 0)], f"documentErrors {doc_errors}"
        rc, out, err = run_cli(a.cli, raw, [])
        disclosed, _, errors, doc_errors = verify(out, state, iaca, now, full=True)
        assert rc == 0 and errors == {} and doc_errors == [], "omitted by default"
        # The mandatory use case unanswerable: refused, no output.
        raw, state = build_request(docs, "digital", "1.1", "none", reader_key, reader_chain, use_cases=[(True, [[1]])])
        rc, out, err = run_cli(a.cli, raw, [])
        assert rc == 1 and not out and "cannotSatisfyRequest" in err, f"exit {rc}: {err.strip()}"
        passed += 1
    except Exception as e:
        failed += 1
        print(f"FAIL missing elements and use cases: {type(e).__name__}: {e}")

    # A credential issued by pymdoccbor, with the peer's own IACA → DS chain and device key.
    try:
        from pymdoccbor.mdoc.issuer import MdocCborIssuer
        iaca_key = ec.generate_private_key(ec.SECP256R1()); ds_key = ec.generate_private_key(ec.SECP256R1())
        def name(cn): return x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "PY"), x509.NameAttribute(NameOID.COMMON_NAME, cn)])
        nb = now - datetime.timedelta(days=1); na = now + datetime.timedelta(days=365)
        py_iaca = (x509.CertificateBuilder().subject_name(name("Python IACA")).issuer_name(name("Python IACA")).public_key(iaca_key.public_key())
                   .serial_number(1).not_valid_before(nb).not_valid_after(na).add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                   .sign(iaca_key, hashes.SHA256()))
        py_ds = (x509.CertificateBuilder().subject_name(name("Python DS")).issuer_name(name("Python IACA")).public_key(ds_key.public_key())
                 .serial_number(2).not_valid_before(nb).not_valid_after(na).add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                 .sign(iaca_key, hashes.SHA256()))
        device = ec.generate_private_key(ec.SECP256R1())
        dn = device.public_key().public_numbers()
        issuer = MdocCborIssuer(private_key={"KTY": "EC2", "CURVE": "P_256", "ALG": "ES256",
                                             "D": ds_key.private_numbers().private_value.to_bytes(32, "big"), "KID": b"py-ds"}, alg="ES256")
        signed = issuer.new(data={mns: {"family_name": "Python", "given_name": "Peer", "age_over_18": True}}, doctype=mdl,
                            validity={"issuance_date": (now - datetime.timedelta(days=1)).date().isoformat(), "expiry_date": na.date().isoformat()},
                            devicekeyinfo={"KTY": "EC2", "CURVE": "P_256", "X": dn.x.to_bytes(32, "big"), "Y": dn.y.to_bytes(32, "big")},
                            x509_chain=[py_ds.public_bytes(serialization.Encoding.DER)])
        issuer_signed = cbor2.dumps(signed["documents"][0]["issuerSigned"])
        with tempfile.TemporaryDirectory() as d:
            ctxdir = os.path.join(d, "ctx")
            open(os.path.join(d, "is.cbor"), "wb").write(issuer_signed)
            open(os.path.join(d, "dk.pem"), "wb").write(device.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
            for args in (["context", "init", "--context", ctxdir],
                         ["context", "import", "--context", ctxdir, "--issuer-signed", os.path.join(d, "is.cbor"), "--device-key", os.path.join(d, "dk.pem"), "--id", "py"]):
                p = subprocess.run([a.cli] + args, capture_output=True)
                assert p.returncode == 0, f"{args[1]}: {p.stderr.decode().strip()}"
            raw, state = build_request([(mdl, mns, ["family_name", "age_over_18"])], "digital", "1.0", "none", reader_key, reader_chain)
            rc, out, err = run_cli(a.cli, raw, ["--context", ctxdir])
            assert rc == 0, f"CLI exit {rc}: {err.strip()}"
            disclosed = verify(out, state, py_iaca, datetime.datetime.now(datetime.timezone.utc))
            assert disclosed == {mdl: [f"{mns}/age_over_18", f"{mns}/family_name"]}, f"disclosed {disclosed}"
        passed += 1
    except Exception as e:
        failed += 1
        print(f"FAIL pymdoccbor-issued credential: {type(e).__name__}: {e}")
    print(f"annexc interop{' (pkcs11)' if a.pkcs11 else ''}: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Independent OpenID4VP (over the Digital Credentials API) verifier for mdoc-respond's CLI. Uses only
jwcrypto (JWS, JWE, JWK thumbprints), cbor2 and cryptography (no code from this project): it builds
requests like a verifier page (unsigned; signed with x509_san_dns and x509_hash; multisigned in the
three deployed placements; dc_api and dc_api.jwt; DCQL with claim sets, values and credential sets),
runs `mdoc-respond respond`, then opens and verifies every answer itself: the JWE, the
OpenID4VPDCAPIHandover SessionTranscript computed here, the issuer signature and chain, every digest,
the device signature, and that exactly the selected claims were disclosed.

usage: openid4vp_peer.py --cli PATH --vectors TestVectors/   (prints 'openid4vp interop: N passed, M failed')
"""
import argparse, base64, datetime, hashlib, json, os, subprocess, sys, tempfile

import cbor2
from cbor2 import CBORTag
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.x509.oid import NameOID
from jwcrypto import jwe, jwk, jws

ORIGIN = "https://verifier.example"
MDL, MNS = "org.iso.18013.5.1.mDL", "org.iso.18013.5.1"
PID = "eu.europa.ec.eudi.pid.1"
CLOCK = "2026-06-01T12:00:00Z"


def b64u(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def unb64u(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
def enc(x): return cbor2.dumps(x, canonical=True)
def der_sig(raw):
    n = len(raw) // 2
    return encode_dss_signature(int.from_bytes(raw[:n], "big"), int.from_bytes(raw[n:], "big"))


def make_pki():
    """A verifier CA and a request-signing leaf (SAN verifier.example), generated here."""
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Peer Verifier CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Peer Verifier")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("verifier.example")]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return key, leaf


def client_id(scheme, leaf):
    der = leaf.public_bytes(serialization.Encoding.DER)
    return "x509_san_dns:verifier.example" if scheme == "dns" else "x509_hash:" + b64u(hashlib.sha256(der).digest())


def sign_compact(payload, header, key):
    s = jws.JWS(payload)
    s.add_signature(jwk.JWK.from_pyca(key), alg="ES256", protected=json.dumps(header))
    return s.serialize(compact=True)


def build(queries, form="unsigned", mode="dc_api.jwt", encs=None, sets=None, pki=None, expected=None, extra=None, framing="digital"):
    """queries: list of DCQL credential query dicts. Returns (raw bytes, state)."""
    nonce = b64u(os.urandom(16))
    params = {"response_type": "vp_token", "response_mode": mode, "nonce": nonce,
              "dcql_query": {"credentials": queries, **({"credential_sets": sets} if sets else {})}}
    state = {"nonce": nonce, "mode": mode, "queries": queries, "sets": sets, "form": form}
    if mode == "dc_api.jwt":
        k = jwk.JWK.generate(kty="EC", crv="P-256", kid="peer-enc", use="enc", alg="ECDH-ES")
        meta = {"jwks": {"keys": [json.loads(k.export_public())]}}
        if encs is not None:
            meta["encrypted_response_enc_values_supported"] = encs
        params["client_metadata"] = meta
        state["key"] = k
    params.update(extra or {})
    if form == "unsigned":
        data = params
    else:
        key, leaf = pki
        der = leaf.public_bytes(serialization.Encoding.DER)
        x5c = [base64.b64encode(der).decode()]
        params["expected_origins"] = expected or [ORIGIN]
        if form in ("signed-dns", "signed-hash"):
            params = {"client_id": client_id(form.split("-")[1], leaf), **params}
            header = {"alg": "ES256", "typ": "oauth-authz-req+jwt", "x5c": x5c}
            data = {"request": sign_compact(json.dumps(params).encode(), header, key)}
        else:
            s = jws.JWS(json.dumps(params).encode())
            for scheme in ("dns", "hash"):
                s.add_signature(jwk.JWK.from_pyca(key), alg="ES256",
                                protected=json.dumps({"alg": "ES256", "typ": "oauth-authz-req+jwt", "x5c": x5c, "client_id": client_id(scheme, leaf)}))
            obj = json.loads(s.serialize())
            data = {"multi-top": obj, "multi-object": {"request": obj}, "multi-string": {"request": json.dumps(obj)}}[form]
    protocol = "openid4vp-v1-" + ("unsigned" if form == "unsigned" else "signed" if form.startswith("signed") else "multisigned")
    entry = {"protocol": protocol, "data": data}
    raw = {"digital": {"digital": {"requests": [entry]}}, "requests": {"requests": [entry]}, "protocol": entry, "data": data}[framing]
    state["protocol"] = protocol
    return json.dumps(raw).encode(), state


def transcript(state):
    thumb = unb64u(state["key"].thumbprint()) if state["mode"] == "dc_api.jwt" else None
    info = enc([ORIGIN, state["nonce"], thumb])
    return enc([None, None, ["OpenID4VPDCAPIHandover", hashlib.sha256(info).digest()]])


def verify_document(doc, st, iaca, now):
    """Issuer signature and chain, MSO validity, digests, device signature; returns {ns/elem: value}."""
    isd = doc["issuerSigned"]
    prot, unprot, payload, sig = isd["issuerAuth"]
    x5 = unprot[33]
    ds = x509.load_der_x509_certificate(x5 if isinstance(x5, bytes) else x5[0])
    ds.verify_directly_issued_by(iaca)
    ds.public_key().verify(der_sig(sig), enc(["Signature1", prot, b"", payload]), ec.ECDSA(hashes.SHA256()))
    mso = cbor2.loads(cbor2.loads(payload).value)
    assert mso["docType"] == doc["docType"], "MSO docType"
    out = {}
    for ns, items in isd.get("nameSpaces", {}).items():
        for item in items:
            inner = cbor2.loads(item.value)
            assert mso["valueDigests"][ns][inner["digestID"]] == hashlib.sha256(enc(item)).digest(), "value digest"
            out[f"{ns}/{inner['elementIdentifier']}"] = inner["elementValue"]
    dsg = doc["deviceSigned"]
    dab = enc(CBORTag(24, enc(["DeviceAuthentication", cbor2.loads(st), doc["docType"], dsg["nameSpaces"]])))
    dprot, _, dpayload, dsig = dsg["deviceAuth"]["deviceSignature"]
    assert dpayload is None, "detached device signature"
    k = mso["deviceKeyInfo"]["deviceKey"]
    pub = ec.EllipticCurvePublicNumbers(int.from_bytes(k[-2], "big"), int.from_bytes(k[-3], "big"), ec.SECP256R1()).public_key()
    pub.verify(der_sig(dsig), enc(["Signature1", dprot, b"", dab]), ec.ECDSA(hashes.SHA256()))
    return out


def open_response(out, state, iaca, now, expect_enc=None):
    """Returns {query id: [{ns/elem: value}, ...]} after verifying everything."""
    j = json.loads(out)
    if "protocol" in j:
        assert j["protocol"] == state["protocol"], "response protocol"
        j = j["data"]
    if state["mode"] == "dc_api.jwt":
        assert set(j) == {"response"}, "dc_api.jwt response members"
        token = jwe.JWE()
        token.deserialize(j["response"], key=state["key"])
        header = json.loads(token.objects["protected"])
        assert header["alg"] == "ECDH-ES" and header["kid"] == "peer-enc", "JWE header"
        if expect_enc:
            assert header["enc"] == expect_enc, f"JWE enc {header['enc']}"
        payload = json.loads(token.payload)
    else:
        assert "response" not in j, "dc_api response is in the clear"
        payload = j
    assert set(payload) == {"vp_token"}, "payload members"
    st = transcript(state)
    result = {}
    for qid, presentations in payload["vp_token"].items():
        docs = []
        for p in presentations:
            dr = cbor2.loads(unb64u(p))
            assert dr["version"] == "1.0" and dr["status"] == 0 and len(dr["documents"]) == 1, "one document per DeviceResponse"
            docs.append(verify_document(dr["documents"][0], st, iaca, now))
        result[qid] = docs
    return result


# With --pkcs11: `--context DIR` of a copy of the built-in context whose keys live in a SoftHSM2 token.
CONTEXT_ARGS = []


def run_cli(cli, raw, args=()):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        f.write(raw); f.flush()
        p = subprocess.run([cli, "respond", "--request", f.name, "--origin", ORIGIN, "--clock", CLOCK] + CONTEXT_ARGS + list(args), capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode()


def q(qid, doctype, ns, elems, **kw):
    claims = [{"path": [ns, e], **({"id": e} if kw.get("ids") else {})} for e in elems]
    for e, values in kw.get("values", {}).items():
        next(c for c in claims if c["path"][1] == e)["values"] = values
    out = {"id": qid, "format": "mso_mdoc", "meta": {"doctype_value": doctype}, "claims": claims}
    if "claim_sets" in kw:
        out["claim_sets"] = kw["claim_sets"]
    return out


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
    iaca = x509.load_der_x509_certificate(open(os.path.join(a.vectors, "pki", "iaca.der"), "rb").read())
    now = datetime.datetime(2026, 6, 1, 12, tzinfo=datetime.timezone.utc)
    pki = make_pki()
    passed = failed = 0

    def case(name, fn):
        nonlocal passed, failed
        try:
            fn()
            passed += 1
        except Exception as e:
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")

    base = [q("mdl", MDL, MNS, ["family_name", "age_over_18"])]
    for form in ["unsigned", "signed-dns", "signed-hash", "multi-top", "multi-object", "multi-string"]:
        for mode in ["dc_api", "dc_api.jwt"]:
            for framing in (["digital", "data"] if form == "unsigned" else ["digital"]):
                def run(form=form, mode=mode, framing=framing):
                    raw, state = build(base, form=form, mode=mode, pki=pki, framing=framing)
                    rc, out, err = run_cli(a.cli, raw)
                    assert rc == 0, f"CLI exit {rc}: {err.strip()}"
                    got = open_response(out, state, iaca, now)
                    assert got == {"mdl": [{f"{MNS}/family_name": "Mustermann", f"{MNS}/age_over_18": True}]}, got
                case(f"{form}-{mode}-{framing}", run)

    def expect(queries, expected, expect_enc=None, **kw):
        raw, state = build(queries, **kw)
        rc, out, err = run_cli(a.cli, raw)
        assert rc == 0, f"CLI exit {rc}: {err.strip()}"
        got = open_response(out, state, iaca, now, expect_enc=expect_enc)
        names = {k: [sorted(d) for d in v] for k, v in got.items()}
        assert names == expected, f"{names} != {expected}"

    def refuse(queries, code, **kw):
        raw, _ = build(queries, **kw)
        rc, out, err = run_cli(a.cli, raw)
        assert rc == 1 and not out and f"error[{code}]" in err, f"exit {rc}, {len(out)} bytes, {err.strip()}"

    e = lambda *names: sorted(f"{MNS}/{n}" for n in names)
    case("claim-sets-first-satisfiable", lambda: expect(
        [q("age", MDL, MNS, ["age_over_25", "age_over_18", "birth_date"], ids=True, claim_sets=[["age_over_25"], ["age_over_18"], ["birth_date"]])],
        {"age": [e("age_over_18")]}))
    case("values-match", lambda: expect(
        [q("m", MDL, MNS, ["issuing_country", "age_over_21"], values={"issuing_country": ["UT"], "age_over_21": [True]})],
        {"m": [e("issuing_country", "age_over_21")]}))
    case("values-integer", lambda: expect([q("m", MDL, MNS, ["age_birth_year"], values={"age_birth_year": [1971]})], {"m": [e("age_birth_year")]}))
    case("values-mismatch-refused", lambda: refuse([q("m", MDL, MNS, ["issuing_country"], values={"issuing_country": ["DE"]})], "cannotSatisfyRequest"))  # as a decline: the page cannot tell
    case("values-choose-set", lambda: expect(
        [q("m", MDL, MNS, ["age_over_65", "age_over_18"], ids=True, values={"age_over_65": [True]}, claim_sets=[["age_over_65"], ["age_over_18"]])],
        {"m": [e("age_over_18")]}))
    case("credential-sets-optional-pid", lambda: expect(
        [q("mdl", MDL, MNS, ["family_name"]), q("pid", PID, PID, ["nationality"]), q("photo", "org.iso.23220.photoid.1", "org.iso.23220.1", ["family_name"])],
        {"mdl": [e("family_name")], "pid": [[f"{PID}/nationality"]]},
        sets=[{"options": [["photo"], ["mdl"]]}, {"options": [["pid"]], "required": False}]))
    case("credential-sets-required-missing", lambda: refuse(
        [q("photo", "org.iso.23220.photoid.1", "org.iso.23220.1", ["family_name"])], "cannotSatisfyRequest", sets=[{"options": [["photo"]]}]))
    case("no-claims", lambda: expect([{"id": "m", "format": "mso_mdoc", "meta": {"doctype_value": MDL}}], {"m": [[]]}))
    case("enc-A256GCM-preferred", lambda: expect(base, {"mdl": [e("family_name", "age_over_18")]}, encs=["A128GCM", "A256GCM"], expect_enc="A256GCM"))
    case("enc-A128GCM-default", lambda: expect(base, {"mdl": [e("family_name", "age_over_18")]}, expect_enc="A128GCM"))
    case("expected-origins-mismatch", lambda: refuse(base, "originMismatch", form="signed-dns", pki=pki, expected=["https://verifier.example/"]))
    case("transaction-data-refused", lambda: refuse(base, "unsupportedTransactionData", extra={"transaction_data": [b64u(b'{"type":"x","credential_ids":["mdl"]}')]}))

    def alg_none():
        params = {"client_id": client_id("dns", pki[1]), "response_type": "vp_token", "response_mode": "dc_api", "nonce": "n",
                  "dcql_query": {"credentials": base}, "expected_origins": [ORIGIN]}
        compact = b64u(json.dumps({"alg": "none", "typ": "oauth-authz-req+jwt"}).encode()) + "." + b64u(json.dumps(params).encode()) + "."
        raw = json.dumps({"digital": {"requests": [{"protocol": "openid4vp-v1-signed", "data": {"request": compact}}]}}).encode()
        rc, out, err = run_cli(a.cli, raw)
        assert rc == 1 and not out and "error[readerAuthenticationFailed]" in err, err
    case("alg-none-refused", alg_none)

    print(f"openid4vp interop{' (pkcs11)' if a.pkcs11 else ''}: {passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 else 1)


if __name__ == "__main__":
    main()

"""The third privacy review through the Python binding (and so the C ABI): a document is presented
only when the approval covers it, in both protocols and every approval form; the consent model
follows its published schema (include/mdoc_consent_model.schema.json) and shows intent to retain,
probed values, signers and the document-level choice; a configuration never widens the stored trust
policy; a NUL inside an origin, path or string is refused before C could truncate it."""
import json
import os

import jsonschema
import pytest

import annexc_peer
import openid4vp_peer
from mdoc_respond import Engine, MdocError

MDL, MNS = "org.iso.18013.5.1.mDL", "org.iso.18013.5.1"
PID = "eu.europa.ec.eudi.pid.1"
ORIGIN = annexc_peer.ORIGIN
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = json.load(open(os.path.join(ROOT, "include", "mdoc_consent_model.schema.json")))


def validate(consent):
    jsonschema.Draft202012Validator(SCHEMA).validate(consent)
    assert consent["schemaVersion"] == 1


def no_claims_request(pid_required):
    queries = [openid4vp_peer.q("m", MDL, MNS, ["family_name"]),
               {"id": "p", "format": "mso_mdoc", "meta": {"doctype_value": PID}}]
    sets = None if pid_required else [{"options": [["m"]]}, {"options": [["p"]], "required": False}]
    return openid4vp_peer.build(queries, mode="dc_api.jwt", sets=sets)


def test_openid4vp_query_without_claims_needs_document_consent(context_dir, pki, now):
    raw, state = no_claims_request(pid_required=False)
    with Engine(context_dir, config={"protocol": "openID4VP"}) as engine, engine.parse(raw, ORIGIN) as request:
        consent = request.consent
        validate(consent)
        assert [d["presentableWithoutElements"] for d in consent["documents"]] == [False, True]

        def opened(approve):
            return openid4vp_peer.open_response(request.respond(approve=approve), state, pki["iaca"], now)
        assert set(opened("all")) == {"m", "p"}
        assert set(opened({0: [f"{MNS}/family_name"], 1: []})) == {"m", "p"}
        # Leaving the query out, or approving elements only, never presents the PID.
        assert set(opened([f"{MNS}/family_name"])) == {"m"}
        assert set(opened({0: [f"{MNS}/family_name"]})) == {"m"}
        for nothing in ([], {}):
            with pytest.raises(MdocError) as e:
                request.respond(approve=nothing)
            assert e.value.name == "cannotSatisfyRequest"


def test_annexc_document_consent(context_dir, pki, now):
    raw, state = annexc_peer.build_request([(MDL, MNS, ["family_name"])], "digital", "1.0", "none",
                                           pki["reader_key"], pki["reader_chain"])
    with Engine(context_dir) as engine, engine.parse(raw, ORIGIN) as request:
        validate(request.consent)
        assert request.consent["documents"][0]["presentableWithoutElements"] is True
        for nothing in ([], {}, {1: []}):
            with pytest.raises(MdocError) as e:
                request.respond(approve=nothing)
            assert e.value.name == "cannotSatisfyRequest"
        assert annexc_peer.verify(request.respond(approve={0: []}), state, pki["iaca"], now) == {MDL: []}


def test_consent_shows_retention_values_and_signers(context_dir, pki):
    verifier_pki = openid4vp_peer.make_pki()
    query = openid4vp_peer.q("mdl", MDL, MNS, ["issuing_country", "family_name"], values={"issuing_country": ["UT"]})
    query["claims"][1]["intent_to_retain"] = True
    raw, _ = openid4vp_peer.build([query], form="signed-dns", mode="dc_api.jwt", pki=verifier_pki)
    with Engine(context_dir) as engine, engine.parse(raw, ORIGIN) as request:
        consent = request.consent
        validate(consent)
        (doc,) = consent["documents"]
        assert doc["elements"] == [
            {"id": f"{MNS}/issuing_country", "intentToRetain": None, "values": ["UT"]},
            {"id": f"{MNS}/family_name", "intentToRetain": True, "values": None},
        ]
        assert [s["clientID"] for s in consent["signers"]] == ["x509_san_dns:verifier.example"]
        assert consent["protocolChoice"]["reason"] == "preferred"
    # A probe that does not match: shown (nothing releasable, and why), not refused at parse.
    probe = openid4vp_peer.q("mdl", MDL, MNS, ["issuing_country"], values={"issuing_country": ["DE"]})
    raw, _ = openid4vp_peer.build([probe], mode="dc_api.jwt")
    with Engine(context_dir) as engine, engine.parse(raw, ORIGIN) as request:
        consent = request.consent
        validate(consent)
        assert consent["documents"][0]["candidates"] == []
        # The holder's other mDLs are shown with why they cannot answer (their own state), in order.
        assert consent["documents"][0]["excluded"] == [
            {"credential": "mdl", "reason": "valueNotAccepted"},
            {"credential": "mdl-expired", "reason": "expired"},
            {"credential": "mdl-not-yet-valid", "reason": "notYetValid"},
            {"credential": "mdl-cancelled", "reason": "cancelled"}]
        with pytest.raises(MdocError) as e:
            request.respond()
        assert e.value.name == "cannotSatisfyRequest"


def test_configuration_never_widens_the_stored_policy(context_dir):
    for config in [{"trust": {"authorities": []}}, {"trust": {"signerProfile": "requestSigner"}},
                   {"trust": {"anchors": []}, "x": 1}]:
        with pytest.raises(MdocError) as e:
            Engine(context_dir, config=config)
        assert e.value.name == "invalidConfiguration"
    Engine(context_dir, config={"trust": {"signerProfile": "requestSigner", "replacePolicy": True}}).close()
    Engine(context_dir, config={"trust": {"requireTrustedReader": True, "authorities": ["0a0b"]}}).close()


def test_nul_is_refused_before_c(context_dir, pki):
    raw, _ = annexc_peer.build_request([(MDL, MNS, ["family_name"])], "digital", "1.0", "readerAuth",
                                       pki["reader_key"], pki["reader_chain"])
    with Engine(context_dir) as engine:
        with pytest.raises(MdocError) as e:
            engine.accept(raw, ORIGIN + "\0.evil.example")
        assert e.value.name == "invalidArgument"
    with pytest.raises(MdocError) as e:
        Engine(context_dir + "\0/elsewhere")
    assert e.value.name == "invalidArgument"

"""The Python binding end to end: requests built and responses verified by the independent peers of
Tests/interop (annexc_peer, openid4vp_peer), two-phase consent with narrower approvals, every error
class surfacing as MdocError with the engine's code, and two threads sharing one engine."""
import json
import os
import threading

import pytest

import annexc_peer
import openid4vp_peer
from mdoc_respond import ABI_VERSION, Engine, MdocError, load_library, status_name

MDL, MNS = "org.iso.18013.5.1.mDL", "org.iso.18013.5.1"
PID = "eu.europa.ec.eudi.pid.1"
ORIGIN = annexc_peer.ORIGIN


def annexc_request(pki, elements=("family_name", "birth_date", "portrait", "age_over_18"), signing="none",
                   framing="digital", docs=None):
    return annexc_peer.build_request(docs or [(MDL, MNS, list(elements))], framing, "1.0", signing,
                                     pki["reader_key"], pki["reader_chain"])


def test_library_and_status_names():
    lib = load_library()
    assert lib.mdoc_abi_version() == ABI_VERSION
    assert status_name(0) == "ok"
    assert status_name(22) == "keyUnavailable"
    assert status_name(101) == "invalidHandle"
    assert status_name(9999) == "unknown"
    # One version: the package's, the library's and the repository's VERSION.
    import mdoc_respond
    from conftest import ROOT
    assert mdoc_respond.__version__ == lib.mdoc_version().decode() == open(os.path.join(ROOT, "VERSION")).read().strip()


@pytest.mark.parametrize("framing", ["data", "protocol", "requests", "digital"])
@pytest.mark.parametrize("signing", ["none", "readerAuth"])
def test_accept_round_trip_verified_independently(context_dir, pki, now, framing, signing):
    raw, state = annexc_request(pki, signing=signing, framing=framing)
    with Engine(context_dir) as engine:
        out = engine.accept(raw, ORIGIN)
    disclosed = annexc_peer.verify(out, state, pki["iaca"], now)
    assert disclosed == {MDL: sorted(f"{MNS}/{e}" for e in ("family_name", "birth_date", "portrait", "age_over_18"))}


def test_two_documents(context_dir, pki, now):
    raw, state = annexc_request(pki, docs=[(MDL, MNS, ["family_name"]), (PID, PID, ["nationality"])], framing="data")
    with Engine(context_dir) as engine:
        disclosed = annexc_peer.verify(engine.accept(raw, ORIGIN), state, pki["iaca"], now)
    assert disclosed == {MDL: [f"{MNS}/family_name"], PID: [f"{PID}/nationality"]}


def test_two_phase_releases_only_what_was_approved(context_dir, pki, now):
    raw, state = annexc_request(pki)
    with Engine(context_dir) as engine, engine.parse(raw, ORIGIN) as request:
        consent = request.consent
        assert consent["protocol"] == "org-iso-mdoc"
        (doc,) = consent["documents"]
        assert doc["docType"] == MDL
        assert sorted(doc["requested"]) == sorted(f"{MNS}/{e}" for e in ("family_name", "birth_date", "portrait", "age_over_18"))
        assert doc["candidates"][0]["credential"] == "mdl"
        assert ORIGIN not in repr(consent)
        narrow = request.respond(approve=[f"{MNS}/age_over_18"])
        assert annexc_peer.verify(narrow, state, pki["iaca"], now) == {MDL: [f"{MNS}/age_over_18"]}
        per_doc = request.respond(approve={0: [f"{MNS}/family_name", f"{MNS}/age_over_18"]}, using={0: "mdl"})
        assert annexc_peer.verify(per_doc, state, pki["iaca"], now) == {MDL: [f"{MNS}/age_over_18", f"{MNS}/family_name"]}
        # Approving an element that was not requested releases nothing more.
        wider = request.respond(approve=[f"{MNS}/age_over_18", f"{MNS}/document_number", f"{MNS}/resident_address"])
        assert annexc_peer.verify(wider, state, pki["iaca"], now) == {MDL: [f"{MNS}/age_over_18"]}
        everything = request.respond()
        assert len(annexc_peer.verify(everything, state, pki["iaca"], now)[MDL]) == 4
        with pytest.raises(MdocError) as e:
            request.respond(approve=[])
        assert e.value.name == "cannotSatisfyRequest"
        with pytest.raises(MdocError) as e:
            request.respond(consented={MDL: [f"{MNS}/family_name"]})
        assert e.value.name == "consentMismatch" and e.value.code == 13


def test_openid4vp_round_trip(context_dir, pki, now):
    verifier_pki = openid4vp_peer.make_pki()
    raw, state = openid4vp_peer.build([openid4vp_peer.q(
        "mdl", MDL, MNS, ["family_name", "age_over_18"], ids=True,
        claim_sets=[["family_name", "age_over_18"], ["age_over_18"]])],
                                      form="signed-dns", mode="dc_api.jwt", pki=verifier_pki)
    with Engine(context_dir, config={"protocol": "openID4VP"}) as engine:
        request = engine.parse(raw, ORIGIN)
        assert request.consent["protocol"].startswith("openid4vp-v1-")
        assert request.consent["credentialQueryIDs"] == ["mdl"]
        got = openid4vp_peer.open_response(request.respond(approve=[f"{MNS}/age_over_18"]), state, pki["iaca"], now)
        assert got == {"mdl": [{f"{MNS}/age_over_18": True}]}
        got = openid4vp_peer.open_response(engine.accept(raw, ORIGIN), state, pki["iaca"], now)
        assert got == {"mdl": [{f"{MNS}/family_name": "Mustermann", f"{MNS}/age_over_18": True}]}


@pytest.mark.parametrize("origin,name,rule", [
    ("ftp://verifier.example", "invalidOrigin", "origin.scheme"),
    ("https://evil.example", "readerAuthenticationFailed", "annexC.signatureInvalid"),
    ("https://" + "a" * 5000, "limitExceeded", None),  # the ABI's own origin bound: no engine rule
])
def test_refusals_carry_the_engine_code(context_dir, pki, origin, name, rule):
    raw, _ = annexc_request(pki, signing="readerAuth")
    with Engine(context_dir) as engine:
        with pytest.raises(MdocError) as e:
            engine.accept(raw, origin)
    assert e.value.name == name
    assert e.value.code == {"invalidOrigin": 3, "readerAuthenticationFailed": 8, "limitExceeded": 15}[name]
    assert e.value.rule == rule
    assert "evil" not in e.value.detail and "verifier" not in e.value.detail


def test_malformed_inputs(context_dir):
    with Engine(context_dir) as engine:
        for raw, name in [(b"not json", "malformedRequest"), (b"{}", "malformedRequest"), (b"", "invalidArgument"),
                          (b"x" * (300 << 10), "limitExceeded")]:
            with pytest.raises(MdocError) as e:
                engine.accept(raw, ORIGIN)
            assert e.value.name == name, raw[:10]
        with pytest.raises(TypeError):
            engine.accept("a string", ORIGIN)
        with pytest.raises(TypeError):
            engine.accept(b"{}", None)


def test_configuration(context_dir, pki):
    raw, _ = annexc_request(pki)
    for config, rule in [({"clokc": "2026-06-01T00:00:00Z"}, "configuration.unknownMember"),
                         ({"limits": {"maxRequestBytes": -1}}, "configuration.outOfRange"),
                         ({"protocol": "x"}, "configuration.notOneOf"),
                         ({"protocols": []}, "configuration.notList"),
                         ({"errorDisclosure": "vague"}, "configuration.notOneOf"),
                         # Time is not configuration: a fixed clock needs the testing switch.
                         ({"clock": "2040-01-01T00:00:00Z"}, "configuration.testingOnly"),
                         ({"clock": "2027-01-01T00:00:00Z", "testing": False}, "configuration.testingOnly")]:
        with pytest.raises(MdocError) as e:
            Engine(context_dir, config=config)
        assert e.value.name == "invalidConfiguration"
        assert e.value.rule == rule
    with Engine(context_dir, config={"trust": {"requireReaderAuthentication": True}}) as strict:
        with pytest.raises(MdocError) as e:
            strict.accept(raw, ORIGIN)
        assert e.value.name == "readerAuthenticationRequired"
    with Engine(context_dir, config={"testing": True, "clock": "2040-01-01T00:00:00Z"}) as late:
        with pytest.raises(MdocError) as e:
            late.accept(raw, ORIGIN)
        assert (e.value.name, e.value.rule) == ("noMatchingCredential", "selection.noUsableCredential")
        with late.parse(raw, ORIGIN) as request:
            assert request.consent["fixedClock"] == "2040-01-01T00:00:00Z"
    with Engine(context_dir) as system_time:
        with system_time.parse(raw, ORIGIN) as request:
            assert request.consent["fixedClock"] is None
    # errorDisclosure uniform: the page cannot tell a credential not held (here: expired) from a decline.
    with Engine(context_dir, config={"testing": True, "clock": "2040-01-01T00:00:00Z", "errorDisclosure": "uniform"}) as late:
        with pytest.raises(MdocError) as e:
            late.accept(raw, ORIGIN)
        assert (e.value.name, e.value.rule) == ("cannotSatisfyRequest", "selection.notAnswered")
    # protocols: an engine answering OpenID4VP only finds no entry in an Annex C request.
    with Engine(context_dir, config={"protocols": ["openID4VP"]}) as oid_only:
        with pytest.raises(MdocError) as e:
            oid_only.accept(raw, ORIGIN)
        assert (e.value.name, e.value.rule) == ("unsupportedProtocol", "framing.noEntry")
    with pytest.raises(MdocError) as e:
        Engine(os.path.join(context_dir, "missing"))
    assert e.value.name == "contextUnavailable"
    os.chmod(os.path.join(context_dir, "context.cbor"), 0o644)
    with pytest.raises(MdocError) as e:
        Engine(context_dir)
    assert e.value.name == "contextInsecure"


def test_snapshot_engine(context_dir, pki, now):
    snapshot = open(os.path.join(context_dir, "context.cbor"), "rb").read()
    raw, state = annexc_request(pki)
    with Engine.from_snapshot(snapshot, config={"keyDirectory": context_dir}) as engine:
        assert MDL in annexc_peer.verify(engine.accept(raw, ORIGIN), state, pki["iaca"], now)
    with Engine.from_snapshot(snapshot) as engine:
        with pytest.raises(MdocError) as e:
            engine.accept(raw, ORIGIN)
        assert e.value.name == "keyUnavailable"
    with pytest.raises(MdocError) as e:
        Engine.from_snapshot(snapshot[:100])
    assert e.value.name == "contextCorrupt"


def test_use_after_close_is_refused(context_dir, pki):
    raw, _ = annexc_request(pki)
    engine = Engine(context_dir)
    request = engine.parse(raw, ORIGIN)
    engine.close()
    engine.close()  # idempotent in Python; the library refuses a second release itself
    with pytest.raises(MdocError) as e:
        engine.accept(raw, ORIGIN)
    assert e.value.name == "invalidHandle"
    assert len(request.respond()) > 0  # a parsed request keeps its engine alive
    request.close()
    with pytest.raises(MdocError) as e:
        request.respond()
    assert e.value.name == "invalidHandle"
    with pytest.raises(MdocError) as e:
        request.consent
    assert e.value.name == "invalidHandle"
    with Engine(context_dir) as engine2, engine2.parse(raw, ORIGIN) as r2:
        with pytest.raises(ValueError):
            r2.respond(approve="some")


def test_two_threads_share_one_engine(context_dir, pki, now):
    requests = [annexc_request(pki, elements=("family_name", "age_over_18")) for _ in range(8)]
    failures, done = [], []
    with Engine(context_dir) as engine:
        def work(k):
            try:
                for i in range(100):
                    raw, state = requests[(k * 100 + i) % len(requests)]
                    out = engine.accept(raw, ORIGIN)
                    if i % 10 == 0:  # verification is slower than the engine; check a tenth
                        assert annexc_peer.verify(out, state, pki["iaca"], now) == {MDL: [f"{MNS}/age_over_18", f"{MNS}/family_name"]}
                    done.append(1)
            except Exception as e:  # pragma: no cover - reported below
                failures.append(repr(e))
        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []
    assert len(done) == 200


def test_device_keys_in_a_softhsm2_token(pki, now, token_contexts):
    """A context whose device keys live only in a SoftHSM2 token (built by Tests/interop/token_context.py
    through softhsm2-util and the CLI): answered through a directory engine and through a snapshot
    engine, which needs no key directory for pkcs11: references."""
    ctx = token_contexts["softhsm2"]
    raw, state = annexc_request(pki, elements=("family_name", "age_over_18"))
    expected = {MDL: [f"{MNS}/age_over_18", f"{MNS}/family_name"]}
    with Engine(ctx) as engine:
        assert annexc_peer.verify(engine.accept(raw, ORIGIN), state, pki["iaca"], now) == expected
    snapshot = open(os.path.join(ctx, "context.cbor"), "rb").read()
    with Engine.from_snapshot(snapshot) as engine:
        assert annexc_peer.verify(engine.accept(raw, ORIGIN), state, pki["iaca"], now) == expected


ZK_DIR = os.environ.get("MDOC_ZK_DIR") or os.path.join(
    os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "mdoc-respond", "zk")


@pytest.mark.skipif(not os.path.exists(os.path.join(ZK_DIR, "lib")) and not os.environ.get("CI"),
                    reason="the Longfellow prover is not installed (scripts/zk-setup.sh)")
def test_zero_knowledge_consent_proof_and_fallback(context_dir, pki, now):
    import zk_peer
    av = zk_peer.AV
    # A required proof: the consent model shows it, the answer is one ZkDocument, verified by google-cpp.
    raw, state = zk_peer.build_request(av, av, ["age_over_18"], [zk_peer.spec(zk_peer.V7_1)], True)
    with Engine(context_dir, config={"zeroKnowledge": {"directory": ZK_DIR}}) as engine:
        with engine.parse(raw, ORIGIN) as request:
            doc = request.consent["documents"][0]
            answer = doc["zeroKnowledge"]["answer"]
            assert answer["form"] == "proof" and answer["circuitHash"] == zk_peer.V7_1[2]
            assert "documentSignerCertificate" in answer["reveals"]
            assert doc["candidates"][0]["provenClaims"] == [{"element": f"{av}/age_over_18", "value": "true"}]
            out = request.respond()
        dr = zk_peer.open_response(out, state)
        assert "documents" not in dr and len(dr["zkDocuments"]) == 1
        zk_peer.verify_zk_document(dr["zkDocuments"][0], state["transcript"], [(av, "age_over_18", True)], pki["iaca"],
                                   zk_peer.V7_1, state["specs"][0]["zkSystemId"], av, now, ZK_DIR)
        # No held circuit and zkRequired false: the fallback is shown, and sent only when approved.
        bogus = zk_peer.spec((7, 1, "00" * 32, 4151, 4096))
        raw, state = zk_peer.build_request(av, av, ["age_over_18"], [bogus], False)
        with engine.parse(raw, ORIGIN) as request:
            answer = request.consent["documents"][0]["zeroKnowledge"]["answer"]
            assert answer["form"] == "plainFallback" and answer["why"] == "zk.noCircuit" and answer["needsApproval"]
            with pytest.raises(MdocError) as e:
                request.respond()
            assert (e.value.name, e.value.rule) == ("zkUnsupported", "zk.fallbackNotApproved")
            out = request.respond(plain_fallback=[0])
        assert len(zk_peer.open_response(out, state)["documents"]) == 1
        # Required with no held circuit: refused at parse, through the C ABI as through Swift.
        raw, _ = zk_peer.build_request(av, av, ["age_over_18"], [bogus], True)
        with pytest.raises(MdocError) as e:
            engine.parse(raw, ORIGIN)
        assert (e.value.name, e.value.rule) == ("zkUnsupported", "zk.noCircuit")


def test_proof_request_beside_openid4vp_is_not_answered_in_plain(context_dir):
    """A page asking for a proof in org-iso-mdoc and the same claim in OpenID4VP: when no proof can be
    made, parse keeps the proof request (accept's rule), never a plain OpenID4VP answer."""
    import json

    import zk_peer
    av = zk_peer.AV
    bogus = zk_peer.spec((7, 1, "00" * 32, 4151, 4096))
    raw_a, state = zk_peer.build_request(av, av, ["age_over_18"], [bogus], False)
    raw_o, _ = openid4vp_peer.build([openid4vp_peer.q("av", av, av, ["age_over_18"])])
    entries = json.loads(raw_a)["digital"]["requests"] + json.loads(raw_o)["digital"]["requests"]
    raw = json.dumps({"digital": {"requests": entries}}).encode()
    with Engine(context_dir) as engine:
        with pytest.raises(MdocError) as e:
            engine.accept(raw, ORIGIN)
        assert e.value.rule == "zk.fallbackNotApproved"
        with engine.parse(raw, ORIGIN) as request:
            consent = request.consent
            assert consent["protocol"] == "org-iso-mdoc"
            assert consent["documents"][0]["zeroKnowledge"]["answer"]["form"] == "plainFallback"
            with pytest.raises(MdocError) as e:
                request.respond()
            assert e.value.rule == "zk.fallbackNotApproved"
            out = request.respond(plain_fallback=[0])
        assert len(zk_peer.open_response(out, state)["documents"]) == 1


def test_open_engine_sees_a_cancel_on_disk(context_dir, pki, now):
    """An engine opened before `mdoc-respond context cancel` (another process) never presents the
    cancelled credential: a request parsed before is refused at respond, the next accept refuses, and a
    reinstated credential answers again, all without reopening the engine."""
    import subprocess

    from conftest import ROOT

    cli = os.environ.get("MDOC_RESPOND_CLI", os.path.join(ROOT, ".build", "debug", "mdoc-respond"))
    if not os.access(cli, os.X_OK):
        pytest.skip("needs the CLI (swift build)")

    def context(*args):
        subprocess.run([cli, "context", *args, "--context", context_dir], check=True, capture_output=True)

    raw, state = annexc_request(pki, elements=("family_name",))
    with Engine(context_dir) as engine:
        assert annexc_peer.verify(engine.accept(raw, ORIGIN), state, pki["iaca"], now) == {MDL: [f"{MNS}/family_name"]}
        with engine.parse(raw, ORIGIN) as request:
            context("cancel", "mdl")
            with pytest.raises(MdocError) as e:
                request.respond()
            assert (e.value.name, e.value.rule) == ("noMatchingCredential", "selection.credentialWithdrawn")
        with pytest.raises(MdocError) as e:
            engine.accept(raw, ORIGIN)
        assert e.value.rule == "selection.noUsableCredential"
        context("reinstate", "mdl")
        assert annexc_peer.verify(engine.accept(raw, ORIGIN), state, pki["iaca"], now) == {MDL: [f"{MNS}/family_name"]}


def test_observer_receives_counts_and_timings_never_content(context_dir, pki, now):
    """An observer gets one event per call (accept, parse, respond, and refusals) with the operation,
    protocol, outcome, reader verdict kind and duration; no request content, value, origin or id."""
    events = []
    raw, state = annexc_request(pki, elements=("family_name",))
    with Engine(context_dir, observer=events.append) as engine:
        annexc_peer.verify(engine.accept(raw, ORIGIN), state, pki["iaca"], now)
        with engine.parse(raw, ORIGIN) as request:
            request.respond()
        with pytest.raises(MdocError):
            engine.accept(b"{}", ORIGIN)
    assert [e["operation"] for e in events] == ["accept", "parse", "respond", "accept"]
    assert [e["protocol"] for e in events] == ["annexC", "annexC", "annexC", None]
    assert [e["code"] for e in events[:3]] == [None, None, None] and [e["rule"] for e in events[:3]] == [None] * 3
    assert events[3]["code"] is not None and events[3]["rule"].startswith("framing.")
    assert events[1]["readerVerdict"] == "notAuthenticated" and events[0]["readerVerdict"] is None
    assert all(isinstance(e["seconds"], float) and 0 <= e["seconds"] < 10 for e in events)
    # Stage durations, in the order the stages ran.
    assert [list(e["stages"]) for e in events] == [
        ["read", "check", "plan", "build", "seal"], ["read", "check", "plan"], ["plan", "build", "seal"], []]
    assert all(0 <= sum(e["stages"].values()) <= e["seconds"] for e in events)
    text = json.dumps(events)
    for secret in (ORIGIN, "family_name", "mdl", "verifier.example"):
        assert secret not in text

import DigitalCredentials
import Foundation
import MdocCBOR
import OpenID4VPReader
import Presentment
import Testing
import TestSupport
import TestWorld
import WebEncoding

@testable import OpenID4VP

/// DCQL semantics end to end: what comes back for claim sets, values, credential sets, queries without
/// claims, trusted authorities and the verifier's algorithm lists, and what the consent model shows.
@Suite("OpenID4VP: DCQL through the one planner")
struct DCQLTests {
    static let ns = TestWorld.mDLNS
    typealias Q = OpenID4VPReader.CredentialQuery
    typealias C = OpenID4VPReader.Claim

    static func e(_ name: String, _ ns: String = DCQLTests.ns) -> ElementID { ElementID(ns, name) }

    /// A world with an mDL and a PID.
    static func fixture() throws -> (TestWorld, DigitalCredentialsEngine) {
        let world = try TestWorld()
        let context = try world.context(
            [try world.entry(id: "mdl"), try world.entry(id: "pid", docType: TestWorld.pid)], trust: world.trusted)
        return (world, TestWorld.engine(context, protocols: [.openID4VP]) { $0.clock = { TestWorld.now } })
    }

    /// Answers in one call and returns the disclosed element names per query id.
    static func answer(
        _ queries: [Q], sets: [OpenID4VPReader.CredentialSet] = [],
        formats: (issuerAuth: [Int64]?, deviceAuth: [Int64]?)? = nil, world: TestWorld, engine: DigitalCredentialsEngine
    ) throws -> [String: [String]] {
        let request = try OpenID4VPReader.makeRequest(
            queries: queries, credentialSets: sets, origin: TestWorld.origin, formats: formats)
        let response = try engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        let verified = try OpenID4VPReader.openResponse(
            response, for: request, issuerRoots: [world.iaca], at: TestWorld.now)
        var out = [String: [String]]()
        for (id, docs) in verified.vpToken { out[id] = docs.flatMap { $0.elements.map(\.element.identifier) } }
        return out
    }

    static func refusal(
        _ queries: [Q], sets: [OpenID4VPReader.CredentialSet] = [],
        formats: (issuerAuth: [Int64]?, deviceAuth: [Int64]?)? = nil, engine: DigitalCredentialsEngine
    ) throws -> PresentmentError? {
        let request = try OpenID4VPReader.makeRequest(
            queries: queries, credentialSets: sets, origin: TestWorld.origin, formats: formats)
        do {
            _ = try engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
            return nil
        } catch { return error }
    }

    @Test("claim_sets: the first set the credential satisfies is released, nothing else")
    func claimSets() throws {
        let (world, engine) = try Self.fixture()
        let q = Q(
            id: "age", docType: TestWorld.mDL,
            claims: [
                C(Self.e("age_over_25"), id: "a25"), C(Self.e("age_over_18"), id: "a18"),
                C(Self.e("birth_date"), id: "bd"),
            ],
            claimSets: [["a25"], ["a18"], ["bd"]])
        #expect(try Self.answer([q], world: world, engine: engine) == ["age": ["age_over_18"]])
    }

    @Test("values: a claim with a non-matching value makes the credential unable to answer")
    func values() throws {
        let (world, engine) = try Self.fixture()
        let ok = Q(
            id: "m", docType: TestWorld.mDL,
            claims: [
                C(Self.e("issuing_country"), values: [.text("UT")]), C(Self.e("age_over_18"), values: [.bool(true)]),
            ])
        #expect(try Self.answer([ok], world: world, engine: engine) == ["m": ["issuing_country", "age_over_18"]])
        let wrong = Q(id: "m", docType: TestWorld.mDL, claims: [C(Self.e("issuing_country"), values: [.text("DE")])])
        // Refused as a declined request would be (the page cannot tell whether the value matched).
        #expect(try Self.refusal([wrong], engine: engine)?.code == .cannotSatisfyRequest)
        // With claim sets the value decides which set is released.
        let sets = Q(
            id: "m", docType: TestWorld.mDL,
            claims: [C(Self.e("issuing_country"), id: "c", values: [.text("DE")]), C(Self.e("age_over_18"), id: "a")],
            claimSets: [["c"], ["a"]])
        #expect(try Self.answer([sets], world: world, engine: engine) == ["m": ["age_over_18"]])
        // A probe on a later claim only: it applies to its own element, whatever the claims before and
        // after it name (the list of values starts at the first claim that names some).
        let later = Q(
            id: "m", docType: TestWorld.mDL,
            claims: [
                C(Self.e("family_name")), C(Self.e("age_over_18")), C(Self.e("issuing_country"), values: [.text("UT")]),
                C(Self.e("birth_date")),
            ])
        // (Disclosed in the credential's order.)
        #expect(
            try Self.answer([later], world: world, engine: engine)["m"]?.sorted() == [
                "age_over_18", "birth_date", "family_name", "issuing_country",
            ])
        let laterWrong = Q(
            id: "m", docType: TestWorld.mDL,
            claims: [
                C(Self.e("family_name")), C(Self.e("issuing_country"), values: [.text("UT")]), C(Self.e("birth_date")),
                C(Self.e("age_over_18"), values: [.bool(false)]),
            ])
        #expect(try Self.refusal([laterWrong], engine: engine)?.code == .cannotSatisfyRequest)
        let request = try OpenID4VPReader.makeRequest(queries: [laterWrong], origin: TestWorld.origin)
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        #expect(
            parsed.documents.first?.valueConstraints == [
                Self.e("issuing_country"): [.text("UT")], Self.e("age_over_18"): [.bool(false)],
            ])
    }

    @Test("Every query is required without credential_sets; an unanswerable one refuses the whole request")
    func allQueriesRequired() throws {
        let (world, engine) = try Self.fixture()
        let mdl = Q(id: "mdl", docType: TestWorld.mDL, claims: [C(Self.e("family_name"))])
        let pid = Q(id: "pid", docType: TestWorld.pid, claims: [C(Self.e("family_name", TestWorld.pid))])
        #expect(
            try Self.answer([mdl, pid], world: world, engine: engine) == [
                "mdl": ["family_name"], "pid": ["family_name"],
            ])
        let photo = Q(
            id: "photo", docType: "org.iso.23220.photoid.1", claims: [C(Self.e("family_name", "org.iso.23220.1"))])
        #expect(try Self.refusal([mdl, photo], engine: engine)?.code == .noMatchingCredential)
    }

    @Test("credential_sets: required sets by their first answerable option, optional sets when answerable")
    func credentialSets() throws {
        let (world, engine) = try Self.fixture()
        let mdl = Q(id: "mdl", docType: TestWorld.mDL, claims: [C(Self.e("family_name"))])
        let pid = Q(id: "pid", docType: TestWorld.pid, claims: [C(Self.e("family_name", TestWorld.pid))])
        let photo = Q(
            id: "photo", docType: "org.iso.23220.photoid.1", claims: [C(Self.e("family_name", "org.iso.23220.1"))])
        // Identity by photo ID, else mDL; an optional PID.
        let answer = try Self.answer(
            [mdl, pid, photo],
            sets: [.init(options: [["photo"], ["mdl"]]), .init(options: [["pid"]], required: false)],
            world: world, engine: engine)
        #expect(answer == ["mdl": ["family_name"], "pid": ["family_name"]])
        // A required set nothing answers refuses the request.
        #expect(
            try Self.refusal(
                [mdl, photo], sets: [.init(options: [["photo"]]), .init(options: [["mdl"]], required: false)],
                engine: engine)?
                .code == .cannotSatisfyRequest)
        // An optional set nothing answers is left out.
        #expect(
            try Self.answer(
                [mdl, photo], sets: [.init(options: [["mdl"]]), .init(options: [["photo"]], required: false)],
                world: world, engine: engine)
                == ["mdl": ["family_name"]])
        // A query no set names is not answered.
        #expect(
            try Self.answer([mdl, pid], sets: [.init(options: [["mdl"]])], world: world, engine: engine) == [
                "mdl": ["family_name"]
            ])
    }

    @Test("A query without claims returns the document with no issuer-signed elements")
    func noClaims() throws {
        let (world, engine) = try Self.fixture()
        #expect(
            try Self.answer([Q(id: "m", docType: TestWorld.mDL, claims: nil)], world: world, engine: engine) == [
                "m": []
            ])
    }

    @Test("trusted_authorities (aki) and vp_formats_supported filter which credential may answer")
    func authoritiesAndFormats() throws {
        let (world, engine) = try Self.fixture()
        let ski = try #require(world.iaca.subjectKeyIdentifier)
        let claims = [C(Self.e("family_name"))]
        #expect(
            try Self.answer(
                [Q(id: "m", docType: TestWorld.mDL, claims: claims, trustedAuthorities: [[9, 9], ski])], world: world,
                engine: engine)
                == ["m": ["family_name"]])
        #expect(
            try Self.refusal(
                [Q(id: "m", docType: TestWorld.mDL, claims: claims, trustedAuthorities: [[9, 9]])], engine: engine)?
                .code
                == .noMatchingCredential)
        #expect(
            try Self.answer(
                [Q(id: "m", docType: TestWorld.mDL, claims: claims)], formats: ([-9], [-9]), world: world,
                engine: engine) == ["m": ["family_name"]])
        #expect(
            try Self.refusal(
                [Q(id: "m", docType: TestWorld.mDL, claims: claims)], formats: ([-35], nil), engine: engine)?.code
                == .noMatchingCredential)
        #expect(
            try Self.refusal(
                [Q(id: "m", docType: TestWorld.mDL, claims: claims)], formats: (nil, [-36]), engine: engine)?.code
                == .noMatchingCredential)
    }

    @Test("A query of another format never matches; it can be an unchosen option beside an mdoc")
    func otherFormats() throws {
        let (world, engine) = try Self.fixture()
        let sdjwt = Q(id: "sd", docType: "", claims: nil, format: "dc+sd-jwt")
        let mdl = Q(id: "mdl", docType: TestWorld.mDL, claims: [C(Self.e("family_name"))])
        #expect(
            try Self.answer([sdjwt, mdl], sets: [.init(options: [["sd"], ["mdl"]])], world: world, engine: engine)
                == ["mdl": ["family_name"]])
        #expect(try Self.refusal([sdjwt], engine: engine)?.code == .noMatchingCredential)
    }

    @Test("Claims read in one pass: namespaces alternating between claims, escaped member names, members in any order")
    func claimMembers() throws {
        let text = #"""
            {"credentials":[{"id":"q","format":"mso_mdoc","meta":{"doctype_value":"org.iso.18013.5.1.mDL"},"claims":[
            {"path":["org.iso.18013.5.1","family_name"]},
            {"intent_to_retain":true,"path":["org.iso.18013.5.1.aamva","DHS_compliance"]},
            {"p\u0061th":["org.iso.18013.5.1","given_name"],"id":"g"},
            {"values":[true],"path":["org.iso.18013.5.1.aamva","veteran"]},
            {"path":["org.iso.18013.5.1.aamv","x"]}]}]}
            """#
        let entry = try #require(try JSONDocument(Array(text.utf8)).root["credentials"]?.elements?.first)
        let (elements, values, sets) = try DCQLQuery.claims(entry, limits: .init()) { PresentmentError($0) }
        #expect(
            elements.elements.map { $0.id } == [
                ElementID("org.iso.18013.5.1", "family_name"), ElementID("org.iso.18013.5.1.aamva", "DHS_compliance"),
                ElementID("org.iso.18013.5.1", "given_name"), ElementID("org.iso.18013.5.1.aamva", "veteran"),
                ElementID("org.iso.18013.5.1.aamv", "x"),
            ])
        #expect(elements.elements.map { $0.intentToRetain } == [nil, true, nil, nil, nil])
        #expect(values.map { $0 != nil } == [false, false, false, true, false])
        #expect(sets == nil)
        // No claim names values: no list of them (every element takes any value).
        let plain = try #require(
            try JSONDocument(Array(text.replacingOccurrences(of: #""values":[true],"#, with: "").utf8)).root[
                "credentials"]?.elements?.first)
        let (listed, none, _) = try DCQLQuery.claims(plain, limits: .init()) { PresentmentError($0) }
        #expect(listed.count == 5 && none.isEmpty)
    }

    @Test("Consent: the model shows claim sets and values; approval narrows a set or leaves the query unanswered")
    func consent() throws {
        let (world, engine) = try Self.fixture()
        let q = Q(
            id: "age", docType: TestWorld.mDL,
            claims: [C(Self.e("age_over_18"), id: "a18", values: [.bool(true)]), C(Self.e("birth_date"), id: "bd")],
            claimSets: [["a18"], ["bd"]])
        let request = try OpenID4VPReader.makeRequest(queries: [q], origin: TestWorld.origin)
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        let doc = parsed.documents[0]
        #expect(doc.claimSets == [[Self.e("age_over_18")], [Self.e("birth_date")]])
        #expect(doc.valueConstraints == [Self.e("age_over_18"): [.bool(true)]])
        #expect(doc.candidates.first?.releasable == [Self.e("age_over_18")])
        // Declining age_over_18 falls back to the next set, released whole.
        let fallback = try engine.respond(to: parsed, approving: .elements([Self.e("birth_date")]))
        let opened = try OpenID4VPReader.openResponse(
            fallback, for: request, issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(opened.documents(for: "age").first?.elements.map(\.element.identifier) == ["birth_date"])
        // Declining everything leaves the (required) query unanswered: refused.
        expectRefusal(.cannotSatisfyRequest) {
            try engine.respond(to: parsed, approving: .elements([Self.e("family_name")]))
        }
        // A consented summary that lacks a requested element refuses.
        expectRefusal(.consentMismatch) {
            try engine.respond(
                to: parsed, consented: ConsentedRequest(documents: [TestWorld.mDL: [Self.e("age_over_18")]]))
        }
        // A request parsed by this engine is not answered by another front end's respond, and vice versa.
        #expect(parsed.details.openID4VP?.credentialQueryIDs == ["age"])
    }

    @Test("Response encryption: A256GCM when offered (HAIP), A128GCM by default, and the key's kid in the header")
    func encryptionChoice() throws {
        let (world, engine) = try Self.fixture()
        for (offered, expected) in [(["A128GCM", "A256GCM"], "A256GCM"), (nil, "A128GCM"), (["A128GCM"], "A128GCM")]
            as [([String]?, String)]
        {
            let request = try OpenID4VPReader.makeRequest(
                queries: [Q(id: "m", docType: TestWorld.mDL, claims: [C(Self.e("family_name"))])],
                origin: TestWorld.origin, encryptions: offered)
            let response = try engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
            let opened = try OpenID4VPReader.openResponse(
                response, for: request, issuerRoots: [world.iaca], at: TestWorld.now)
            let header = try JSONSerialization.jsonObject(with: Data(try #require(opened.jweHeader))) as? [String: Any]
            #expect(header?["enc"] as? String == expected)
            #expect(header?["kid"] as? String == "enc-1" && header?["alg"] as? String == "ECDH-ES")
        }
    }

    @Test(
        "Response encryption: the first usable jwks entry is the key (later entries unread); enc from the names offered"
    )
    func encryptionKeyAndNames() throws {
        let (world, engine) = try Self.fixture()
        let request = try OpenID4VPReader.makeRequest(
            queries: [Q(id: "m", docType: TestWorld.mDL, claims: [C(Self.e("family_name"))])],
            origin: TestWorld.origin, encryptions: nil)
        // The request with its client_metadata edited.
        func edited(_ edit: (inout [String: Any]) -> Void) throws -> Data {
            var root = try #require(try JSONSerialization.jsonObject(with: request.rawRequest) as? [String: Any])
            var digital = try #require(root["digital"] as? [String: Any])
            var requests = try #require(digital["requests"] as? [[String: Any]])
            var data = try #require(requests[0]["data"] as? [String: Any])
            var metadata = try #require(data["client_metadata"] as? [String: Any])
            edit(&metadata)
            data["client_metadata"] = metadata
            requests[0]["data"] = data
            digital["requests"] = requests
            root["digital"] = digital
            return try JSONSerialization.data(withJSONObject: root)
        }
        let keyFirst = try edited { m in
            var jwks = m["jwks"] as! [String: Any]
            jwks["keys"] = (jwks["keys"] as! [Any]) + ["not a key", 5, ["kty": "EC"]]
            m["jwks"] = jwks
        }
        let cases: [(String, Data, String)] = [
            ("a key, then entries that are not keys", keyFirst, "A128GCM"),
            (
                "A192GCM, A128GCM",
                try edited { $0["encrypted_response_enc_values_supported"] = ["A192GCM", "A128GCM"] }, "A128GCM"
            ),
            ("A256GCM alone", try edited { $0["encrypted_response_enc_values_supported"] = ["A256GCM"] }, "A256GCM"),
            (
                "A256GCM, A128GCM",
                try edited { $0["encrypted_response_enc_values_supported"] = ["A256GCM", "A128GCM"] }, "A256GCM"
            ),
        ]
        for (name, raw, expected) in cases {
            let response = try engine.accept(rawRequest: raw, origin: TestWorld.origin.serialized)
            let opened = try OpenID4VPReader.openResponse(
                response, for: request, issuerRoots: [world.iaca], at: TestWorld.now)
            let header = try JSONSerialization.jsonObject(with: Data(try #require(opened.jweHeader))) as? [String: Any]
            #expect(header?["enc"] as? String == expected, "\(name)")
        }
    }

    @Test(
        "Answerability (the facade's rule between protocols) agrees with respond(approving: .allRequested) for every mix of queries, claim sets, values and credential sets"
    )
    func answerabilityAgreesWithRespond() throws {
        let (_, engine) = try Self.fixture()
        let kinds: [Q] = [
            Q(id: "m", docType: TestWorld.mDL, claims: [C(Self.e("family_name"))]),
            Q(id: "p", docType: TestWorld.pid, claims: [C(Self.e("family_name", TestWorld.pid))]),
            Q(id: "x", docType: "org.iso.23220.photoid.1", claims: [C(Self.e("family_name", "org.iso.23220.1"))]),
            Q(
                id: "s", docType: TestWorld.mDL,
                claims: [
                    C(Self.e("issuing_country"), id: "c", values: [.text("DE")]), C(Self.e("age_over_18"), id: "a"),
                ],
                claimSets: [["c"], ["a"]]),
            Q(id: "v", docType: TestWorld.mDL, claims: [C(Self.e("issuing_country"), values: [.text("DE")])]),
            Q(id: "n", docType: TestWorld.mDL, claims: nil),
            Q(id: "u", docType: TestWorld.mDL, claims: [C(Self.e("no_such_element"))]),
        ]
        var checked = (answerable: 0, unanswerable: 0)
        for mask in 1..<(1 << kinds.count) where mask.nonzeroBitCount <= 3 {
            let queries = kinds.indices.filter { mask & (1 << $0) != 0 }.map { kinds[$0] }
            let ids = queries.map(\.id)
            let setChoices: [[OpenID4VPReader.CredentialSet]] = [
                [], [.init(options: ids.map { [$0] })],
                [.init(options: [ids]), .init(options: [[ids[0]]], required: false)],
                [.init(options: [[ids.last!]], required: false)],
            ]
            for sets in setChoices {
                let built = try OpenID4VPReader.makeRequest(
                    queries: queries, credentialSets: sets, origin: TestWorld.origin)
                let request = try engine.parse(rawRequest: built.rawRequest, origin: TestWorld.origin.serialized)
                let answers = (try? engine.respond(to: request)) != nil
                #expect(
                    (request.protocolChoice?.reason != .noneAnswerable) == answers, "queries \(ids), \(sets.count) sets"
                )
                if answers { checked.answerable += 1 } else { checked.unanswerable += 1 }
            }
        }
        // Both outcomes are exercised (the comparison is not vacuous).
        #expect(checked.answerable > 20 && checked.unanswerable > 20)
    }

    @Test("A nonce's alphabet is exactly A-Z a-z 0-9 - . _ ~ (every byte value checked)")
    func nonceAlphabet() {
        let allowed = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))
        for b in 0...255 {
            #expect(AuthorizationParameters.isURLSafe(UInt8(b)) == allowed.contains(UInt8(b)), "\(b)")
        }
    }
}

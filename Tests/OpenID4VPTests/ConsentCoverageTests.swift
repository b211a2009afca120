import DigitalCredentials
import AnnexC
import AnnexCReader
import Foundation
import MdocCBOR
import OpenID4VPReader
import Presentment
import Testing
import TestSupport
import TestWorld

@testable import OpenID4VP

/// What the third privacy review found in the planner: a document goes out only when the approval
/// covers it (both protocols, every approval form); candidates are ranked by the verifier's order of
/// preference, never by how much they release; a repeated claim path never loses its constraint; a
/// reader that requires a zero-knowledge proof never gets a plain presentation.
@Suite("Privacy: document-level consent, the verifier's preference, repeated claims, zero-knowledge asks")
struct ConsentCoverageTests {
    typealias Q = OpenID4VPReader.CredentialQuery
    typealias C = OpenID4VPReader.Claim
    static let ns = TestWorld.mDLNS
    static func e(_ name: String) -> ElementID { ElementID(ns, name) }

    static func fixture(_ entries: (TestWorld) throws -> [CredentialContext.Entry]) throws -> (
        TestWorld, DigitalCredentialsEngine, DigitalCredentialsEngine
    ) {
        let world = try TestWorld()
        let context = try world.context(try entries(world), trust: world.trusted)
        return (
            world, TestWorld.engine(context, protocols: [.openID4VP]) { $0.clock = { TestWorld.now } },
            world.engine(context)
        )
    }

    /// An mDL query for family_name and a PID query without claims; the PID query optional unless `required`.
    static func twoQueries(pidRequired: Bool) throws -> OpenID4VPReader.BuiltRequest {
        try OpenID4VPReader.makeRequest(
            queries: [
                Q(id: "m", docType: TestWorld.mDL, claims: [C(e("family_name"))]),
                Q(id: "p", docType: TestWorld.pid, claims: nil),
            ],
            credentialSets: pidRequired ? [] : [.init(options: [["m"]]), .init(options: [["p"]], required: false)],
            origin: TestWorld.origin)
    }

    /// The query ids answered and the element names each released.
    static func answered(_ response: Data, _ request: OpenID4VPReader.BuiltRequest, _ world: TestWorld) throws
        -> [String: [String]]
    {
        let v = try OpenID4VPReader.openResponse(response, for: request, issuerRoots: [world.iaca], at: TestWorld.now)
        var out = [String: [String]]()
        for (id, docs) in v.vpToken { out[id] = docs.flatMap { $0.elements.map(\.element.identifier) } }
        return out
    }

    @Test("OpenID4VP: a query without claims is presented only when the approval covers it")
    func queryWithoutClaims() throws {
        let (world, engine, _) = try Self.fixture { w in
            [try w.entry(id: "mdl"), try w.entry(id: "pid", docType: TestWorld.pid)]
        }
        let optional = try Self.twoQueries(pidRequired: false)
        let parsed = try engine.parse(rawRequest: optional.rawRequest, origin: TestWorld.origin.serialized)
        #expect(parsed.documents.map(\.presentableWithoutElements) == [false, true])
        func respond(_ a: Approval) throws -> [String: [String]] {
            try Self.answered(engine.respond(to: parsed, approving: a), optional, world)
        }
        // Everything shown, and explicit document-level consent: the PID goes out without elements.
        #expect(try respond(.allRequested) == ["m": ["family_name"], "p": []])
        #expect(try respond(.perDocument([0: [Self.e("family_name")], 1: []])) == ["m": ["family_name"], "p": []])
        // An element list, or a per-document approval that leaves the query out: never the PID.
        #expect(try respond(.elements([Self.e("family_name")])) == ["m": ["family_name"]])
        #expect(try respond(.perDocument([0: [Self.e("family_name")]])) == ["m": ["family_name"]])
        // Approve nothing: nothing is answered.
        for nothing in [Approval.elements([]), .perDocument([:])] {
            expectRefusal(.cannotSatisfyRequest) { try engine.respond(to: parsed, approving: nothing) }
        }
        // The PID alone, approved at document level only, when the mDL query is not approved.
        expectRefusal(.cannotSatisfyRequest) { try engine.respond(to: parsed, approving: .perDocument([1: []])) }

        // Required PID query: leaving it out refuses the whole request, nothing is presented.
        let required = try Self.twoQueries(pidRequired: true)
        let both = try engine.parse(rawRequest: required.rawRequest, origin: TestWorld.origin.serialized)
        for a in [Approval.elements([Self.e("family_name")]), .perDocument([0: [Self.e("family_name")]])] {
            expectRefusal(.cannotSatisfyRequest) { try engine.respond(to: both, approving: a) }
        }
        #expect(
            try Self.answered(
                engine.respond(to: both, approving: .perDocument([0: [Self.e("family_name")], 1: []])), required, world)
                == ["m": ["family_name"], "p": []])
        // Document-level consent never satisfies a query that asks for claims.
        expectRefusal(.cannotSatisfyRequest) {
            try engine.respond(to: both, approving: .perDocument([0: [], 1: []]))
        }
    }

    @Test("Annex C: a DocRequest whose elements are all absent or declined needs document-level consent")
    func annexCEmptyDocument() throws {
        let (world, _, engine) = try Self.fixture { w in [try w.entry(id: "mdl")] }
        let absent = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["no_such_element"])], origin: TestWorld.origin)
        let parsed = try engine.parse(rawRequest: absent.rawRequest, origin: TestWorld.origin.serialized)
        #expect(parsed.documents[0].presentableWithoutElements)
        expectRefusal(.cannotSatisfyRequest) {
            try engine.accept(rawRequest: absent.rawRequest, origin: "https://verifier.example")
        }
        for a in [
            Approval.allRequested, .elements([]), .perDocument([:]), .perDocument([0: [Self.e("no_such_element")]]),
        ] {
            expectRefusal(.cannotSatisfyRequest) { try engine.respond(to: parsed, approving: a) }
        }
        let bare = try engine.respond(to: parsed, approving: .perDocument([0: []]))
        let opened = try AnnexCReader.openResponse(bare, for: absent, issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(opened.documents.count == 1 && opened.documents[0].elements.isEmpty)

        let declined = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        let p2 = try engine.parse(rawRequest: declined.rawRequest, origin: TestWorld.origin.serialized)
        for a in [Approval.elements([]), .perDocument([:]), .perDocument([1: []])] {
            expectRefusal(.cannotSatisfyRequest) { try engine.respond(to: p2, approving: a) }
        }
        let none = try AnnexCReader.openResponse(
            engine.respond(to: p2, approving: .perDocument([0: []])), for: declined, issuerRoots: [world.iaca],
            at: TestWorld.now)
        #expect(none.documents.map(\.elements.count) == [0])
    }

    @Test("claim_sets: the verifier's first satisfiable set wins, never the credential that releases most")
    func claimSetPreference() throws {
        let (world, engine, _) = try Self.fixture { w in
            [
                // Registered first: satisfies only the least preferred set (four elements).
                try w.entry(
                    id: "wide",
                    elements: TestWorld.mDLElements.filter {
                        ["family_name", "given_name", "birth_date", "age_over_21"].contains($0.identifier)
                    }),
                // Satisfies the first set (one element).
                try w.entry(id: "narrow", elements: [.init("age_over_25", .bool(true))]),
            ]
        }
        let q = Q(
            id: "age", docType: TestWorld.mDL,
            claims: [
                C(Self.e("age_over_25"), id: "a25"), C(Self.e("family_name"), id: "fn"),
                C(Self.e("given_name"), id: "gn"), C(Self.e("birth_date"), id: "bd"),
                C(Self.e("age_over_21"), id: "a21"),
            ], claimSets: [["a25"], ["fn", "gn", "bd", "a21"]])
        let request = try OpenID4VPReader.makeRequest(queries: [q], origin: TestWorld.origin)
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        #expect(parsed.documents[0].candidates.map(\.credentialID) == ["narrow", "wide"])
        let accepted = try engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        #expect(try Self.answered(accepted, request, world) == ["age": ["age_over_25"]])
        #expect(try Self.answered(engine.respond(to: parsed), request, world) == ["age": ["age_over_25"]])
    }

    @Test("Annex C: an element held beats a substitute, an earlier alternative set beats a later one")
    func alternativePreference() throws {
        let mdl = TestWorld.mDLElements
        func keep(_ names: [String]) -> [MdocIssuer.Element] { mdl.filter { names.contains($0.identifier) } }
        let (world, _, engine) = try Self.fixture { w in
            [
                try w.entry(id: "second-set", elements: keep(["family_name", "birth_date"])),
                try w.entry(id: "first-set", elements: keep(["family_name", "age_over_21"])),
                try w.entry(id: "held", elements: keep(["family_name"]) + [.init("age_over_25", .bool(true))]),
            ]
        }
        let ask = AnnexCReader.DocumentRequest(
            docType: TestWorld.mDL, elements: [.init(Self.e("family_name")), .init(Self.e("age_over_25"))],
            alternatives: [.init(Self.e("age_over_25"), [[Self.e("age_over_21")], [Self.e("birth_date")]])])
        let request = try AnnexCReader.makeRequest(documents: [ask], origin: TestWorld.origin, version: .v1_1)
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        #expect(parsed.documents[0].candidates.map(\.credentialID) == ["held", "first-set", "second-set"])
        let v = try AnnexCReader.openResponse(
            engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized), for: request,
            issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(Set(v.documents[0].elements.map(\.element.identifier)) == ["family_name", "age_over_25"])
    }

    @Test("A repeated claim path keeps its constraint: different values or intent refuse, identical ones alias")
    func repeatedClaimPaths() throws {
        let (world, engine, _) = try Self.fixture { w in [try w.entry(id: "mdl")] }
        let fn = Self.e("family_name")
        let dropped = Q(
            id: "m", docType: TestWorld.mDL, claims: [C(fn, id: "a"), C(fn, id: "b", values: [.text("Nobody")])],
            claimSets: [["b"]])
        let r1 = try OpenID4VPReader.makeRequest(queries: [dropped], origin: TestWorld.origin)
        expectRefusal(DCQLRule.conflictingRepeatedClaim) {
            try engine.parse(rawRequest: r1.rawRequest, origin: TestWorld.origin.serialized)
        }
        let intent = Q(
            id: "m", docType: TestWorld.mDL, claims: [C(fn, id: "a"), C(fn, id: "b", intentToRetain: true)])
        let r2 = try OpenID4VPReader.makeRequest(queries: [intent], origin: TestWorld.origin)
        expectRefusal(.invalidRequest) {
            try engine.accept(rawRequest: r2.rawRequest, origin: TestWorld.origin.serialized)
        }
        let same = Q(
            id: "m", docType: TestWorld.mDL,
            claims: [C(fn, id: "a", values: [.text("Mustermann")]), C(fn, id: "b", values: [.text("Mustermann")])],
            claimSets: [["b"]])
        let r3 = try OpenID4VPReader.makeRequest(queries: [same], origin: TestWorld.origin)
        #expect(
            try Self.answered(engine.accept(rawRequest: r3.rawRequest, origin: TestWorld.origin.serialized), r3, world)
                == ["m": ["family_name"]])
    }

    @Test(
        "zkRequest without a prover: required refuses (zk.noProver); optional shows the fallback and what it reveals, and answers in plain only by the holder's separate approval"
    )
    func zeroKnowledgeAsk() throws {
        let (_, _, engine) = try Self.fixture { w in [try w.entry(id: "mdl")] }
        func request(required: Bool) throws -> Data {
            let items = RequestCBOR.itemsRequest(
                TestWorld.mDL, TestWorld.mDLNS, [("age_over_18", .bool(false))],
                extra: [.init(.text("requestInfo"), RequestCBOR.zkRequest(required: .bool(required)))])
            return try HostileCatalogue.frame(
                deviceRequest: RequestCBOR.deviceRequest(
                    version: .text("1.1"), docRequests: .array([RequestCBOR.docRequest(items)])))
        }
        expectRefusal(ZeroKnowledgeRule.noProver, at: "docRequests[0].itemsRequest.requestInfo.zkRequest") {
            try engine.accept(rawRequest: try request(required: true), origin: "https://verifier.example")
        }
        expectRefusal(ZeroKnowledgeRule.noProver, at: "docRequests[0].itemsRequest.requestInfo.zkRequest") {
            try engine.parse(rawRequest: try request(required: true), origin: "https://verifier.example")
        }
        let parsed = try engine.parse(rawRequest: try request(required: false), origin: "https://verifier.example")
        let offer = try #require(parsed.documents[0].zeroKnowledge)
        #expect(!offer.required && offer.systems == ["longfellow-libzk-v1"])
        #expect(offer.answer == .plainFallback(why: PresentmentError.Rule(ZeroKnowledgeRule.noProver)))
        #expect(ZeroKnowledgeOffer.plainPresentationReveals.contains("deviceKey"))
        // One call has no holder to approve the fallback; nor does a respond without it.
        expectRefusal(ZeroKnowledgeRule.fallbackNotApproved) {
            try engine.accept(rawRequest: try request(required: false), origin: "https://verifier.example")
        }
        expectRefusal(ZeroKnowledgeRule.fallbackNotApproved) { try engine.respond(to: parsed) }
        // Declining the document is not a fallback; approving it is.
        #expect(throws: PresentmentError.self) { try engine.respond(to: parsed, approving: .elements([])) }
        _ = try engine.respond(to: parsed, plainFallback: [0])
    }

    @Test(
        "DCQL differential: claim sets, a repeated claim, a query without claims, every approval form; accept and respond agree, and each approval releases exactly what is computed here"
    )
    func dcqlDifferential() throws {
        let (world, engine, _) = try Self.fixture { w in
            [try w.entry(id: "mdl"), try w.entry(id: "pid", docType: TestWorld.pid)]
        }
        let fn = Self.e("family_name")
        let gn = Self.e("given_name")
        let a25 = Self.e("age_over_25")
        let held: Set<ElementID> = Set(TestWorld.mDLElements.map { Self.e($0.identifier) })
        // Each query: its id, its claim sets as elements (nil: no claims), and the query itself.
        let queries: [(id: String, sets: [[ElementID]]?, query: Q)] = [
            (
                "sets", [[a25], [fn, gn], [fn]],
                Q(
                    id: "sets", docType: TestWorld.mDL,
                    claims: [C(a25, id: "x"), C(fn, id: "y"), C(gn, id: "z")], claimSets: [["x"], ["y", "z"], ["y"]])
            ),
            ("bare", nil, Q(id: "bare", docType: TestWorld.pid, claims: nil)),
            (
                "twice", [[gn], [fn]],
                Q(
                    id: "twice", docType: TestWorld.mDL, claims: [C(gn, id: "g"), C(fn, id: "f"), C(fn, id: "f2")],
                    claimSets: [["g"], ["f2"]])
            ),
        ]
        let approvals: [Approval] = [
            .allRequested, .elements([]), .elements([fn]), .elements([gn]), .elements([fn, gn]), .perDocument([:]),
            .perDocument([0: [fn, gn]]), .perDocument([0: [fn], 1: []]), .perDocument([1: []]),
            .perDocument([0: [], 1: [], 2: []]), .perDocument([0: [gn], 1: [], 2: [fn]]), .perDocument([2: [gn, fn]]),
        ]
        var compared = 0
        for subset in [[0], [1], [2], [0, 1], [0, 1, 2]] {
            let chosen = subset.map { queries[$0] }
            let request = try OpenID4VPReader.makeRequest(
                queries: chosen.map(\.query), credentialSets: chosen.map { .init(options: [[$0.id]], required: false) },
                origin: TestWorld.origin)
            let parsed = try engine.parse(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
            // accept and respond(to: parse) with everything shown release the same.
            let a = try Self.answered(
                engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized), request, world)
            #expect(try Self.answered(engine.respond(to: parsed), request, world) == a, "\(subset)")
            for approval in approvals {
                // Computed here: a query with claims releases its first set held and approved whole; a
                // query without claims goes out under .allRequested or an explicit [i: []].
                var expected = [String: [String]]()
                for (position, q) in chosen.enumerated() {
                    func allows(_ e: ElementID) -> Bool {
                        switch approval {
                        case .allRequested: true
                        case .elements(let s): s.contains(e)
                        case .perDocument(let m): m[position]?.contains(e) ?? false
                        }
                    }
                    if let sets = q.sets {
                        if let set = sets.first(where: { $0.allSatisfy { held.contains($0) && allows($0) } }) {
                            expected[q.id] = set.map(\.identifier)
                        }
                    } else {
                        switch approval {
                        case .allRequested: expected[q.id] = []
                        case .perDocument(let m) where m[position]?.isEmpty == true: expected[q.id] = []
                        default: break
                        }
                    }
                }
                let label = "\(subset) \(approval)"
                if expected.isEmpty {
                    expectRefusal(.cannotSatisfyRequest) { try engine.respond(to: parsed, approving: approval) }
                } else {
                    let got = try Self.answered(engine.respond(to: parsed, approving: approval), request, world)
                    #expect(got.mapValues { Set($0) } == expected.mapValues { Set($0) }, "\(label)")
                }
                compared += 1
            }
        }
        print("DCQL differential: \(compared) approvals compared")
    }
}

import Foundation
import MdocCBOR
import Testing
import TestWorld

@testable import Presentment

/// Selection rules (DCQL credential queries) in the one planner: values, claim sets, issuer
/// authorities, algorithm filters, queries without claims, and approval narrowing that may release a
/// set only whole.
@Suite("Planner: selection rules (values, claim sets, authorities, algorithms)")
struct ClaimRulesTests {
    static let ns = TestWorld.mDLNS

    static func element(_ name: String, retain: Bool = false) -> RequestedElement {
        RequestedElement(id: ElementID(ns, name), intentToRetain: retain)
    }

    static func query(
        _ names: [String], values: [[ClaimValue]?]? = nil, sets: [[Int]]? = nil, akis: [[UInt8]]? = nil,
        issuerAlgs: [Int64]? = nil, deviceAlgs: [Int64]? = nil, docType: String = TestWorld.mDL
    ) -> DocumentQuery {
        DocumentQuery(
            index: 0, docType: docType, elements: RequestedElementList(names.map { element($0) }),
            rules: ClaimRules(
                values: values ?? names.map { _ in nil }, claimSets: sets, authorityKeyIDs: akis,
                issuerAuthAlgorithms: issuerAlgs, deviceAuthAlgorithms: deviceAlgs))
    }

    /// A world and a one-credential context holding the mDL elements plus two integers.
    static func fixture() throws -> (TestWorld, CredentialContext) {
        let world = try TestWorld()
        let entry = try world.entry(
            id: "mdl", elements: TestWorld.mDLElements + [.init("height", .unsigned(170)), .init("offset", .int(-5))])
        return (world, try world.context([entry]))
    }

    static func released(_ q: DocumentQuery, _ context: CredentialContext, approving: Approval = .allRequested)
        throws -> [String]?
    {
        guard var m = Planner.candidates(q, context: context, now: TestWorld.now).first else { return nil }
        let planned = try Planner.planDocument(
            index: 0, docType: q.docType, maximumResponseSize: nil, match: &m, approving: approving, consented: nil)
        return planned.map { p in p.released.map { p.credential.orderedItems[$0].id.identifier } }
    }

    @Test("values: text, tagged text, integers of either sign and booleans match by type and value")
    func values() throws {
        let (_, context) = try Self.fixture()
        let rows: [(String, [ClaimValue], Bool)] = [
            ("family_name", [.text("Mustermann")], true),
            ("family_name", [.text("Doe"), .text("Mustermann")], true),
            ("family_name", [.text("mustermann")], false),
            ("birth_date", [.text("1971-09-01")], true),  // tag 1004 read by its content
            ("height", [.integer(170)], true),
            ("height", [.integer(171), .text("170")], false),  // type and value
            ("offset", [.integer(-5)], true),
            ("offset", [.integer(5)], false),
            ("age_over_18", [.bool(true)], true),
            ("age_over_18", [.bool(false), .integer(1)], false),
            ("portrait", [.text("")], false),  // a byte string never matches
        ]
        for (name, accepted, matches) in rows {
            let got = try Self.released(Self.query([name, "given_name"], values: [accepted, nil]), context)
            #expect(
                got == (matches ? [name, "given_name"].sorted(by: Self.credentialOrder) : nil), "\(name) \(accepted)")
        }
    }

    /// The order the credential stores items in (the test fixture's issue order).
    static func credentialOrder(_ a: String, _ b: String) -> Bool {
        let order = TestWorld.mDLElements.map(\.identifier) + ["height", "offset"]
        return order.firstIndex(of: a)! < order.firstIndex(of: b)!
    }

    @Test("Without claim sets every claim is required: one missing element and the credential does not answer")
    func allRequired() throws {
        let (_, context) = try Self.fixture()
        #expect(
            try Self.released(Self.query(["family_name", "age_over_18"]), context) == ["family_name", "age_over_18"])
        #expect(try Self.released(Self.query(["family_name", "age_over_65"]), context) == nil)
    }

    @Test("claim_sets: the first set the credential holds, never more; approval may fall back to a later set")
    func claimSets() throws {
        let (_, context) = try Self.fixture()
        // Preference: [age_over_25 (not held)], [age_over_18], [birth_date].
        let q = Self.query(["age_over_25", "age_over_18", "birth_date"], sets: [[0], [1], [2]])
        #expect(try Self.released(q, context) == ["age_over_18"])
        // The holder declines age_over_18: the next acceptable set, whole.
        let noAge = Approval.elements([ElementID(Self.ns, "birth_date")])
        #expect(try Self.released(q, context, approving: noAge) == ["birth_date"])
        // Declining everything in every set releases nothing: the document is not answered.
        #expect(try Self.released(q, context, approving: .elements([ElementID(Self.ns, "family_name")])) == nil)
        // A set is released whole or not at all.
        let pair = Self.query(["family_name", "given_name", "age_over_18"], sets: [[0, 1], [2]])
        #expect(try Self.released(pair, context) == ["family_name", "given_name"])
        #expect(
            try Self.released(pair, context, approving: .elements([ElementID(Self.ns, "family_name")])) == nil)
        // No set held: no answer.
        #expect(try Self.released(Self.query(["age_over_25", "age_over_65"], sets: [[0], [1]]), context) == nil)
        // values inside a set: a non-matching value makes the set unsatisfied.
        let valued = Self.query(
            ["family_name", "age_over_18"], values: [[.text("Doe")], nil], sets: [[0], [1]])
        #expect(try Self.released(valued, context) == ["age_over_18"])
    }

    @Test("A query without claims answers with the document and no issuer-signed elements")
    func noClaims() throws {
        let (_, context) = try Self.fixture()
        #expect(try Self.released(Self.query([]), context) == [])
    }

    /// The fixture's context as written (its credentials checked), and the same read back from its
    /// snapshot (credentials recorded as checked: indexed on first use, the issuer's certificates
    /// parsed only when a rule reads them).
    static func bothContexts() throws -> (TestWorld, [CredentialContext]) {
        let (world, context) = try Self.fixture()
        let loaded = try CredentialContext(encoded: context.encoded(), keyResolver: world.resolver)
        return (world, [context, loaded])
    }

    @Test("trusted_authorities (aki): only a credential whose issuer chain carries one of the key identifiers")
    func authorities() throws {
        let (world, contexts) = try Self.bothContexts()
        let iacaSKI = try #require(world.iaca.subjectKeyIdentifier)
        for context in contexts {
            #expect(
                try Self.released(Self.query(["family_name"], akis: [[1, 2, 3], iacaSKI]), context) == ["family_name"])
            #expect(try Self.released(Self.query(["family_name"], akis: [[1, 2, 3]]), context) == nil)
        }
    }

    @Test("issuerauth/deviceauth algorithm lists: the algorithm itself or its fully specified form for the key's curve")
    func algorithms() throws {
        let (_, contexts) = try Self.bothContexts()
        // The test issuer signs ES256 with a P-256 document signer; device keys are P-256 (ES256).
        for context in contexts {
            for (issuer, device, ok) in [
                ([-7], [-7], true), ([-9], [-9], true), ([-7, -35], nil, true), ([-35], nil, false),
                (nil, [-36, -52], false), ([-36], [-7], false), ([Int64]?.none, [Int64]?.none, true),
            ] as [([Int64]?, [Int64]?, Bool)] {
                let got = try Self.released(
                    Self.query(["family_name"], issuerAlgs: issuer, deviceAlgs: device), context)
                #expect((got != nil) == ok, "\(String(describing: issuer)) \(String(describing: device))")
            }
        }
    }

    @Test("The consent model shows the claim sets and value constraints of a query")
    func consentModel() throws {
        let (_, context) = try Self.fixture()
        let q = Self.query(
            ["age_over_25", "age_over_18", "family_name"], values: [nil, [.bool(true)], nil], sets: [[0], [1, 2]])
        let doc = RequestedDocument(
            q, candidates: Planner.candidates(q, context: context, now: TestWorld.now),
            readerVerdict: .notAuthenticated,
            readerAuthentication: [])
        #expect(
            doc.claimSets == [
                [ElementID(Self.ns, "age_over_25")],
                [ElementID(Self.ns, "age_over_18"), ElementID(Self.ns, "family_name")],
            ])
        #expect(doc.valueConstraints == [ElementID(Self.ns, "age_over_18"): [.bool(true)]])
        #expect(
            doc.candidates.first?.releasable == [ElementID(Self.ns, "family_name"), ElementID(Self.ns, "age_over_18")]
                || doc.candidates.first?.releasable == [
                    ElementID(Self.ns, "age_over_18"), ElementID(Self.ns, "family_name"),
                ])
    }

    @Test("A listed query keeps its elements as bytes: equal paths once (first intent kept), namespaces never merged")
    func requestedElementList() {
        var list = RequestedElementList(capacity: 2)
        func add(_ ns: String, _ id: String, _ intent: Bool?) -> (position: Int, added: Bool) {
            let a = Array(ns.utf8)
            let b = Array(id.utf8)
            return a.withUnsafeBytes { n in
                b.withUnsafeBytes { i in list.append(nameSpace: n, identifier: i, intentToRetain: intent) }
            }
        }
        let aamva = "org.iso.18013.5.1.aamva"
        #expect(add(Self.ns, "family_name", nil) == (0, true))
        #expect(add(Self.ns, "given_name", true) == (1, true))
        // The same bytes again: the first position, not added, its intent unchanged.
        #expect(add(Self.ns, "family_name", true) == (0, false))
        // The same identifier in another namespace, and a namespace extending the previous one.
        #expect(add(aamva, "family_name", false) == (2, true))
        #expect(add(Self.ns, "family_nam", nil) == (3, true))
        #expect(add(aamva, "family_name", nil) == (2, false))
        #expect(list.count == 4)
        #expect(list.intentToRetain(at: 0) == nil && list.intentToRetain(at: 1) == true)
        #expect(
            list.elements == [
                RequestedElement(id: ElementID(Self.ns, "family_name"), intentToRetain: nil),
                RequestedElement(id: ElementID(Self.ns, "given_name"), intentToRetain: true),
                RequestedElement(id: ElementID(aamva, "family_name"), intentToRetain: false),
                RequestedElement(id: ElementID(Self.ns, "family_nam"), intentToRetain: nil),
            ])
        // What the planner reads: the same bytes in the same order.
        var seen = [String]()
        list.forEachElement { ns, id, intent in
            seen.append("\(String(decoding: ns, as: UTF8.self))/\(String(decoding: id, as: UTF8.self))/\(intent)")
        }
        #expect(
            seen == [
                "\(Self.ns)/family_name/false", "\(Self.ns)/given_name/true", "\(aamva)/family_name/false",
                "\(Self.ns)/family_nam/false",
            ])
        #expect(RequestedElementList(list.elements).elements == list.elements)
        // Names past the room made at the start (none here, then 300-byte names): the room grows and
        // every earlier name stays as it was.
        var grown = RequestedElementList()
        let long = String(repeating: "n", count: 300)
        let names = [ElementID(long, "a"), ElementID(long, long + "b"), ElementID(Self.ns, long), ElementID(long, "a")]
        for e in names {
            let a = Array(e.nameSpace.utf8)
            let b = Array(e.identifier.utf8)
            _ = a.withUnsafeBytes { n in
                b.withUnsafeBytes { i in grown.append(nameSpace: n, identifier: i, intentToRetain: nil) }
            }
        }
        #expect(grown.elements.map(\.id) == Array(names.prefix(3)))
    }
}

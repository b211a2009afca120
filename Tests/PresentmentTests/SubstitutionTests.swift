import DigitalCredentials
import Foundation
import Testing
import TestSupport
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import TestWorld
import HPKE
import MdocCBOR

/// `alternativeDataElements` (18013-5 2nd edition): what a substitute may release, that the consent
/// model shows it, that approval and consent cover it, and that the test oracle holds responses to it.
/// Every test here tries to get more out of the wallet than the holder was shown or approved.
@Suite("Annex C: substitutes (alternativeDataElements) never widen what leaves the device")
struct SubstitutionTests {
    static let ns = TestWorld.mDLNS
    static func e(_ name: String, _ nameSpace: String = ns) -> ElementID { ElementID(nameSpace, name) }
    static let origin = "https://verifier.example"

    /// Every element the test mDL holds.
    static var allMDL: [ElementID] { TestWorld.mDLElements.map { e($0.identifier) } }

    static func request(
        _ asked: [String], alternatives: [(String, [[ElementID]])], version: AnnexCReader.Version = .v1_1
    ) throws -> AnnexCReader.BuiltRequest {
        let doc = AnnexCReader.DocumentRequest(
            docType: TestWorld.mDL, elements: asked.map { .init(e($0), intentToRetain: false) },
            alternatives: alternatives.map { .init(e($0.0), $0.1) })
        return try AnnexCReader.makeRequest(documents: [doc], origin: TestWorld.origin, version: version)
    }

    static func disclosed(
        _ response: Data, _ req: AnnexCReader.BuiltRequest, _ world: TestWorld,
        consent: AnnexCReader.HolderConsent? = nil
    ) throws -> Set<String> {
        Set(
            try AnnexCReader.openResponse(
                response, for: req, issuerRoots: [world.iaca], at: TestWorld.now, consent: consent
            ).documents[0].elements.map(\.element.identifier))
    }

    static func held(_ engine: DigitalCredentialsEngine) throws -> [String: Set<ElementID>] {
        [TestWorld.mDL: Set(try engine.context.credentials[0].elements)]
    }

    @Test(
        "The reported attack: one missing element with every mDL element as its alternative set releases nothing, by default or with the element approved"
    )
    func wholeCredentialAsAlternative() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let req = try Self.request(["age_over_25"], alternatives: [("age_over_25", [Self.allMDL])])
        // Default approval (accept, and respond with .allRequested): the set is larger than the bound, so
        // it is not honoured; nothing is held; the request is refused.
        expectRefusal(SelectionRule.nothingReleasable) {
            try engine.accept(rawRequest: req.rawRequest, origin: Self.origin)
        }
        let parsed = try engine.parse(rawRequest: req.rawRequest, origin: Self.origin)
        #expect(parsed.documents[0].ignoredAlternatives.map(\.reason) == [.tooLarge])
        #expect(parsed.documents[0].candidates[0].substitutions.isEmpty)
        expectRefusal(SelectionRule.nothingReleasable) {
            try engine.respond(to: parsed)
        }
        // Even with a larger bound, approving the requested element never approves its substitutes.
        let loose = world.engine(engine.context) { $0.annexC.maxAlternativeSetSize = 64 }
        let looseParsed = try loose.parse(rawRequest: req.rawRequest, origin: Self.origin)
        #expect(looseParsed.documents[0].candidates[0].substitutions.first?.replacement.count == Self.allMDL.count)
        expectRefusal(SelectionRule.nothingReleasable) {
            try loose.respond(to: looseParsed, approving: .elements([Self.e("age_over_25")]))
        }
        // And the consent summary must list every substitute for them to go out.
        let requestedOnly = ConsentedRequest(documents: [TestWorld.mDL: [Self.e("age_over_25")]])
        expectRefusal(SelectionRule.releaseNotShown) {
            try loose.respond(to: looseParsed, consented: requestedOnly)
        }
    }

    @Test(
        "The consent model shows each substitution with the set released instead; explain and its documents say the same"
    )
    func consentModelShowsSubstitutes() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let req = try Self.request(
            ["age_over_16", "family_name"],
            alternatives: [("age_over_16", [[Self.e("age_in_years")], [Self.e("birth_date")]])])
        let parsed = try engine.parse(rawRequest: req.rawRequest, origin: Self.origin)
        let c = try #require(parsed.documents[0].candidates.first)
        #expect(c.releasable == [Self.e("family_name")])
        #expect(
            c.substitutions == [Substitution(requested: Self.e("age_over_16"), replacement: [Self.e("birth_date")])])
        #expect(c.missing.isEmpty)
        #expect(c.shownElements == [Self.e("family_name"), Self.e("birth_date")])
        #expect(
            parsed.consentSummary().documents[TestWorld.mDL] == [
                Self.e("age_over_16"), Self.e("family_name"), Self.e("birth_date"),
            ])
        let x = engine.explain(rawRequest: req.rawRequest, origin: Self.origin)
        #expect(
            x.selection.count == 1 && x.selection[0].contains("replaces age_over_16 with [birth_date]"),
            "\(x.selection)")
        #expect(x.request?.documents.first?.candidates.first?.substitutions == c.substitutions)
    }

    @Test(
        "Approval: a substitute goes out only when it is itself approved, a set only whole; .allRequested means everything shown"
    )
    func approvalCoversSubstitutes() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let pair = [Self.e("birth_date"), Self.e("issue_date")]
        let req = try Self.request(["age_over_16", "family_name"], alternatives: [("age_over_16", [pair])])
        let parsed = try engine.parse(rawRequest: req.rawRequest, origin: Self.origin)
        let held = try Self.held(engine)
        func released(_ a: Approval) throws -> Set<String> {
            let approved: [String: Set<ElementID>]? =
                switch a {
                case .allRequested: nil
                case .elements(let s): [TestWorld.mDL: s]
                case .perDocument(let m): [TestWorld.mDL: m[0] ?? []]
                }
            return try Self.disclosed(
                try engine.respond(to: parsed, approving: a), req, world, consent: .init(held: held, approved: approved)
            )
        }
        #expect(try released(.allRequested) == ["family_name", "birth_date", "issue_date"])
        // Approving the requested element approves nothing it would be replaced by.
        #expect(try released(.elements([Self.e("age_over_16"), Self.e("family_name")])) == ["family_name"])
        // Half a set is not released.
        #expect(try released(.elements([Self.e("family_name"), Self.e("birth_date")])) == ["family_name"])
        #expect(
            try released(.elements(Set([Self.e("family_name")] + pair))) == ["family_name", "birth_date", "issue_date"])
        #expect(try released(.perDocument([0: Set(pair)])) == ["birth_date", "issue_date"])
        // An approval for another document index approves nothing here.
        expectRefusal(SelectionRule.nothingReleasable) {
            try engine.respond(to: parsed, approving: .perDocument([1: Set(pair + [Self.e("family_name")])]))
        }
        // The accept path releases exactly what .allRequested does.
        #expect(
            try Self.disclosed(
                try engine.accept(rawRequest: req.rawRequest, origin: Self.origin), req, world,
                consent: .init(held: held)) == ["family_name", "birth_date", "issue_date"])
    }

    @Test(
        "The consented-request check covers substitutes: a summary lacking them refuses, the model's own summary answers"
    )
    func consentedSummaryCoversSubstitutes() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let req = try Self.request(
            ["age_over_16", "family_name"], alternatives: [("age_over_16", [[Self.e("birth_date")]])])
        let parsed = try engine.parse(rawRequest: req.rawRequest, origin: Self.origin)
        let requestedOnly = ConsentedRequest(documents: [TestWorld.mDL: [Self.e("age_over_16"), Self.e("family_name")]])
        expectRefusal(SelectionRule.releaseNotShown) {
            try engine.respond(to: parsed, consented: requestedOnly)
        }
        // Not releasing the substitute (not approved) makes the narrower summary sufficient.
        #expect(
            try Self.disclosed(
                try engine.respond(to: parsed, approving: .elements([Self.e("family_name")]), consented: requestedOnly),
                req, world) == ["family_name"])
        #expect(
            try Self.disclosed(try engine.respond(to: parsed, consented: parsed.consentSummary()), req, world) == [
                "family_name", "birth_date",
            ])
    }

    @Test("An alternative set overlapping a requested element, or another set, yields each item once")
    func overlapYieldsNoDuplicates() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let req = try Self.request(
            ["age_over_16", "age_over_17", "birth_date", "family_name"],
            alternatives: [
                ("age_over_16", [[Self.e("birth_date"), Self.e("family_name")]]),
                ("age_over_17", [[Self.e("birth_date")]]),
            ])
        for response in [
            try engine.accept(rawRequest: req.rawRequest, origin: Self.origin),
            try engine.respond(to: try engine.parse(rawRequest: req.rawRequest, origin: Self.origin)),
        ] {
            let v = try AnnexCReader.openResponse(
                response, for: req, issuerRoots: [world.iaca], at: TestWorld.now,
                consent: .init(held: try Self.held(engine)))
            #expect(v.documents[0].elements.map(\.element.identifier).sorted() == ["birth_date", "family_name"])
        }
    }

    @Test(
        "Sets outside the element's namespace, larger than the bound, or for an element not requested are shown as ignored and never released"
    )
    func inadmissibleSetsIgnored() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let foreign = ElementID("org.iso.18013.5.1.aamva", "birth_date")
        let seven = Array(Self.allMDL.filter { $0.identifier != "portrait" }.prefix(7))
        let req = try Self.request(
            ["age_over_16", "age_over_17", "family_name"],
            alternatives: [
                ("age_over_16", [[foreign], [Self.e("birth_date"), foreign]]),
                ("age_over_17", [seven]),
                ("age_over_99", [[Self.e("document_number")]]),
            ])
        let parsed = try engine.parse(rawRequest: req.rawRequest, origin: Self.origin)
        #expect(
            parsed.documents[0].ignoredAlternatives.map(\.reason) == [
                .leavesNamespace, .leavesNamespace, .tooLarge, .elementNotRequested,
            ])
        #expect(parsed.documents[0].alternatives.isEmpty)
        #expect(parsed.documents[0].candidates[0].substitutions.isEmpty)
        #expect(parsed.documents[0].candidates[0].missing == [Self.e("age_over_16"), Self.e("age_over_17")])
        #expect(
            try Self.disclosed(try engine.accept(rawRequest: req.rawRequest, origin: Self.origin), req, world) == [
                "family_name"
            ])
        // At exactly the bound a set is honoured.
        let six = Array(seven.prefix(6))
        let atBound = try Self.request(["age_over_17"], alternatives: [("age_over_17", [six])])
        #expect(
            try Self.disclosed(
                try engine.accept(rawRequest: atBound.rawRequest, origin: Self.origin), atBound, world,
                consent: .init(held: try Self.held(engine)))
                == Set(six.map(\.identifier)))
        // 1.0 requests carry no alternatives the engine honours (requestInfo is a 2nd-edition field).
        let v10 = try Self.request(
            ["age_over_17", "family_name"], alternatives: [("age_over_17", [[Self.e("birth_date")]])], version: .v1_0)
        #expect(
            try Self.disclosed(try engine.accept(rawRequest: v10.rawRequest, origin: Self.origin), v10, world) == [
                "family_name"
            ])
        #expect(try engine.parse(rawRequest: v10.rawRequest, origin: Self.origin).documents[0].alternatives.isEmpty)
    }

    @Test(
        "The oracle: a substitute is admissible only in place of a requested element not disclosed and not held, as a whole in-namespace set, approved"
    )
    func oracle() throws {
        let doc = AnnexCReader.DocumentRequest(
            docType: TestWorld.mDL,
            elements: [
                .init(Self.e("age_over_16"), intentToRetain: false),
                .init(Self.e("family_name"), intentToRetain: false),
            ],
            alternatives: [
                .init(
                    Self.e("age_over_16"), [[Self.e("birth_date"), Self.e("issue_date")], [ElementID("other", "x")]])
            ])
        func admits(_ ids: [ElementID], _ consent: AnnexCReader.HolderConsent? = nil) -> Bool {
            (try? AnnexCReader.checkDisclosure(ids, asked: doc, consent: consent)) != nil
        }
        let pair = [Self.e("birth_date"), Self.e("issue_date")]
        #expect(admits([Self.e("family_name")]))
        #expect(admits([Self.e("family_name")] + pair))
        #expect(!admits([Self.e("age_over_16")] + pair), "substitute beside the element it replaces")
        #expect(!admits([Self.e("birth_date")]), "half a set")
        #expect(!admits([ElementID("other", "x")]), "set outside the namespace")
        #expect(!admits([Self.e("document_number")]), "neither requested nor an alternative")
        #expect(!admits([Self.e("family_name"), Self.e("family_name")]), "disclosed twice")
        let holds = AnnexCReader.HolderConsent(held: [
            TestWorld.mDL: Set([Self.e("age_over_16"), Self.e("family_name")] + pair)
        ])
        #expect(!admits(pair, holds), "substitute though the credential holds the requested element")
        let lacks = AnnexCReader.HolderConsent(held: [TestWorld.mDL: Set([Self.e("family_name")] + pair)])
        #expect(admits(pair, lacks))
        let notApproved = AnnexCReader.HolderConsent(
            held: lacks.held, approved: [TestWorld.mDL: [Self.e("age_over_16")]])
        #expect(!admits(pair, notApproved), "substitute not approved")
        let smallBound = AnnexCReader.HolderConsent(held: lacks.held, maxAlternativeSetSize: 1)
        #expect(!admits(pair, smallBound), "set larger than the wallet's bound")
        let noneApproved = AnnexCReader.HolderConsent(held: lacks.held, approved: [TestWorld.mDL: []])
        #expect(!admits([Self.e("family_name")], noneApproved), "requested element not approved")
    }
}

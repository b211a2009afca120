import AnnexCReader
import DigitalCredentials
import Foundation
import Longfellow
import MdocCBOR
import OpenID4VPReader
import Presentment
import Testing
import TestWorld
import WebEncoding

/// A page asking for a proof in Annex C and, beside it, for the same claim in OpenID4VP: the two-phase
/// path applies `accept`'s rule between protocols, so a proof request that cannot be proven is never
/// passed over for a plain, linkable OpenID4VP answer; an answer chosen over a proof request says so.
@Suite("A proof request is decided once, in accept and in parse", .serialized)
struct ProofRequestDecidedOnceTests {
    typealias Z = ZeroKnowledgeTests
    static let origin = TestWorld.origin.serialized

    /// The Annex C proof request for `names`, beside an OpenID4VP request for `age_over_18`.
    static func page(_ doc: AnnexCReader.DocumentRequest) throws -> (AnnexCReader.BuiltRequest, Data) {
        let a = try AnnexCReader.makeRequest(documents: [doc], origin: TestWorld.origin)
        let o = try OpenID4VPReader.makeRequest(
            queries: [.init(id: "av", docType: Z.av, claims: [.init(ElementID(Z.av, "age_over_18"))])],
            origin: TestWorld.origin)
        return (a, try TestWorld.combined(a, o))
    }

    @Test("No prover and a proof asked (not required): Annex C stays chosen, plain only with the fallback approved")
    func fallbackNotApprovedStaysAnnexC() throws {
        let (world, context) = try Z.fixture()
        let engine = TestWorld.engine(context)  // no prover
        let (a, raw) = try Self.page(Z.ask(required: false))
        expectRefusal(ZeroKnowledgeRule.fallbackNotApproved) { try engine.accept(rawRequest: raw, origin: Self.origin) }
        let parsed = try engine.parse(rawRequest: raw, origin: Self.origin)
        #expect(parsed.protocolIdentifier == "org-iso-mdoc")
        #expect(parsed.protocolChoice?.reason == .preferred)
        let offer = try #require(parsed.documents[0].zeroKnowledge)
        #expect(offer.answer == .plainFallback(why: PresentmentError.Rule(ZeroKnowledgeRule.noProver)))
        expectRefusal(ZeroKnowledgeRule.fallbackNotApproved) { try engine.respond(to: parsed) }
        // The holder's separate approval: the plain presentation goes out through Annex C.
        let answer = try engine.respond(to: parsed, plainFallback: [0])
        let opened = try AnnexCReader.openResponse(answer, for: a, issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(opened.documents.map(\.docType) == [Z.av])
        // The consent model JSON shows the proof asked and why it cannot be made.
        let json = try JSONValue.parse(Array(ConsentModelJSON.request(parsed).utf8))
        let answerJSON = json["documents"]?.array?.first?["zeroKnowledge"]?["answer"]
        #expect(answerJSON?["form"]?.string == "plainFallback" && answerJSON?["needsApproval"]?.bool == true)
        #expect(json["protocolChoice"]?["passedOverProofRequests"]?.array?.isEmpty == true)
    }

    @Test(
        "A proof that cannot be made (a claim not held) is final for the page: parse keeps Annex C, respond refuses",
        .enabled(if: Z.runnable, Z.skipNote))
    func notProvableStaysAnnexC() throws {
        let (_, context) = try Z.fixture()
        let engine = Z.engine(context, protocols: Set(PresentationProtocol.allCases))
        let two = try #require(LongfellowCircuit.table.first { $0.version == 7 && $0.attributes == 2 })
        let (_, raw) = try Self.page(Z.ask(Z.av, Z.av, ["age_over_18", "age_over_21"], specs: [two.spec]))
        expectRefusal(ZeroKnowledgeRule.notProvable) { try engine.accept(rawRequest: raw, origin: Self.origin) }
        let parsed = try engine.parse(rawRequest: raw, origin: Self.origin)
        #expect(parsed.protocolIdentifier == "org-iso-mdoc")
        #expect(parsed.documents[0].zeroKnowledge?.required == true)
        expectRefusal(ZeroKnowledgeRule.notProvable) { try engine.respond(to: parsed) }
        expectRefusal(ZeroKnowledgeRule.notProvable) { try engine.respond(to: parsed, plainFallback: [0]) }
    }

    @Test("A proof request no stored credential can answer is passed over, and the chosen answer says so")
    func passedOverIsShown() throws {
        let (world, context) = try Z.fixture()
        let engine = TestWorld.engine(context)
        let photo = Z.ask("org.iso.23220.photoid.1", "org.iso.23220.1", ["age_over_18"], required: true)
        let (_, raw) = try Self.page(
            AnnexCReader.DocumentRequest(
                docType: photo.docType, elements: photo.elements,
                zkRequest: .init(specs: [Z.v7one.spec], required: false)))
        let parsed = try engine.parse(rawRequest: raw, origin: Self.origin)
        #expect(parsed.protocolIdentifier == "openid4vp-v1-unsigned")
        #expect(parsed.protocolChoice?.reason == .preferredNotAnswerable)
        #expect(parsed.protocolChoice?.passedOverProofRequests == ["org-iso-mdoc"])
        let json = try JSONValue.parse(Array(ConsentModelJSON.request(parsed).utf8))
        #expect(json["protocolChoice"]?["passedOverProofRequests"]?.array?.map(\.string) == ["org-iso-mdoc"])
        _ = world
    }
}

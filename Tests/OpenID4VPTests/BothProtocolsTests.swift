import AnnexCReader
import DigitalCredentials
import Foundation
import MdocCBOR
import OpenID4VPReader
import Presentment
import Testing
import TestWorld
import WebEncoding

/// A page offering org-iso-mdoc and openid4vp-v1-* side by side, through the one entry point.
@Suite("Both protocols: one entry point picks the protocol")
struct BothProtocolsTests {
    static func combined(_ annexC: AnnexCReader.BuiltRequest, _ oid: OpenID4VPReader.BuiltRequest) throws -> Data {
        try TestWorld.combined(annexC, oid)
    }

    static func setup(
        annexCDocType: String = TestWorld.mDL, preference: DigitalCredentialsEngine.Preference = .answerable
    )
        throws -> (TestWorld, DigitalCredentialsEngine, AnnexCReader.BuiltRequest, OpenID4VPReader.BuiltRequest, Data)
    {
        let world = try TestWorld()
        let context = try world.context([try world.entry(id: "mdl")], trust: world.trusted)
        let engine = TestWorld.engine(context) { $0.preference = preference }
        let a = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(annexCDocType, ["family_name"], nameSpace: TestWorld.mDLNS)],
            origin: TestWorld.origin)
        let o = try OpenID4VPReader.makeRequest(
            queries: [
                .init(id: "mdl", docType: TestWorld.mDL, claims: [.init(ElementID(TestWorld.mDLNS, "family_name"))])
            ],
            origin: TestWorld.origin)
        return (world, engine, a, o, try combined(a, o))
    }

    @Test("Both answerable: Annex C answers by default, OpenID4VP under its preference")
    func preference() throws {
        let (world, engine, a, _, raw) = try Self.setup()
        let answer = try engine.accept(rawRequest: raw, origin: TestWorld.origin.serialized)
        _ = try AnnexCReader.openResponse(answer, for: a, issuerRoots: [world.iaca], at: TestWorld.now)
        let (world2, engine2, _, o2, raw2) = try Self.setup(preference: .openID4VP)
        let answer2 = try engine2.accept(rawRequest: raw2, origin: TestWorld.origin.serialized)
        _ = try OpenID4VPReader.openResponse(answer2, for: o2, issuerRoots: [world2.iaca], at: TestWorld.now)
        let parsed = try engine2.parse(rawRequest: raw2, origin: TestWorld.origin.serialized)
        #expect(parsed.protocolIdentifier == "openid4vp-v1-unsigned")
        let responded = try engine2.respond(to: parsed)
        _ = try OpenID4VPReader.openResponse(responded, for: o2, issuerRoots: [world2.iaca], at: TestWorld.now)
    }

    @Test("Only one answerable: that one answers under .answerable; a fixed preference keeps its refusal")
    func answerable() throws {
        let (world, engine, _, o, raw) = try Self.setup(annexCDocType: "org.iso.23220.photoid.1")
        let answer = try engine.accept(rawRequest: raw, origin: TestWorld.origin.serialized)
        _ = try OpenID4VPReader.openResponse(answer, for: o, issuerRoots: [world.iaca], at: TestWorld.now)
        let parsed = try engine.parse(rawRequest: raw, origin: TestWorld.origin.serialized)
        #expect(parsed.protocolIdentifier == "openid4vp-v1-unsigned" && parsed.details.openID4VP != nil)
        let (_, fixed, _, _, raw2) = try Self.setup(annexCDocType: "org.iso.23220.photoid.1", preference: .annexC)
        expectRefusal(.noMatchingCredential) { try fixed.accept(rawRequest: raw2, origin: TestWorld.origin.serialized) }
    }

    @Test("A request with one protocol goes to it; neither answerable gives the preferred protocol's refusal")
    func single() throws {
        let (world, engine, a, o, _) = try Self.setup()
        _ = try OpenID4VPReader.openResponse(
            try engine.accept(rawRequest: o.rawRequest, origin: TestWorld.origin.serialized), for: o,
            issuerRoots: [world.iaca], at: TestWorld.now)
        _ = try AnnexCReader.openResponse(
            try engine.accept(rawRequest: a.rawRequest, origin: TestWorld.origin.serialized), for: a,
            issuerRoots: [world.iaca], at: TestWorld.now)
        let photoA = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask("org.iso.23220.photoid.1", ["family_name"], nameSpace: "org.iso.23220.1")],
            origin: TestWorld.origin)
        let photoO = try OpenID4VPReader.makeRequest(
            queries: [
                .init(id: "p", docType: "org.iso.23220.photoid.1", claims: [.init(ElementID("org.iso.23220.1", "x"))])
            ],
            origin: TestWorld.origin)
        expectRefusal(SelectionRule.noUsableCredential) {
            try engine.accept(rawRequest: try Self.combined(photoA, photoO), origin: TestWorld.origin.serialized)
        }
        expectRefusal(.unsupportedProtocol) {
            try engine.accept(
                rawRequest: Data(#"{"digital":{"requests":[{"protocol":"other","data":{}}]}}"#.utf8),
                origin: TestWorld.origin.serialized)
        }
    }
}

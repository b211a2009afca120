import Foundation
import MdocCBOR
import OpenID4VPReader
import Presentment
import Testing
import TestSupport
import TestWorld

@testable import OpenID4VP

@Suite("OpenID4VP: end to end through accept and the verifier side")
struct OpenID4VPEndToEndTests {
    static let ns = TestWorld.mDLNS

    static func engine(_ world: TestWorld, trust: ReaderTrustPolicy? = nil) throws -> OpenID4VPEngine {
        let context = try world.context([try world.entry(id: "mdl")], trust: trust ?? world.trusted)
        return OpenID4VPEngine(context: context, configuration: .init(clock: { TestWorld.now }))
    }

    static let familyAndAge = OpenID4VPReader.CredentialQuery(
        id: "mdl", docType: TestWorld.mDL,
        claims: [.init(ElementID(ns, "family_name")), .init(ElementID(ns, "age_over_18"), intentToRetain: false)])

    @Test("An unsigned dc_api.jwt request is answered and verifies")
    func unsigned() throws {
        let world = try TestWorld()
        let engine = try Self.engine(world)
        let request = try OpenID4VPReader.makeRequest(queries: [Self.familyAndAge], origin: TestWorld.origin)
        let response = try engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
        let verified = try OpenID4VPReader.openResponse(
            response, for: request, issuerRoots: [world.iaca], at: TestWorld.now)
        #expect(
            verified.documents(for: "mdl").first?.elements.map(\.element.identifier) == ["family_name", "age_over_18"])
    }
}

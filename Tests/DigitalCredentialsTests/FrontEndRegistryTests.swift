import AnnexC
import DCAPIFraming
import OpenID4VP
import Presentment
import Testing

@testable import DigitalCredentials

/// The facade's registry: front ends declare the protocol identifiers they answer, each identifier is
/// claimed once, and entries are routed by comparing their `protocol` with the declared identifiers.
@Suite("Facade: front ends registered by identifier")
struct FrontEndRegistryTests {
    static func configuration(legacyAlias: Bool) -> DigitalCredentialsEngine.Configuration {
        var c = DigitalCredentialsEngine.Configuration()
        c.annexC.acceptLegacyProtocolAlias = legacyAlias
        return c
    }

    @Test("The built-in front ends declare disjoint identifiers in every setting, in registration order")
    func builtIn() throws {
        for alias in [false, true] {
            let registry = try FrontEndRegistry(RegisteredFrontEnd.builtIn(Self.configuration(legacyAlias: alias)))
            #expect(registry.frontEnds.map(\.presentationProtocol) == [.annexC, .openID4VP])
            #expect(
                registry.frontEnds.map(\.identifiers) == [
                    alias ? ["org-iso-mdoc", "org.iso.mdoc"] : ["org-iso-mdoc"],
                    ["openid4vp-v1-unsigned", "openid4vp-v1-signed", "openid4vp-v1-multisigned"],
                ])
        }
    }

    @Test("Two front ends claiming one identifier are refused at registration, naming it")
    func conflicts() {
        let c = Self.configuration(legacyAlias: true)
        let annexC = RegisteredFrontEnd.builtIn(c)[0]
        let openID4VP = RegisteredFrontEnd.builtIn(c)[1]
        #expect(throws: FrontEndRegistry.Conflict(identifier: "org-iso-mdoc")) {
            try FrontEndRegistry([annexC, openID4VP, annexC])
        }
        #expect(throws: FrontEndRegistry.Conflict(identifier: "openid4vp-v1-unsigned")) {
            try FrontEndRegistry([openID4VP, openID4VP])
        }
        let withoutAlias = RegisteredFrontEnd.builtIn(Self.configuration(legacyAlias: false))[0]
        #expect(throws: FrontEndRegistry.Conflict(identifier: "org-iso-mdoc")) {
            try FrontEndRegistry([withoutAlias, annexC])
        }
    }

    @Test("An entry is routed by its protocol, byte for byte: the alias only when enabled, nothing near")
    func routing() throws {
        func entry(_ protocolText: String) throws -> RequestEntry {
            let bytes = Array(#"{"requests":[{"protocol":"\#(protocolText)","data":{}}]}"#.utf8)
            var result: Result<RequestEnvelope, PresentmentError>!
            bytes.withUnsafeBufferPointer { raw in
                result = Result { () throws(PresentmentError) in
                    try RequestEnvelope.parse(raw, maxBytes: 4096, isBareData: { _ in false })
                }
            }
            return try result.get().entries[0]
        }
        let plain = RegisteredFrontEnd.builtIn(Self.configuration(legacyAlias: false))
        let aliased = RegisteredFrontEnd.builtIn(Self.configuration(legacyAlias: true))
        let (current, legacy, signed) = (
            try entry("org-iso-mdoc"), try entry("org.iso.mdoc"), try entry("openid4vp-v1-signed")
        )
        #expect(plain[0].answers(current) && !plain[1].answers(current))
        #expect(!plain[0].answers(legacy) && aliased[0].answers(legacy))
        #expect(plain[1].answers(signed) && !plain[0].answers(signed))
        for near in ["Org-iso-mdoc", "org-iso-mdoc\\u0000", "openid4vp-v1", "openid4vp-v1-signed ", ""] {
            let e = try entry(near)
            #expect(!plain.contains { $0.answers(e) }, "\(near)")
        }
    }
}

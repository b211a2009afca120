import DCAPIFraming
import Foundation
import OpenID4VP
import Testing
import WebEncoding
@testable import AnnexC

@Suite("DC API framing: the response envelope and bare data objects")
struct EnvelopeTests {
    @Test(
        "The response envelope: an identifier JSON need not escape is copied as is, any other written by the JSON writer; both byte for byte what the writer gives",
        arguments: [
            "org-iso-mdoc", "openid4vp-v1-unsigned", "", "a\"b", "back\\slash", "tab\there", "\u{1}", "\u{1f}",
            "é✓", "\u{7f}", "x\"",
        ])
    func envelope(id: String) throws {
        let body = Array("{\"response\":\"x\"}".utf8)
        let out = ResponseEnvelope.response(protocolIdentifier: id, bodyLength: body.count) { $0.copyBytes(from: body) }
        #expect(Array(out) == ResponseEnvelope.prefix(protocolIdentifier: id) + body + [ResponseEnvelope.suffix])
        let json = try JSONDocument(Array(out)).root
        #expect(json.count == 2)
        #expect(json["protocol"]?.string == id)
        #expect(json["data"]?["response"]?.string == "x")
        let bare = ResponseEnvelope.response(protocolIdentifier: nil, bodyLength: body.count) {
            $0.copyBytes(from: body)
        }
        #expect(Array(bare) == body)
    }

    struct BareCase: Sendable, CustomTestStringConvertible {
        let json: String
        let annexC: Bool
        let openID4VP: Bool
        var testDescription: String { json }
    }

    static let bareCases: [BareCase] = [
        .init(json: "{\"deviceRequest\":\"x\"}", annexC: true, openID4VP: false),
        .init(json: "{\"encryptionInfo\":1}", annexC: true, openID4VP: false),
        .init(json: "{\"a\":1,\"b\":[2],\"encryptionInfo\":\"x\"}", annexC: true, openID4VP: false),
        .init(json: "{\"\\u0064eviceRequest\":\"x\"}", annexC: true, openID4VP: false),
        .init(
            json: "{\"deviceRequests\":\"x\",\"deviceReques\":1,\"encryptioninfo\":1}", annexC: false, openID4VP: false),
        .init(json: "{\"requests\":[]}", annexC: false, openID4VP: false),
        .init(
            json: "{\"digital\":{\"requests\":[]},\"x\":{\"request\":1,\"deviceRequest\":1}}", annexC: false,
            openID4VP: false),
        .init(json: "{\"response_type\":\"vp_token\"}", annexC: false, openID4VP: true),
        .init(json: "{\"x\":1,\"dcql_query\":{}}", annexC: false, openID4VP: true),
        .init(json: "{\"request\":\"a.b.c\"}", annexC: false, openID4VP: true),
        .init(json: "{\"req\\u0075est\":\"a.b.c\"}", annexC: false, openID4VP: true),
        .init(json: "{\"payload\":\"p\"}", annexC: false, openID4VP: false),
        .init(json: "{\"signatures\":[]}", annexC: false, openID4VP: false),
        .init(json: "{\"payload\":\"p\",\"x\":1,\"signatures\":[]}", annexC: false, openID4VP: true),
        .init(json: "{\"signatures\":[],\"payload\":\"p\"}", annexC: false, openID4VP: true),
        .init(json: "{\"deviceRequest\":\"x\",\"request\":\"y\"}", annexC: true, openID4VP: true),
        .init(json: "{}", annexC: false, openID4VP: false),
        .init(json: "[\"deviceRequest\",\"request\"]", annexC: false, openID4VP: false),
        .init(json: "\"deviceRequest\"", annexC: false, openID4VP: false),
    ]

    @Test(
        "A bare data object is recognised by its protocol's top-level members, read in one pass", arguments: bareCases)
    func bareData(_ c: BareCase) throws {
        let json = try JSONDocument(Array(c.json.utf8)).root
        #expect(AnnexCFrontEnd.isBareData(json) == c.annexC)
        #expect(OpenID4VPFrontEnd.isBareData(json) == c.openID4VP)
    }
}

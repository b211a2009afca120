import DigitalCredentials
import Foundation
import WebEncoding
import Testing
import TestSupport
import TestWorld
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import HPKE
import MdocCBOR

@Suite("Annex C: request rules")
struct RequestRuleTests {
    static let ei =
        "gmVkY2FwaaJlbm9uY2VQAAECAwQFBgcICQoLDA0OD3JyZWNpcGllbnRQdWJsaWNLZXmkAQIgASFYILO0LJXwA8VAp7-rI9YIJvj1wfEQ122YdEjwxUFeYAFEIlgg0u68CgTFZk_nslWFmYhDMQQ6vdBNf2vwy3QHKI_80Js"
    static let dr =
        "omd2ZXJzaW9uYzEuMGtkb2NSZXF1ZXN0c4GhbGl0ZW1zUmVxdWVzdNgYWEuiZ2RvY1R5cGV1b3JnLmlzby4xODAxMy41LjEubURMam5hbWVTcGFjZXOhcW9yZy5pc28uMTgwMTMuNS4xoWthZ2Vfb3Zlcl8xOPQ"

    enum Outcome: Sendable {
        case success(RequestFraming)
        case failure(PresentmentError.Code)
    }

    struct EnvelopeCase: CustomTestStringConvertible, Sendable {
        let name: String
        let json: String
        let result: Outcome
        var testDescription: String { name }
    }

    /// A realistic `openid4vp-v1-unsigned` entry as pages send it beside `org-iso-mdoc`: client
    /// metadata with a JWK set and format filters, and a DCQL query with claim sets, credential sets,
    /// trusted authorities and nested `meta`. Its deepest value sits 17 containers down from the envelope.
    static let openID4VPEntry = """
        {"protocol":"openid4vp-v1-unsigned","data":{"response_type":"vp_token","response_mode":"dc_api.jwt","nonce":"bUhNMUhYRjlQS1RkcUZHdQ",
        "client_metadata":{"jwks":{"keys":[{"kty":"EC","crv":"P-256","use":"enc","alg":"ECDH-ES","kid":"k1",
        "x":"hZ0Vbs2LcxYEbOVpFOHJ4L3fX5xKmzVwPs0xiGmQp3o","y":"Qx0V6wq0sbbnN3pOXqx3h0oL0HKL1Kq7aJ3yAQZHvTI"}]},
        "encrypted_response_enc_values_supported":["A128GCM","A256GCM"],
        "vp_formats_supported":{"mso_mdoc":{"issuerauth_alg_values":[-7,-9,-35],"deviceauth_alg_values":[-7,-9]}}},
        "dcql_query":{"credentials":[{"id":"mdl","format":"mso_mdoc","multiple":false,"meta":{"doctype_value":"org.iso.18013.5.1.mDL"},
        "trusted_authorities":[{"type":"aki","values":["s9tIpPmhxdiuNkHMEWNpYim8S8Y"]}],
        "claims":[{"id":"a","path":["org.iso.18013.5.1","family_name"],"intent_to_retain":false},
        {"id":"b","path":["org.iso.18013.5.1","age_over_18"],"values":[true]},
        {"id":"c","path":["org.iso.18013.5.1","driving_privileges"]}],
        "claim_sets":[["a","b"],["b"]]},
        {"id":"pid","format":"mso_mdoc","meta":{"doctype_value":"eu.europa.ec.eudi.pid.1","x":{"y":{"z":{"w":{"v":{"u":{"t":[[["deep"]]]}}}}}}},
        "claims":[{"path":["eu.europa.ec.eudi.pid.1","age_over_18"]}]}],
        "credential_sets":[{"options":[["mdl"],["pid"]],"required":true}]}}}
        """.replacingOccurrences(of: "\n", with: "")

    static var envelopes: [EnvelopeCase] {
        let data = "{\"deviceRequest\":\"\(dr)\",\"encryptionInfo\":\"\(ei)\"}"
        let deepData = "{\"deviceRequest\":\"\(dr)\",\"encryptionInfo\":\"\(ei)\",\"x\":[[[[1]]]]}"
        let wideData =
            "{\"deviceRequest\":\"\(dr)\",\"encryptionInfo\":\"\(ei)\"" + (0..<63).map { ",\"m\($0)\":1" }.joined()
            + "}"
        return [
            .init(
                name: "a realistic OpenID4VP DCQL entry (17 levels deep) first in requests",
                json: "{\"requests\":[\(openID4VPEntry),{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}",
                result: .success(.requestList)),
            .init(
                name: "the same entry first in digital.requests",
                json:
                    "{\"digital\":{\"requests\":[\(openID4VPEntry),{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}}",
                result: .success(.digitalRequestList)),
            .init(
                name: "an entry of another protocol nested 55 deep",
                json: "{\"requests\":[{\"protocol\":\"x\",\"data\":" + String(repeating: "[", count: 55)
                    + String(repeating: "]", count: 55) + "},{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}",
                result: .success(.requestList)),
            .init(
                name: "an entry of another protocol with 500 claims",
                json: "{\"requests\":[{\"protocol\":\"x\",\"data\":{\"claims\":["
                    + (0..<500).map { "{\"path\":[\"ns\",\"e\($0)\"]}" }.joined(separator: ",")
                    + "]}},{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}", result: .success(.requestList)),
            .init(
                name: "entries that are not objects are skipped",
                json: "{\"requests\":[1,\"x\",null,{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}",
                result: .success(.requestList)),
            .init(
                name: "the envelope nested 65 deep",
                json: "{\"requests\":[{\"protocol\":\"x\",\"data\":" + String(repeating: "[", count: 63)
                    + String(repeating: "]", count: 63) + "},{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}",
                result: .failure(.malformedRequest)),
            .init(
                name: "org-iso-mdoc data nested 5 deep (strict on the entry itself)",
                json: "{\"requests\":[{\"protocol\":\"org-iso-mdoc\",\"data\":\(deepData)}]}",
                result: .failure(.malformedRequest)),
            .init(
                name: "org-iso-mdoc data with 65 members", json: "{\"protocol\":\"org-iso-mdoc\",\"data\":\(wideData)}",
                result: .failure(.malformedRequest)),
            .init(name: "data object", json: data, result: .success(.dataObject)),
            .init(
                name: "protocol and data", json: "{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}",
                result: .success(.protocolAndData)),
            .init(
                name: "legacy alias", json: "{\"protocol\":\"org.iso.mdoc\",\"data\":\(data)}",
                result: .success(.protocolAndData)),
            .init(
                name: "data as a JSON string",
                json: "{\"protocol\":\"org-iso-mdoc\",\"data\":\(CBORDiagnostic.quoted(data))}",
                result: .success(.protocolAndData)),
            .init(
                name: "requests list with openid4vp first",
                json:
                    "{\"requests\":[{\"protocol\":\"openid4vp-v1-signed\",\"data\":{\"request\":\"x\"}},{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}",
                result: .success(.requestList)),
            .init(
                name: "digital requests",
                json:
                    "{\"mediation\":\"required\",\"digital\":{\"requests\":[{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}}",
                result: .success(.digitalRequestList)),
            .init(
                name: "trailing = refused (as the platform refuses it)",
                json: "{\"deviceRequest\":\"\(dr)\",\"encryptionInfo\":\"\(ei)=\"}",
                result: .failure(.malformedRequest)),
            .init(
                name: "only openid4vp", json: "{\"requests\":[{\"protocol\":\"openid4vp-v1-unsigned\",\"data\":{}}]}",
                result: .failure(.unsupportedProtocol)),
            .init(
                name: "unknown protocol", json: "{\"protocol\":\"preview\",\"data\":\(data)}",
                result: .failure(.unsupportedProtocol)),
            .init(
                name: "a protocol that is not a string", json: "{\"protocol\":5,\"data\":\(data)}",
                result: .failure(.unsupportedProtocol)),
            .init(
                name: "a protocol spelled with escapes (compared decoded)",
                json: "{\"protocol\":\"org\\u002diso\\u002Dmdoc\",\"data\":\(data)}", result: .success(.protocolAndData)
            ),
            .init(
                name: "a protocol that differs in case or by a trailing byte",
                json: "{\"requests\":[{\"protocol\":\"ORG-ISO-MDOC\",\"data\":\(data)},"
                    + "{\"protocol\":\"org-iso-mdoc \",\"data\":\(data)},{\"protocol\":\"org-iso-md\",\"data\":\(data)}]}",
                result: .failure(.unsupportedProtocol)),
            .init(
                name: "list entries whose protocol is not a string are passed over",
                json: "{\"requests\":[{\"protocol\":[\"org-iso-mdoc\"],\"data\":\(data)},"
                    + "{\"protocol\":null,\"data\":\(data)},{\"protocol\":\"org-iso-mdoc\",\"data\":\(data)}]}",
                result: .success(.requestList)),
            .init(name: "empty requests", json: "{\"requests\":[]}", result: .failure(.unsupportedProtocol)),
            .init(name: "not JSON", json: "deviceRequest=1", result: .failure(.malformedRequest)),
            .init(name: "JSON array", json: "[1,2]", result: .failure(.malformedRequest)),
            .init(
                name: "missing encryptionInfo", json: "{\"deviceRequest\":\"\(dr)\"}",
                result: .failure(.malformedRequest)),
            .init(
                name: "missing deviceRequest", json: "{\"encryptionInfo\":\"\(ei)\"}",
                result: .failure(.malformedRequest)),
            .init(
                name: "numeric deviceRequest", json: "{\"deviceRequest\":1,\"encryptionInfo\":\"\(ei)\"}",
                result: .failure(.malformedRequest)),
            .init(
                name: "empty encryptionInfo", json: "{\"deviceRequest\":\"\(dr)\",\"encryptionInfo\":\"\"}",
                result: .failure(.malformedRequest)),
            .init(
                name: "duplicate keys",
                json: "{\"deviceRequest\":\"\(dr)\",\"deviceRequest\":\"\(dr)\",\"encryptionInfo\":\"\(ei)\"}",
                result: .failure(.malformedRequest)),
            .init(
                name: "standard base64 characters",
                json: "{\"deviceRequest\":\"+\(dr.dropFirst())\",\"encryptionInfo\":\"\(ei)\"}",
                result: .failure(.malformedRequest)),
            .init(
                name: "padding in the middle", json: "{\"deviceRequest\":\"om=d2\(dr)\",\"encryptionInfo\":\"\(ei)\"}",
                result: .failure(.malformedRequest)),
            .init(
                name: "deep nesting", json: String(repeating: "[", count: 100_000), result: .failure(.malformedRequest)),
            .init(name: "trailing garbage", json: data + "x", result: .failure(.malformedRequest)),
            .init(name: "no framing", json: "{\"foo\":1}", result: .failure(.malformedRequest)),
        ]
    }

    @Test("Framings are recognised; malformed envelopes refused with the right code", arguments: envelopes)
    func envelope(_ c: EnvelopeCase) throws {
        let engine = TestWorld.engine(
            try CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:])), protocols: [.annexC])
        do {
            let r = try engine.parse(rawRequest: Data(c.json.utf8), origin: "https://verifier.example")
            guard case .success(let f) = c.result else {
                Issue.record("\(c.name): accepted")
                return
            }
            #expect(r.details.annexC?.framing == f)
            #expect(r.documents.first?.docType == "org.iso.18013.5.1.mDL")
            // The identifier the entry named (the legacy alias kept as such), or Annex C's for bare data.
            #expect(r.protocolIdentifier == (c.name == "legacy alias" ? "org.iso.mdoc" : "org-iso-mdoc"), "\(c.name)")
        } catch {
            guard case .failure(let code) = c.result else {
                Issue.record("\(c.name): \(error)")
                return
            }
            #expect(error.code == code, "\(c.name): \(error)")
        }
    }

    /// An Annex C engine with nothing stored.
    static func emptyEngine() throws -> DigitalCredentialsEngine {
        TestWorld.engine(
            try CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:])), protocols: [.annexC])
    }

    /// A bare data object with these two strings, written into the JSON as given (escapes and all).
    static func dataObject(deviceRequest: String = dr, encryptionInfo: String = ei) -> Data {
        Data("{\"deviceRequest\":\"\(deviceRequest)\",\"encryptionInfo\":\"\(encryptionInfo)\"}".utf8)
    }

    /// `dataObject(…)` parsed by an empty Annex C engine for https://verifier.example.
    static func parseData(deviceRequest: String = dr, encryptionInfo: String = ei) throws(PresentmentError)
        -> DigitalCredentialsRequest
    {
        let engine: DigitalCredentialsEngine
        do { engine = try emptyEngine() } catch { fatalError("an empty context: \(error)") }
        return try engine.parse(
            rawRequest: dataObject(deviceRequest: deviceRequest, encryptionInfo: encryptionInfo),
            origin: "https://verifier.example")
    }

    /// `s` (ASCII) with its first and last characters written as `\u00XX` escapes.
    static func escapingEnds(_ s: String) -> String {
        func escape(_ c: UInt8) -> String { "\\u00" + String(c, radix: 16) }
        return escape(s.utf8.first!) + s.dropFirst().dropLast() + escape(s.utf8.last!)
    }

    @Test("The transcript hashes the encryptionInfo string exactly as received; a padded one is refused")
    func transcriptUsesReceivedString() throws {
        let engine = try Self.emptyEngine()
        let a = try engine.parse(rawRequest: Self.dataObject(), origin: "https://verifier.example")
        expectRefusal(AnnexCRule.encryptionInfoNotBase64URL) {
            try engine.parse(
                rawRequest: Self.dataObject(encryptionInfo: Self.ei + "="), origin: "https://verifier.example")
        }
        #expect(a.sessionTranscriptBytes.count == 44)
        #expect(Array(a.sessionTranscriptBytes.prefix(12)) == h("83 f6 f6 82 65 6463617069 58 20"))
    }

    @Test(
        "deviceRequest is read as its JSON string decodes: escaped characters are unescaped before base64url, an escape that decodes outside the alphabet is refused, an empty one is refused as empty"
    )
    func escapedDeviceRequest() throws {
        func parse(_ deviceRequest: String) throws(PresentmentError) -> DigitalCredentialsRequest {
            try Self.parseData(deviceRequest: deviceRequest)
        }
        let plain = try parse(Self.dr)
        // The first character ("o") and the last written as \u escapes: the same DeviceRequest.
        let viaEscapes = try parse(Self.escapingEnds(Self.dr))
        #expect(viaEscapes.documents.map(\.docType) == plain.documents.map(\.docType))
        #expect(viaEscapes.documents.first?.elements.map(\.id) == plain.documents.first?.elements.map(\.id))
        // "+" written as \u002b: standard base64, not base64url.
        expectRefusal(AnnexCRule.deviceRequestNotBase64URL) { try parse("\\u002b" + Self.dr.dropFirst()) }
        expectRefusal(AnnexCRule.deviceRequestEmpty) { try parse("") }
    }

    @Test(
        "encryptionInfo is read as its JSON string decodes, in place: escapes give the same EncryptionInfo and transcript, an escape outside the alphabet, an empty or a too long string is refused"
    )
    func escapedEncryptionInfo() throws {
        func parse(_ encryptionInfo: String) throws(PresentmentError) -> DigitalCredentialsRequest {
            try Self.parseData(encryptionInfo: encryptionInfo)
        }
        let expected = AnnexCSessionTranscript(encryptionInfo: Self.ei, origin: try Origin("https://verifier.example"))
        let plain = try parse(Self.ei)
        #expect(plain.sessionTranscriptBytes == expected.bytes)
        // The first character ("g") and the last written as \u escapes: the same string, hashed as decoded.
        let escaped = Self.escapingEnds(Self.ei)
        #expect(escaped.hasPrefix("\\u0067"))
        let viaEscapes = try parse(escaped)
        #expect(viaEscapes.sessionTranscriptBytes == expected.bytes)
        #expect(viaEscapes.details.annexC?.encryptionInfo.nonce == plain.details.annexC?.encryptionInfo.nonce)
        // The transcript an explanation shows is the one hashed.
        let shown = try Self.emptyEngine().explain(
            rawRequest: Self.dataObject(encryptionInfo: escaped), origin: "https://verifier.example"
        ).trace.structures.first { $0.name == "dcapiInfo" }?.bytes
        #expect(shown.map(MdocDigest.sha256) == expected.dcapiInfoHash)
        var w = CBORWriter()
        w.writeArrayHeader(count: 2)
        w.writeText(Self.ei)
        w.writeText("https://verifier.example")
        #expect(shown == w.bytes)
        expectRefusal(AnnexCRule.encryptionInfoNotBase64URL) { try parse("\\u002b" + Self.ei.dropFirst()) }
        expectRefusal(AnnexCRule.encryptionInfoEmpty) { try parse("") }
        // The bound is on the decoded string: 4,097 characters, however written, are too long.
        expectRefusal(AnnexCRule.encryptionInfoTooLong) { try parse(String(repeating: "A", count: 4097)) }
        expectRefusal(AnnexCRule.encryptionInfoTooLong) {
            try parse(String(repeating: "\\u0041", count: 4097))
        }
        expectRefusal(AnnexCRule.encryptionInfoNotCBOR) { try parse(String(repeating: "A", count: 4096)) }
    }

    static func eiText(_ v: CBORValue) -> String { Base64URL.encode(v.encoded()) }

    @Test(
        "EncryptionInfo: wrong label, missing nonce or key, wrong kty/crv, wrong lengths, off-curve, infinity, compressed"
    )
    func encryptionInfo() throws {
        let good = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256).publicKey.serialized
        let x = Array(good[1..<33])
        let y = Array(good[33...])
        func key(_ entries: [CBORValue.MapEntry]) -> CBORValue { .map(entries) }
        let ok: [CBORValue.MapEntry] = [
            .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bytes(y)),
        ]
        func info(label: String = "dcapi", nonce: CBORValue? = .bytes([1, 2, 3]), key k: CBORValue? = key(ok)) -> String
        {
            var m = [CBORValue.MapEntry]()
            if let nonce { m.append(.init(.text("nonce"), nonce)) }
            if let k { m.append(.init(.text("recipientPublicKey"), k)) }
            return Self.eiText(.array([.text(label), .map(m)]))
        }
        var offY = y
        offY[31] ^= 1
        let cases: [(String, String, PresentmentError.Code)] = [
            ("wrong label", info(label: "ARFEncryptionv2"), .invalidEncryptionInfo),
            ("missing nonce", info(nonce: nil), .invalidEncryptionInfo),
            ("nonce not bstr", info(nonce: .text("n")), .invalidEncryptionInfo),
            ("missing key", info(key: nil), .invalidEncryptionInfo),
            ("key not a map", info(key: .bytes(good)), .invalidEncryptionInfo),
            (
                "OKP key",
                info(key: key([.init(.int(1), .int(1)), .init(.int(-1), .int(4)), .init(.int(-2), .bytes(x))])),
                .unsupportedRecipientKey
            ),
            (
                "P-384 key",
                info(
                    key: key([
                        .init(.int(1), .int(2)), .init(.int(-1), .int(2)), .init(.int(-2), .bytes(x)),
                        .init(.int(-3), .bytes(y)),
                    ])), .unsupportedRecipientKey
            ),
            (
                "short x",
                info(
                    key: key([
                        .init(.int(1), .int(2)), .init(.int(-1), .int(1)),
                        .init(.int(-2), .bytes(Array(x.dropFirst()))), .init(.int(-3), .bytes(y)),
                    ])), .unsupportedRecipientKey
            ),
            (
                "off-curve",
                info(
                    key: key([
                        .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)),
                        .init(.int(-3), .bytes(offY)),
                    ])), .unsupportedRecipientKey
            ),
            (
                "infinity (zeros)",
                info(
                    key: key([
                        .init(.int(1), .int(2)), .init(.int(-1), .int(1)),
                        .init(.int(-2), .bytes([UInt8](repeating: 0, count: 32))),
                        .init(.int(-3), .bytes([UInt8](repeating: 0, count: 32))),
                    ])), .unsupportedRecipientKey
            ),
            (
                "compressed",
                info(
                    key: key([
                        .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)),
                        .init(.int(-3), .bool(true)),
                    ])), .unsupportedRecipientKey
            ),
            ("not an array", Self.eiText(.map([])), .invalidEncryptionInfo),
            ("array of 3", Self.eiText(.array([.text("dcapi"), .map([]), .null])), .invalidEncryptionInfo),
            ("not CBOR", Base64URL.encode([0xff, 0x00]), .invalidEncryptionInfo),
        ]
        let engine = TestWorld.engine(
            try CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:])), protocols: [.annexC])
        for (name, text, code) in cases {
            let raw = Data("{\"deviceRequest\":\"\(Self.dr)\",\"encryptionInfo\":\"\(text)\"}".utf8)
            #expect(throws: PresentmentError.self, "\(name)") {
                try engine.parse(rawRequest: raw, origin: "https://verifier.example")
            }
            do { _ = try engine.parse(rawRequest: raw, origin: "https://verifier.example") } catch {
                #expect(error.code == code, "\(name): \(error)")
            }
        }
        // The good one parses.
        _ = try engine.parse(
            rawRequest: Data("{\"deviceRequest\":\"\(Self.dr)\",\"encryptionInfo\":\"\(info())\"}".utf8),
            origin: "https://verifier.example")
    }

}

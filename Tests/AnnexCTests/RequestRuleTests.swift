import Foundation
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
    struct OriginCase: CustomTestStringConvertible, Sendable {
        let input: String
        let expected: String?  // nil = refused
        var code: AnnexCError.Code = .invalidOrigin
        var testDescription: String { input.isEmpty ? "(empty)" : input }
    }

    static let origins: [OriginCase] = [
        .init(input: "https://example.com", expected: "https://example.com"),
        .init(input: "https://example.com/", expected: "https://example.com"),
        .init(input: "HTTPS://Example.COM", expected: "https://example.com"),
        .init(input: "https://example.com:443", expected: "https://example.com"),
        .init(input: "http://example.com:80/", expected: "http://example.com"),
        .init(input: "https://example.com:8443", expected: "https://example.com:8443"),
        .init(input: "http://127.0.0.1:3010", expected: "http://127.0.0.1:3010"),
        .init(input: "https://example.com:0443", expected: "https://example.com"),
        .init(input: "https://[::1]:8443", expected: "https://[::1]:8443"),
        .init(input: "https://[2001:DB8:0:0:0:0:0:1]", expected: "https://[2001:db8::1]"),
        .init(input: "https://xn--bcher-kva.example", expected: "https://xn--bcher-kva.example"),
        .init(input: "https://example.com:", expected: "https://example.com"),
        .init(input: "https://example.com", expected: "https://example.com"),
        .init(input: "https://Example.com:08443/", expected: "https://example.com:8443"),
        .init(input: "http://example.com:0080", expected: "http://example.com"),
        .init(input: "http://example.com:443", expected: "http://example.com:443"),
        .init(input: "https://example.com:80", expected: "https://example.com:80"),
        .init(input: "https://example.com.", expected: "https://example.com."),
        .init(input: "https://sub_domain.example-1.com:0", expected: "https://sub_domain.example-1.com:0"),
        .init(input: "https://a..b", expected: nil),
        .init(input: "https://:443", expected: nil),
        .init(input: "", expected: nil, code: .missingOrigin),
        .init(input: " https://example.com", expected: nil),
        .init(input: "https://example.com\n", expected: nil),
        .init(input: "https://exa\u{7}mple.com", expected: nil),
        .init(input: "https://example.com/path", expected: nil),
        .init(input: "https://example.com?x=1", expected: nil),
        .init(input: "https://example.com#frag", expected: nil),
        .init(input: "https://user:pw@example.com", expected: nil),
        .init(input: "https://bücher.example", expected: nil),
        .init(input: "ftp://example.com", expected: nil),
        .init(input: "javascript:alert(1)", expected: nil),
        .init(input: "file:///etc/passwd", expected: nil),
        .init(input: "https://", expected: nil),
        .init(input: "https://example.com:99999", expected: nil),
        .init(input: "https://example.com:-1", expected: nil),
        .init(input: "https://[::1", expected: nil),
        .init(input: "https://[zz::1]", expected: nil),
        .init(input: "https://a:b:c", expected: nil),
        .init(input: "https://.example.com", expected: nil),
        .init(input: "android:apk-key-hash:abc", expected: nil),
    ]

    /// Hosts in every form the WHATWG URL standard parses, with the origin a browser serializes:
    /// expected values are `new URL(input).origin` from Node.js 20's WHATWG URL implementation
    /// (nil: it throws). IPv6 keeps hex pieces (never a dotted IPv4 tail); IPv4 in any numeric form
    /// becomes dotted decimal; a host ending in a number that is no IPv4 address is refused.
    static let whatwgOrigins: [OriginCase] = [
        .init(input: "http://[::ffff:7f00:1]:3010", expected: "http://[::ffff:7f00:1]:3010"),
        .init(input: "http://[::ffff:127.0.0.1]:3010", expected: "http://[::ffff:7f00:1]:3010"),
        .init(input: "https://[0:0:0:0:0:0:0:1]", expected: "https://[::1]"),
        .init(input: "https://[::1]:8443", expected: "https://[::1]:8443"),
        .init(input: "https://[2001:DB8::1]", expected: "https://[2001:db8::1]"),
        .init(input: "https://[2001:db8:0:0:1:0:0:1]", expected: "https://[2001:db8::1:0:0:1]"),
        .init(input: "https://[2001:db8::1:0:0:1]", expected: "https://[2001:db8::1:0:0:1]"),
        .init(input: "https://[0:0:1:0:0:0:0:0]", expected: "https://[0:0:1::]"),
        .init(input: "https://[1:0:0:2:0:0:0:3]", expected: "https://[1:0:0:2::3]"),
        .init(input: "https://[::]", expected: "https://[::]"),
        .init(input: "https://[1::]", expected: "https://[1::]"),
        .init(input: "https://[::1.2.3.4]", expected: "https://[::102:304]"),
        .init(input: "https://[fe80::1%25eth0]", expected: nil),
        .init(input: "https://[::ffff:127.0.0.01]", expected: nil),
        .init(input: "https://[1:2:3:4:5:6:7:8:9]", expected: nil),
        .init(input: "https://[1:2:3:4:5:6:7]", expected: nil),
        .init(input: "https://[::1:]", expected: nil),
        .init(input: "https://[:1]", expected: nil),
        .init(input: "https://[1:::2]", expected: nil),
        .init(input: "https://[12345::]", expected: nil),
        .init(input: "https://[::1.2.3]", expected: nil),
        .init(input: "https://[::1.2.3.256]", expected: nil),
        .init(input: "https://[1:2:3:4:5:6:7:1.2.3.4]", expected: nil),
        .init(input: "http://127.1", expected: "http://127.0.0.1"),
        .init(input: "http://0x7f.0.0.1", expected: "http://127.0.0.1"),
        .init(input: "http://2130706433", expected: "http://127.0.0.1"),
        .init(input: "http://127.0.0.1.", expected: "http://127.0.0.1"),
        .init(input: "http://0177.0.0.1", expected: "http://127.0.0.1"),
        .init(input: "http://0x7f000001:8080", expected: "http://127.0.0.1:8080"),
        .init(input: "http://127.0.1", expected: "http://127.0.0.1"),
        .init(input: "http://1.2.3.4.5", expected: nil),
        .init(input: "http://256.0.0.1", expected: nil),
        .init(input: "http://1.256", expected: "http://1.0.1.0"),
        .init(input: "http://09", expected: nil),
        .init(input: "http://0x", expected: "http://0.0.0.0"),
        .init(input: "http://example.123", expected: nil),
        .init(input: "http://4294967295", expected: "http://255.255.255.255"),
        .init(input: "http://4294967296", expected: nil),
        .init(input: "http://0X7F.1", expected: "http://127.0.0.1"),
        .init(input: "http://1.2.3.0x", expected: "http://1.2.3.0"),
        .init(input: "http://127.0.0.1:00080", expected: "http://127.0.0.1"),
        .init(input: "http://a.example:0443", expected: "http://a.example:443"),
        .init(input: "https://a.example:0000443", expected: "https://a.example"),
        .init(input: "https://a.example:00000000000000000443", expected: "https://a.example"),
    ]

    @Test(
        "Origins serialize exactly as a browser's URL parser does (IPv6 pieces, IPv4 numeric forms, ports with leading zeros)",
        arguments: whatwgOrigins)
    func whatwgOrigin(_ c: OriginCase) {
        // Origins with a zone identifier contain '%', which the engine refuses for any host.
        do {
            let o = try Origin(c.input)
            #expect(o.serialized == c.expected, "\(c.input)")
            // The serialization is a fixed point.
            #expect((try? Origin(o.serialized))?.serialized == o.serialized)
        } catch {
            #expect(c.expected == nil, "\(c.input): \(error)")
            #expect(error.code == .invalidOrigin)
        }
    }

    @Test(
        "Origin serialization: lower case, default port dropped, no path or slash, IPv6 canonical; refusals",
        arguments: origins)
    func origin(_ c: OriginCase) {
        do {
            let o = try Origin(c.input)
            #expect(o.serialized == c.expected, "\(c.input)")
        } catch {
            #expect(c.expected == nil, "\(c.input) refused: \(error)")
            #expect(error.code == c.code)
            #expect(!error.detail.contains(c.input) || c.input.isEmpty)
        }
    }

    @Test("App origins only when enabled")
    func appOrigins() throws {
        #expect(
            try Origin("android:apk-key-hash:Z2l0aHVi_-A", allowAppOrigins: true).serialized
                == "android:apk-key-hash:Z2l0aHVi_-A")
        #expect(
            try Origin("Android:APK-Key-Hash:Z2l0aHVi_-A", allowAppOrigins: true).serialized
                == "android:apk-key-hash:Z2l0aHVi_-A")
        expectRefusal(.invalidOrigin, "app origin hash is not base64") {
            try Origin("android:apk-key-hash:", allowAppOrigins: true)
        }
    }

    static let ei =
        "gmVkY2FwaaJlbm9uY2VQAAECAwQFBgcICQoLDA0OD3JyZWNpcGllbnRQdWJsaWNLZXmkAQIgASFYILO0LJXwA8VAp7-rI9YIJvj1wfEQ122YdEjwxUFeYAFEIlgg0u68CgTFZk_nslWFmYhDMQQ6vdBNf2vwy3QHKI_80Js"
    static let dr =
        "omd2ZXJzaW9uYzEuMGtkb2NSZXF1ZXN0c4GhbGl0ZW1zUmVxdWVzdNgYWEuiZ2RvY1R5cGV1b3JnLmlzby4xODAxMy41LjEubURMam5hbWVTcGFjZXOhcW9yZy5pc28uMTgwMTMuNS4xoWthZ2Vfb3Zlcl8xOPQ"

    enum Outcome: Sendable {
        case success(RequestFraming)
        case failure(AnnexCError.Code)
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
                name: "trailing = tolerated", json: "{\"deviceRequest\":\"\(dr)\",\"encryptionInfo\":\"\(ei)=\"}",
                result: .success(.dataObject)),
            .init(
                name: "only openid4vp", json: "{\"requests\":[{\"protocol\":\"openid4vp-v1-unsigned\",\"data\":{}}]}",
                result: .failure(.unsupportedProtocol)),
            .init(
                name: "unknown protocol", json: "{\"protocol\":\"preview\",\"data\":\(data)}",
                result: .failure(.unsupportedProtocol)),
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
        let engine = AnnexCEngine(context: try CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:])))
        do {
            let r = try engine.parse(rawRequest: Data(c.json.utf8), origin: "https://verifier.example")
            guard case .success(let f) = c.result else {
                Issue.record("\(c.name): accepted")
                return
            }
            #expect(r.framing == f)
            #expect(r.documents.first?.docType == "org.iso.18013.5.1.mDL")
        } catch {
            guard case .failure(let code) = c.result else {
                Issue.record("\(c.name): \(error)")
                return
            }
            #expect(error.code == code, "\(c.name): \(error)")
        }
    }

    @Test("The transcript hashes the encryptionInfo string exactly as received (with its tolerated padding)")
    func transcriptUsesReceivedString() throws {
        let engine = AnnexCEngine(context: try CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:])))
        let a = try engine.parse(
            rawRequest: Data("{\"deviceRequest\":\"\(Self.dr)\",\"encryptionInfo\":\"\(Self.ei)\"}".utf8),
            origin: "https://verifier.example")
        let b = try engine.parse(
            rawRequest: Data("{\"deviceRequest\":\"\(Self.dr)\",\"encryptionInfo\":\"\(Self.ei)=\"}".utf8),
            origin: "https://verifier.example")
        #expect(a.sessionTranscript != b.sessionTranscript)
        #expect(a.sessionTranscriptBytes.count == 44)
        #expect(Array(a.sessionTranscriptBytes.prefix(12)) == h("83 f6 f6 82 65 6463617069 58 20"))
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
        let cases: [(String, String, AnnexCError.Code)] = [
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
        let engine = AnnexCEngine(context: try CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:])))
        for (name, text, code) in cases {
            let raw = Data("{\"deviceRequest\":\"\(Self.dr)\",\"encryptionInfo\":\"\(text)\"}".utf8)
            #expect(throws: AnnexCError.self, "\(name)") {
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

    @Test("The planner's index sort matches the standard sort at every size, in order, reversed and shuffled")
    func indexSort() {
        var rng = SystemRandomNumberGenerator()
        for n in 0...40 {
            for input in [
                Array(0..<n), Array((0..<n).reversed()), (0..<n).map { _ in Int.random(in: 0..<8, using: &rng) },
                Array(0..<n).shuffled(using: &rng),
            ] {
                var a = input
                Planner.sortIndices(&a)
                #expect(a == input.sorted(), "n = \(n)")
            }
        }
    }

    @Test("Limits: request size, DocRequest count, element count (alternatives included)")
    func limits() throws {
        let engine = AnnexCEngine(
            context: try CredentialContext(entries: [], keyResolver: InMemoryKeyResolver([:])),
            configuration: .init(maxRequestBytes: 4096, maxDocRequests: 2, maxRequestedElements: 10))
        let huge = Data(
            ("{\"deviceRequest\":\"" + String(repeating: "A", count: 5000) + "\",\"encryptionInfo\":\"\(Self.ei)\"}")
                .utf8)
        expectRefusal(.limitExceeded, "request larger than the configured maximum") {
            try engine.parse(rawRequest: huge, origin: "https://v.example")
        }
        let elements = (0..<11).map { AnnexCReader.ElementRequest(ElementID("ns", "e\($0)")) }
        let many = try AnnexCReader.makeRequest(
            documents: [.init(docType: "d", elements: elements)], origin: try Origin("https://v.example"))
        expectRefusal(.limitExceeded, "more requested and alternative elements than the configured limit") {
            try engine.parse(rawRequest: many.rawRequest, origin: "https://v.example")
        }
        // Alternatives count against the same limit: 2 requested + 1 entry naming 2 sets of 4 = 11 references.
        let alts = (0..<2).map { k in (0..<4).map { ElementID("ns", "a\(k)\($0)") } }
        let substituted = try AnnexCReader.makeRequest(
            documents: [
                .init(
                    docType: "d",
                    elements: [
                        .init(ElementID("ns", "x"), intentToRetain: false),
                        .init(ElementID("ns", "y"), intentToRetain: false),
                    ],
                    alternatives: [.init(ElementID("ns", "x"), alts)])
            ], origin: try Origin("https://v.example"), version: .v1_1)
        expectRefusal(.limitExceeded, "more requested and alternative elements than the configured limit") {
            try engine.parse(rawRequest: substituted.rawRequest, origin: "https://v.example")
        }
        let fewer = try AnnexCReader.makeRequest(
            documents: [
                .init(
                    docType: "d", elements: [.init(ElementID("ns", "x"), intentToRetain: false)],
                    alternatives: [.init(ElementID("ns", "x"), [alts[0]])])
            ],
            origin: try Origin("https://v.example"), version: .v1_1)
        #expect(
            try engine.parse(rawRequest: fewer.rawRequest, origin: "https://v.example").documents[0].alternatives.count
                == 1)
        let docs = try AnnexCReader.makeRequest(
            documents: Array(
                repeating: .init(docType: "d", elements: [.init(ElementID("ns", "e"), intentToRetain: false)]), count: 3
            ), origin: try Origin("https://v.example"))
        expectRefusal(.limitExceeded, "more DocRequests than the configured limit") {
            try engine.parse(rawRequest: docs.rawRequest, origin: "https://v.example")
        }
    }
}

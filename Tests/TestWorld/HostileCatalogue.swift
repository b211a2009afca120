import Foundation
import AnnexC
import AnnexCReader
import HPKE
import MdocCBOR
import Presentment

/// The hostile-input catalogue's requests: each a request with exactly one fault, the code it must be
/// refused with, and the rule (a fragment of the refusal's detail) that must refuse it. Shared by the
/// library catalogue, the secrets scan and the CLI pass.

public enum HostileCatalogue {
    /// One catalogued request.
    public struct Case: Sendable {
        public let name: String
        public let json: [UInt8]
        public let origin: String
        public let code: AnnexCError.Code
        /// A fragment the refusal's detail must contain: proof it was refused by the rule it names.
        public var detail: String
    }

    public static let origin = "https://verifier.example"

    static func b64(_ v: CBORValue) -> String { Base64URL.encode(v.encoded()) }
    static func b64raw(_ b: [UInt8]) -> String { Base64URL.encode(b) }
    public static func data(_ dr: String, _ ei: String) -> [UInt8] {
        Array("{\"deviceRequest\":\"\(dr)\",\"encryptionInfo\":\"\(ei)\"}".utf8)
    }

    /// A bare `data` object carrying `deviceRequest` with a fresh valid EncryptionInfo (for tests that
    /// hand-build a DeviceRequest the reader library does not write, e.g. one with a `zkRequest`).
    public static func frame(deviceRequest: CBORValue) throws -> Data {
        let key = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256).publicKey.serialized
        let cose: CBORValue = .map([
            .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(Array(key[1..<33]))),
            .init(.int(-3), .bytes(Array(key[33...]))),
        ])
        let ei = b64(
            .array([
                .text("dcapi"),
                .map([.init(.text("nonce"), .bytes([1, 2, 3])), .init(.text("recipientPublicKey"), cose)]),
            ]))
        return Data(data(b64(deviceRequest), ei))
    }

    /// Every catalogued request, section by section.
    public static func requests(world: TestWorld) throws -> [Case] {
        let b = try CatalogueBuilder(world: world)
        b.envelopeRows()
        b.encryptionInfoRows()
        b.deviceRequestRows()
        try b.readerAuthenticationRows()
        b.originRows()
        return b.cases
    }
}

/// What the sections build faults into: a valid EncryptionInfo and ItemsRequest, a valid
/// DeviceRequest, and the rows added so far.
final class CatalogueBuilder {
    let world: TestWorld
    let x: [UInt8]
    let y: [UInt8]
    let goodKey: CBORValue
    let ei: String
    let items: CBORValue
    let goodDR: String
    var cases = [HostileCatalogue.Case]()

    init(world: TestWorld) throws {
        self.world = world
        let key = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256).publicKey.serialized
        x = Array(key[1..<33])
        y = Array(key[33...])
        goodKey = .map([
            .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bytes(y)),
        ])
        ei = HostileCatalogue.b64(
            .array([
                .text("dcapi"),
                .map([.init(.text("nonce"), .bytes([1, 2, 3])), .init(.text("recipientPublicKey"), goodKey)]),
            ]))
        items = RequestCBOR.itemsRequest(TestWorld.mDL, TestWorld.mDLNS, [("family_name", .bool(true))])
        goodDR = HostileCatalogue.b64(RequestCBOR.deviceRequest(docRequests: .array([RequestCBOR.docRequest(items)])))
    }

    func b64(_ v: CBORValue) -> String { HostileCatalogue.b64(v) }
    func b64raw(_ b: [UInt8]) -> String { HostileCatalogue.b64raw(b) }
    func data(_ dr: String, _ ei: String) -> [UInt8] { HostileCatalogue.data(dr, ei) }

    func add(
        _ name: String, _ json: [UInt8], _ code: AnnexCError.Code, origin: String = HostileCatalogue.origin,
        detail: String
    ) {
        cases.append(.init(name: name, json: json, origin: origin, code: code, detail: detail))
    }

    func addData(_ name: String, dr: String? = nil, ei: String? = nil, _ code: AnnexCError.Code, detail: String) {
        add(name, data(dr ?? goodDR, ei ?? self.ei), code, detail: detail)
    }
}

extension CatalogueBuilder {
    func envelopeRows() {
        // Envelope / JSON.
        add("empty input", [], .malformedRequest, detail: "JSON ends early")
        // Many escaped keys (the shape that made the duplicate check quadratic), one a duplicate far
        // past the pairwise bound: found through the set, refused.
        let keys = (0..<600).map { "\"\(String(repeating: "\\u0061", count: 20))\($0)\":0" }
        add(
            "duplicate escaped key among 600 in another protocol's entry",
            Array(
                ("{\"digital\":{\"requests\":[{\"protocol\":\"openid4vp-v1-unsigned\",\"data\":{"
                    + keys.joined(separator: ",") + ",\"" + String(repeating: "a", count: 20) + "599\":1}},"
                    + "{\"protocol\":\"org-iso-mdoc\",\"data\":" + String(decoding: data(goodDR, ei), as: UTF8.self)
                    + "}]}}").utf8), .malformedRequest, detail: "duplicate JSON object key")
        add("whitespace only", Array("   \n".utf8), .malformedRequest, detail: "JSON ends early")
        add("not JSON", Array("hello".utf8), .malformedRequest, detail: "invalid JSON value")
        add("JSON array", Array("[]".utf8), .malformedRequest, detail: "request is not a JSON object")
        add("JSON string", Array("\"x\"".utf8), .malformedRequest, detail: "request is not a JSON object")
        add("JSON number", Array("42".utf8), .malformedRequest, detail: "request is not a JSON object")
        add("unterminated object", Array("{\"deviceRequest\":".utf8), .malformedRequest, detail: "JSON ends early")
        add(
            "trailing garbage", data(goodDR, ei) + Array(" x".utf8), .malformedRequest,
            detail: "trailing bytes after the JSON value")
        add(
            "duplicate deviceRequest",
            Array(
                "{\"deviceRequest\":\"\(goodDR)\",\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\(ei)\"}".utf8),
            .malformedRequest, detail: "duplicate JSON object key")
        add(
            "deep nesting 100000", Array(String(repeating: "[", count: 100_000).utf8), .malformedRequest,
            detail: "JSON nested too deeply")
        add(
            "deep object nesting (65 levels)",
            Array((String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65)).utf8),
            .malformedRequest,
            detail: "nested too deeply")
        add(
            "org-iso-mdoc data nested 5 deep",
            Array(
                "{\"protocol\":\"org-iso-mdoc\",\"data\":{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\(ei)\",\"x\":[[[[0]]]]}}"
                    .utf8),
            .malformedRequest, detail: "data nested too deeply")
        add(
            "org-iso-mdoc data with 65 members",
            Array(
                ("{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\(ei)\""
                    + (0..<63).map { ",\"m\($0)\":[0]" }.joined() + "}").utf8),
            .malformedRequest, detail: "too many members")
        add(
            "requests with 1025 entries",
            Array(("{\"requests\":[" + Array(repeating: "0", count: 1025).joined(separator: ",") + "]}").utf8),
            .malformedRequest,
            detail: "too many JSON array elements")
        add(
            "huge string",
            Array(
                ("{\"deviceRequest\":\"" + String(repeating: "A", count: 300_000) + "\",\"encryptionInfo\":\"\(ei)\"}")
                    .utf8), .limitExceeded, detail: "request larger than the configured maximum")
        add(
            "invalid UTF-8 in JSON", [0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d], .malformedRequest,
            detail: "invalid UTF-8 in JSON string")
        add(
            "lone surrogate escape", Array("{\"deviceRequest\":\"\\ud800\",\"encryptionInfo\":\"\(ei)\"}".utf8),
            .malformedRequest, detail: "lone surrogate in JSON string")
        add(
            "control character in string", Array("{\"deviceRequest\":\"a\u{1}b\",\"encryptionInfo\":\"\(ei)\"}".utf8),
            .malformedRequest, detail: "control character in JSON string")
        add(
            "missing deviceRequest", Array("{\"encryptionInfo\":\"\(ei)\"}".utf8), .malformedRequest,
            detail: "data.deviceRequest missing")
        add(
            "missing encryptionInfo", Array("{\"deviceRequest\":\"\(goodDR)\"}".utf8), .malformedRequest,
            detail: "data.encryptionInfo missing")
        add(
            "deviceRequest is a number", Array("{\"deviceRequest\":1,\"encryptionInfo\":\"\(ei)\"}".utf8),
            .malformedRequest, detail: "data.deviceRequest is not a string")
        add(
            "deviceRequest is null", Array("{\"deviceRequest\":null,\"encryptionInfo\":\"\(ei)\"}".utf8),
            .malformedRequest, detail: "data.deviceRequest is not a string")
        add(
            "encryptionInfo is an object", Array("{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":{}}".utf8),
            .malformedRequest, detail: "data.encryptionInfo is not a string")
        add(
            "empty deviceRequest", Array("{\"deviceRequest\":\"\",\"encryptionInfo\":\"\(ei)\"}".utf8),
            .malformedRequest, detail: "data.deviceRequest is empty")
        add(
            "empty encryptionInfo", Array("{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\"}".utf8),
            .malformedRequest, detail: "data.encryptionInfo is empty")
        add(
            "no org-iso-mdoc entry", Array("{\"requests\":[{\"protocol\":\"openid4vp-v1-signed\",\"data\":{}}]}".utf8),
            .unsupportedProtocol, detail: "no org-iso-mdoc entry in requests")
        add(
            "empty requests", Array("{\"requests\":[]}".utf8), .unsupportedProtocol,
            detail: "no org-iso-mdoc entry in requests")
        add("unknown framing", Array("{\"foo\":1}".utf8), .malformedRequest, detail: "no recognised request framing")
        add(
            "requests entry without data", Array("{\"requests\":[{\"protocol\":\"org-iso-mdoc\"}]}".utf8),
            .malformedRequest, detail: "requests entry lacks data")
        add(
            "requests entry not an object (skipped: no org-iso-mdoc entry)", Array("{\"requests\":[1]}".utf8),
            .unsupportedProtocol, detail: "no org-iso-mdoc entry in requests")
        add(
            "requests not an array", Array("{\"requests\":{}}".utf8), .malformedRequest,
            detail: "requests is not an array")
        add(
            "digital not an object", Array("{\"digital\":[]}".utf8), .malformedRequest,
            detail: "digital is not an object")
        add(
            "protocol preview", Array("{\"protocol\":\"preview\",\"data\":{}}".utf8), .unsupportedProtocol,
            detail: "protocol is not org-iso-mdoc")
        add(
            "protocol with different case",
            Array("{\"protocol\":\"ORG-ISO-MDOC\",\"data\":\(String(decoding: data(goodDR, ei), as: UTF8.self))}".utf8),
            .unsupportedProtocol, detail: "protocol is not org-iso-mdoc")
        add("data missing", Array("{\"protocol\":\"org-iso-mdoc\"}".utf8), .malformedRequest, detail: "data missing")
        add(
            "data not JSON string", Array("{\"protocol\":\"org-iso-mdoc\",\"data\":\"{nope\"}".utf8), .malformedRequest,
            detail: "data string is not JSON")
        addData(
            "non-base64url characters", dr: "+" + goodDR.dropFirst(), .malformedRequest,
            detail: "deviceRequest is not base64url")
        addData(
            "padding in the middle", dr: "ab=c" + goodDR, .malformedRequest, detail: "deviceRequest is not base64url")
        addData("too much padding", dr: goodDR + "===", .malformedRequest, detail: "deviceRequest is not base64url")
        // Padding of the right length, which a browser refuses too.
        let padded = goodDR + String(repeating: "=", count: (4 - goodDR.utf8.count % 4) % 4)
        addData(
            "deviceRequest with correct padding", dr: padded == goodDR ? goodDR + "=" : padded, .malformedRequest,
            detail: "deviceRequest is not base64url (URL-safe alphabet, no padding)")
        let paddedEI = ei + String(repeating: "=", count: (4 - ei.utf8.count % 4) % 4)
        addData(
            "encryptionInfo with correct padding", ei: paddedEI == ei ? ei + "=" : paddedEI, .malformedRequest,
            detail: "encryptionInfo is not base64url (URL-safe alphabet, no padding)")
        addData("impossible base64 length", dr: "A", .malformedRequest, detail: "deviceRequest is not base64url")
        addData(
            "encryptionInfo not base64url", ei: "!!!!", .malformedRequest, detail: "encryptionInfo is not base64url")
    }

    func encryptionInfoRows() {
        // EncryptionInfo.
        func eiWith(_ v: CBORValue) -> String { b64(v) }
        addData(
            "EncryptionInfo wrong label",
            ei: eiWith(
                .array([
                    .text("ARFEncryptionv2"),
                    .map([.init(.text("nonce"), .bytes([1])), .init(.text("recipientPublicKey"), goodKey)]),
                ])), .invalidEncryptionInfo, detail: "EncryptionInfo[0] is not \"dcapi\"")
        addData(
            "EncryptionInfo missing nonce",
            ei: eiWith(.array([.text("dcapi"), .map([.init(.text("recipientPublicKey"), goodKey)])])),
            .invalidEncryptionInfo, detail: "nonce missing")
        addData(
            "EncryptionInfo missing key",
            ei: eiWith(.array([.text("dcapi"), .map([.init(.text("nonce"), .bytes([1]))])])), .invalidEncryptionInfo,
            detail: "recipientPublicKey missing")
        addData(
            "EncryptionInfo not an array", ei: eiWith(.map([])), .invalidEncryptionInfo,
            detail: "EncryptionInfo is not an array of 2")
        addData(
            "EncryptionInfo array of 1", ei: eiWith(.array([.text("dcapi")])), .invalidEncryptionInfo,
            detail: "EncryptionInfo is not an array of 2")
        addData(
            "EncryptionInfo not CBOR", ei: b64raw([0x1c]), .invalidEncryptionInfo,
            detail: "EncryptionInfo is not well-formed CBOR (malformedHead)")
        addData(
            "EncryptionInfo trailing bytes", ei: b64raw(CBORValue.array([.text("dcapi"), .map([])]).encoded() + [0]),
            .invalidEncryptionInfo, detail: "EncryptionInfo is not well-formed CBOR (trailingBytes)")
        func keyCase(_ name: String, _ k: CBORValue, _ detail: String) {
            addData(
                "recipient key: \(name)",
                ei: eiWith(
                    .array([
                        .text("dcapi"),
                        .map([.init(.text("nonce"), .bytes([1])), .init(.text("recipientPublicKey"), k)]),
                    ])), .unsupportedRecipientKey,
                detail: detail)
        }
        var offY = y
        offY[31] ^= 1
        keyCase(
            "OKP X25519", .map([.init(.int(1), .int(1)), .init(.int(-1), .int(4)), .init(.int(-2), .bytes(x))]),
            "recipientPublicKey kty is not EC2")
        keyCase(
            "P-384",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(2)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bytes(y)),
            ]), "recipientPublicKey curve is not P-256")
        keyCase(
            "missing kty", .map([.init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bytes(y))]),
            "recipientPublicKey kty is not EC2")
        keyCase(
            "x of 31 bytes",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(Array(x.dropFirst()))),
                .init(.int(-3), .bytes(y)),
            ]), "recipientPublicKey is not a valid P-256 point (coordinate length)")
        keyCase(
            "y of 33 bytes",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bytes(y + [0])),
            ]), "recipientPublicKey is not a valid P-256 point (coordinate length)")
        keyCase(
            "off-curve point",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bytes(offY)),
            ]), "recipientPublicKey is not a valid P-256 point (point not on curve)")
        keyCase(
            "point at infinity (zeros)",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)),
                .init(.int(-2), .bytes([UInt8](repeating: 0, count: 32))),
                .init(.int(-3), .bytes([UInt8](repeating: 0, count: 32))),
            ]), "recipientPublicKey is not a valid P-256 point (point not on curve)")
        keyCase(
            "compressed point",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bool(false)),
            ]), "recipientPublicKey is not a valid P-256 point (compressed point)")
        keyCase(
            "coordinates ≥ p",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)),
                .init(.int(-2), .bytes([UInt8](repeating: 0xff, count: 32))), .init(.int(-3), .bytes(y)),
            ]), "recipientPublicKey is not a valid P-256 point (point not on curve)")
        keyCase(
            "private key included",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bytes(y)), .init(.int(-4), .bytes([1])),
            ]), "recipientPublicKey is not a valid P-256 point (private key material in a public COSE_Key)")
    }
}

/// DeviceRequest pieces as `CBORValue`s (encoded with deterministically sorted keys), for tests that
/// hand-build requests with one fault (`.encoded(bytes)` splices pre-encoded parts such as
/// ItemsRequestBytes taken from another request).
public enum RequestCBOR {
    /// `{"version": version, "docRequests": docRequests, ...extra}` (encoding sorts the keys).
    public static func deviceRequest(
        version: CBORValue = .text("1.0"), docRequests: CBORValue, extra: [CBORValue.MapEntry] = []
    ) -> CBORValue {
        .map([.init(.text("version"), version), .init(.text("docRequests"), docRequests)] + extra)
    }

    /// `{"itemsRequest": items, ? "readerAuth": readerAuth}`.
    public static func docRequest(_ items: CBORValue, readerAuth: CBORValue? = nil) -> CBORValue {
        .map([.init(.text("itemsRequest"), items)] + (readerAuth.map { [.init(.text("readerAuth"), $0)] } ?? []))
    }

    /// ItemsRequestBytes: `#6.24(<<{"docType", "nameSpaces": {nameSpace: {element: intent}}, ...extra}>>)`.
    public static func itemsRequest(
        _ docType: String, _ nameSpace: String, _ elements: [(String, CBORValue)], extra: [CBORValue.MapEntry] = []
    ) -> CBORValue {
        .embedded(
            .map(
                [
                    .init(.text("docType"), .text(docType)),
                    .init(
                        .text("nameSpaces"),
                        .map([.init(.text(nameSpace), .map(elements.map { .init(.text($0.0), $0.1) }))])
                    ),
                ] + extra))
    }

    /// DeviceRequestInfoBytes with one mandatory use case answered by `documentSets`.
    public static func useCases(_ documentSets: [[UInt64]]) -> CBORValue {
        .embedded(
            .map([
                .init(
                    .text("useCases"),
                    .array([
                        .map([
                            .init(.text("mandatory"), .bool(true)),
                            .init(.text("documentSets"), .array(documentSets.map { .array($0.map { .unsigned($0) }) })),
                        ])
                    ]))
            ]))
    }

    /// A DocRequestInfo (`requestInfo`) with a `zkRequest` for one Longfellow system spec.
    public static func zkRequest(required: CBORValue) -> CBORValue {
        .map([
            .init(
                .text("zkRequest"),
                .map([
                    .init(
                        .text("systemSpecs"),
                        .array([
                            .map([
                                .init(.text("zkSystemId"), .text("longfellow-libzk-v1_7_1")),
                                .init(.text("system"), .text("longfellow-libzk-v1")),
                                .init(.text("params"), .map([.init(.text("version"), .unsigned(7))])),
                            ])
                        ])),
                    .init(.text("zkRequired"), required),
                ]))
        ])
    }

    /// A DocRequestInfo (`requestInfo`) with one `alternativeDataElements` entry.
    public static func alternatives(_ requested: CBORValue, _ sets: CBORValue) -> CBORValue {
        .map([
            .init(
                .text("alternativeDataElements"),
                .array([
                    .map([.init(.text("requestedElement"), requested), .init(.text("alternativeElementSets"), sets)])
                ]))
        ])
    }
}

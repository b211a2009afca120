import Foundation
import AnnexC
import DigitalCredentials
import WebEncoding
import AnnexCReader
import HPKE
import MdocCBOR
import Presentment

/// The hostile-input catalogue's requests: each a request with exactly one fault and the refusal it
/// must get: the rule (so the code), where, and the lower layer's error (`ExpectedRefusal`). Shared by the
/// library catalogue, the secrets scan and the CLI pass.

public enum HostileCatalogue {
    /// One catalogued request.
    public struct Case: Sendable {
        public let name: String
        public let json: [UInt8]
        public let origin: String
        /// What it must be refused by.
        public let expected: ExpectedRefusal
        /// The refusal's code.
        public var code: PresentmentError.Code { expected.code }
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

    func add<R: RefusalRule>(
        _ name: String, _ json: [UInt8], _ rule: R, origin: String = HostileCatalogue.origin,
        at location: String? = nil,
        lower: String? = nil
    ) {
        cases.append(
            .init(
                name: name, json: json, origin: origin,
                expected: ExpectedRefusal(rule, at: location, lower: lower)))
    }

    func addData<R: RefusalRule>(
        _ name: String, dr: String? = nil, ei: String? = nil, _ rule: R, at location: String? = nil,
        lower: String? = nil
    ) {
        add(name, data(dr ?? goodDR, ei ?? self.ei), rule, at: location, lower: lower)
    }
}

extension CatalogueBuilder {
    func envelopeRows() {
        // Envelope / JSON.
        add("empty input", [], FramingRule.json, lower: "json.endsEarly")
        // Many escaped keys (the shape that made the duplicate check quadratic), one a duplicate far
        // past the pairwise bound: found through the set, refused.
        let keys = (0..<600).map { "\"\(String(repeating: "\\u0061", count: 20))\($0)\":0" }
        add(
            "duplicate escaped key among 600 in another protocol's entry",
            Array(
                ("{\"digital\":{\"requests\":[{\"protocol\":\"openid4vp-v1-unsigned\",\"data\":{"
                    + keys.joined(separator: ",") + ",\"" + String(repeating: "a", count: 20) + "599\":1}},"
                    + "{\"protocol\":\"org-iso-mdoc\",\"data\":" + String(decoding: data(goodDR, ei), as: UTF8.self)
                    + "}]}}").utf8), FramingRule.json, lower: "json.duplicateKey")
        add("whitespace only", Array("   \n".utf8), FramingRule.json, lower: "json.endsEarly")
        add("not JSON", Array("hello".utf8), FramingRule.json, lower: "json.invalidValue")
        add("JSON array", Array("[]".utf8), FramingRule.notObject)
        add("JSON string", Array("\"x\"".utf8), FramingRule.notObject)
        add("JSON number", Array("42".utf8), FramingRule.notObject)
        add("unterminated object", Array("{\"deviceRequest\":".utf8), FramingRule.json, lower: "json.endsEarly")
        add(
            "trailing garbage", data(goodDR, ei) + Array(" x".utf8), FramingRule.json, lower: "json.trailingBytes")
        add(
            "duplicate deviceRequest",
            Array(
                "{\"deviceRequest\":\"\(goodDR)\",\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\(ei)\"}".utf8),
            FramingRule.json, lower: "json.duplicateKey")
        add(
            "deep nesting 100000", Array(String(repeating: "[", count: 100_000).utf8), FramingRule.json,
            lower: "json.tooDeep")
        add(
            "deep object nesting (65 levels)",
            Array((String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65)).utf8),
            FramingRule.json, lower: "json.tooDeep")
        add(
            "org-iso-mdoc data nested 5 deep",
            Array(
                "{\"protocol\":\"org-iso-mdoc\",\"data\":{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\(ei)\",\"x\":[[[[0]]]]}}"
                    .utf8),
            AnnexCRule.dataTooDeep)
        add(
            "org-iso-mdoc data with 65 members",
            Array(
                ("{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\(ei)\""
                    + (0..<63).map { ",\"m\($0)\":[0]" }.joined() + "}").utf8),
            AnnexCRule.dataTooWide)
        add(
            "requests with 1025 entries",
            Array(("{\"requests\":[" + Array(repeating: "0", count: 1025).joined(separator: ",") + "]}").utf8),
            FramingRule.json, lower: "json.tooManyElements")
        add(
            "huge string",
            Array(
                ("{\"deviceRequest\":\"" + String(repeating: "A", count: 300_000) + "\",\"encryptionInfo\":\"\(ei)\"}")
                    .utf8), FramingRule.tooLarge)
        add(
            "invalid UTF-8 in JSON", [0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d], FramingRule.json,
            lower: "json.invalidUTF8")
        add(
            "lone surrogate escape", Array("{\"deviceRequest\":\"\\ud800\",\"encryptionInfo\":\"\(ei)\"}".utf8),
            FramingRule.json, lower: "json.loneSurrogate")
        add(
            "control character in string", Array("{\"deviceRequest\":\"a\u{1}b\",\"encryptionInfo\":\"\(ei)\"}".utf8),
            FramingRule.json, lower: "json.controlCharacter")
        add(
            "missing deviceRequest", Array("{\"encryptionInfo\":\"\(ei)\"}".utf8), AnnexCRule.deviceRequestMissing)
        add(
            "missing encryptionInfo", Array("{\"deviceRequest\":\"\(goodDR)\"}".utf8), AnnexCRule.encryptionInfoMissing)
        add(
            "deviceRequest is a number", Array("{\"deviceRequest\":1,\"encryptionInfo\":\"\(ei)\"}".utf8),
            AnnexCRule.deviceRequestNotString)
        add(
            "deviceRequest is null", Array("{\"deviceRequest\":null,\"encryptionInfo\":\"\(ei)\"}".utf8),
            AnnexCRule.deviceRequestNotString)
        add(
            "encryptionInfo is an object", Array("{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":{}}".utf8),
            AnnexCRule.encryptionInfoNotString)
        add(
            "empty deviceRequest", Array("{\"deviceRequest\":\"\",\"encryptionInfo\":\"\(ei)\"}".utf8),
            AnnexCRule.deviceRequestEmpty)
        add(
            "empty encryptionInfo", Array("{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\"}".utf8),
            AnnexCRule.encryptionInfoEmpty)
        add(
            "no org-iso-mdoc entry", Array("{\"requests\":[{\"protocol\":\"openid4vp-v1-signed\",\"data\":{}}]}".utf8),
            FramingRule.noEntry)
        add(
            "empty requests", Array("{\"requests\":[]}".utf8), FramingRule.noEntry)
        add("unknown framing", Array("{\"foo\":1}".utf8), FramingRule.noFraming)
        add(
            "requests entry without data", Array("{\"requests\":[{\"protocol\":\"org-iso-mdoc\"}]}".utf8),
            FramingRule.dataMissing)
        add(
            "requests entry not an object (skipped: no org-iso-mdoc entry)", Array("{\"requests\":[1]}".utf8),
            FramingRule.noEntry)
        add(
            "requests not an array", Array("{\"requests\":{}}".utf8), FramingRule.requestsNotArray)
        add(
            "digital not an object", Array("{\"digital\":[]}".utf8), FramingRule.digitalNotObject)
        add(
            "protocol preview", Array("{\"protocol\":\"preview\",\"data\":{}}".utf8), FramingRule.noEntry)
        add(
            "protocol with different case",
            Array("{\"protocol\":\"ORG-ISO-MDOC\",\"data\":\(String(decoding: data(goodDR, ei), as: UTF8.self))}".utf8),
            FramingRule.noEntry)
        add("data missing", Array("{\"protocol\":\"org-iso-mdoc\"}".utf8), FramingRule.dataMissing)
        add(
            "data not JSON string", Array("{\"protocol\":\"org-iso-mdoc\",\"data\":\"{nope\"}".utf8),
            FramingRule.dataNotJSON)
        addData(
            "non-base64url characters", dr: "+" + goodDR.dropFirst(), AnnexCRule.deviceRequestNotBase64URL)
        addData(
            "padding in the middle", dr: "ab=c" + goodDR, AnnexCRule.deviceRequestNotBase64URL)
        addData("too much padding", dr: goodDR + "===", AnnexCRule.deviceRequestNotBase64URL)
        // Padding of the right length, which a browser refuses too.
        let padded = goodDR + String(repeating: "=", count: (4 - goodDR.utf8.count % 4) % 4)
        addData(
            "deviceRequest with correct padding", dr: padded == goodDR ? goodDR + "=" : padded,
            AnnexCRule.deviceRequestNotBase64URL)
        let paddedEI = ei + String(repeating: "=", count: (4 - ei.utf8.count % 4) % 4)
        addData(
            "encryptionInfo with correct padding", ei: paddedEI == ei ? ei + "=" : paddedEI,
            AnnexCRule.encryptionInfoNotBase64URL)
        addData("impossible base64 length", dr: "A", AnnexCRule.deviceRequestNotBase64URL)
        addData(
            "encryptionInfo not base64url", ei: "!!!!", AnnexCRule.encryptionInfoNotBase64URL)
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
                ])), AnnexCRule.encryptionInfoNotDcapi)
        addData(
            "EncryptionInfo missing nonce",
            ei: eiWith(.array([.text("dcapi"), .map([.init(.text("recipientPublicKey"), goodKey)])])),
            AnnexCRule.nonceMissing)
        addData(
            "EncryptionInfo missing key",
            ei: eiWith(.array([.text("dcapi"), .map([.init(.text("nonce"), .bytes([1]))])])),
            AnnexCRule.recipientKeyMissing)
        addData(
            "EncryptionInfo not an array", ei: eiWith(.map([])), AnnexCRule.encryptionInfoNotArray)
        addData(
            "EncryptionInfo array of 1", ei: eiWith(.array([.text("dcapi")])), AnnexCRule.encryptionInfoNotArray)
        addData(
            "EncryptionInfo not CBOR", ei: b64raw([0x1c]), AnnexCRule.encryptionInfoNotCBOR, lower: "cbor.malformedHead"
        )
        addData(
            "EncryptionInfo trailing bytes", ei: b64raw(CBORValue.array([.text("dcapi"), .map([])]).encoded() + [0]),
            AnnexCRule.encryptionInfoNotCBOR, lower: "cbor.trailingBytes")
        func keyCase(_ name: String, _ k: CBORValue, _ rule: AnnexCRule, lower: String? = nil) {
            addData(
                "recipient key: \(name)",
                ei: eiWith(
                    .array([
                        .text("dcapi"),
                        .map([.init(.text("nonce"), .bytes([1])), .init(.text("recipientPublicKey"), k)]),
                    ])), rule, lower: lower)
        }
        var offY = y
        offY[31] ^= 1
        keyCase(
            "OKP X25519", .map([.init(.int(1), .int(1)), .init(.int(-1), .int(4)), .init(.int(-2), .bytes(x))]),
            .recipientKeyNotEC2)
        keyCase(
            "P-384",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(2)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bytes(y)),
            ]), .recipientKeyNotP256)
        keyCase(
            "missing kty", .map([.init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bytes(y))]),
            .recipientKeyNotEC2)
        keyCase(
            "x of 31 bytes",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(Array(x.dropFirst()))),
                .init(.int(-3), .bytes(y)),
            ]), .recipientKeyInvalid, lower: "cose.")
        keyCase(
            "y of 33 bytes",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bytes(y + [0])),
            ]), .recipientKeyInvalid, lower: "cose.")
        keyCase(
            "off-curve point",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bytes(offY)),
            ]), .recipientKeyInvalid, lower: "cose.")
        keyCase(
            "point at infinity (zeros)",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)),
                .init(.int(-2), .bytes([UInt8](repeating: 0, count: 32))),
                .init(.int(-3), .bytes([UInt8](repeating: 0, count: 32))),
            ]), .recipientKeyInvalid, lower: "cose.")
        keyCase(
            "compressed point",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bool(false)),
            ]), .recipientKeyInvalid, lower: "cose.")
        keyCase(
            "coordinates ≥ p",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)),
                .init(.int(-2), .bytes([UInt8](repeating: 0xff, count: 32))), .init(.int(-3), .bytes(y)),
            ]), .recipientKeyInvalid, lower: "cose.")
        keyCase(
            "private key included",
            .map([
                .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bytes(y)), .init(.int(-4), .bytes([1])),
            ]), .recipientKeyInvalid, lower: "cose.")
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

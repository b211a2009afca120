import Foundation
import Testing
import TestSupport
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import TestWorld
import HPKE
import MdocCBOR
#if canImport(Glibc)
import Glibc
#endif

/// The hostile-input catalogue: every case must be refused with its exact error code, and `accept`
/// must produce no bytes at all.
@Suite("Annex C: hostile-input catalogue")
struct HostileCatalogueTests {
    struct Case: Sendable {
        let name: String
        let json: [UInt8]
        let origin: String
        let code: AnnexCError.Code
        /// A fragment the refusal's detail must contain: proof it was refused by the rule it names.
        var detail: String? = nil
    }

    static let origin = "https://verifier.example"

    static func b64(_ v: CBORValue) -> String { Base64URL.encode(v.encoded()) }
    static func b64raw(_ b: [UInt8]) -> String { Base64URL.encode(b) }
    static func data(_ dr: String, _ ei: String) -> [UInt8] { Array("{\"deviceRequest\":\"\(dr)\",\"encryptionInfo\":\"\(ei)\"}".utf8) }

    static func catalogue(world: TestWorld) throws -> [Case] {
        let key = try HPKE.PrivateKey.generate(kem: .p256HKDFSHA256).publicKey.serialized
        let x = Array(key[1..<33]), y = Array(key[33...])
        let goodKey: CBORValue = .map([.init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bytes(y))])
        let ei = b64(.array([.text("dcapi"), .map([.init(.text("nonce"), .bytes([1, 2, 3])), .init(.text("recipientPublicKey"), goodKey)])]))
        let items: CBORValue = .embedded(.map([.init(.text("docType"), .text(TestWorld.mDL)),
                                               .init(.text("nameSpaces"), .map([.init(.text(TestWorld.mDLNS), .map([.init(.text("family_name"), .bool(true))]))]))]))
        func dr(_ entries: [CBORValue.MapEntry]) -> String { b64(.map(entries)) }
        let goodDR = dr([.init(.text("version"), .text("1.0")), .init(.text("docRequests"), .array([.map([.init(.text("itemsRequest"), items)])]))])
        var cases = [Case]()
        func add(_ name: String, _ json: [UInt8], _ code: AnnexCError.Code, origin: String = Self.origin, detail: String? = nil) {
            cases.append(Case(name: name, json: json, origin: origin, code: code, detail: detail))
        }
        func addData(_ name: String, dr: String = goodDR, ei: String = ei, _ code: AnnexCError.Code) { add(name, data(dr, ei), code) }

        // Envelope / JSON.
        add("empty input", [], .malformedRequest)
        add("whitespace only", Array("   \n".utf8), .malformedRequest)
        add("not JSON", Array("hello".utf8), .malformedRequest)
        add("JSON array", Array("[]".utf8), .malformedRequest)
        add("JSON string", Array("\"x\"".utf8), .malformedRequest)
        add("JSON number", Array("42".utf8), .malformedRequest)
        add("unterminated object", Array("{\"deviceRequest\":".utf8), .malformedRequest)
        add("trailing garbage", data(goodDR, ei) + Array(" x".utf8), .malformedRequest)
        add("duplicate deviceRequest", Array("{\"deviceRequest\":\"\(goodDR)\",\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\(ei)\"}".utf8), .malformedRequest)
        add("deep nesting 100000", Array(String(repeating: "[", count: 100_000).utf8), .malformedRequest)
        add("deep object nesting (65 levels)", Array((String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65)).utf8), .malformedRequest,
            detail: "nested too deeply")
        add("org-iso-mdoc data nested 5 deep", Array("{\"protocol\":\"org-iso-mdoc\",\"data\":{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\(ei)\",\"x\":[[[[0]]]]}}".utf8),
            .malformedRequest, detail: "data nested too deeply")
        add("org-iso-mdoc data with 65 members", Array(("{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\(ei)\"" + (0..<63).map { ",\"m\($0)\":[0]" }.joined() + "}").utf8),
            .malformedRequest, detail: "too many members")
        add("requests with 1025 entries", Array(("{\"requests\":[" + Array(repeating: "0", count: 1025).joined(separator: ",") + "]}").utf8), .malformedRequest,
            detail: "too many JSON array elements")
        add("huge string", Array(("{\"deviceRequest\":\"" + String(repeating: "A", count: 300_000) + "\",\"encryptionInfo\":\"\(ei)\"}").utf8), .limitExceeded)
        add("invalid UTF-8 in JSON", [0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d], .malformedRequest)
        add("lone surrogate escape", Array("{\"deviceRequest\":\"\\ud800\",\"encryptionInfo\":\"\(ei)\"}".utf8), .malformedRequest)
        add("control character in string", Array("{\"deviceRequest\":\"a\u{1}b\",\"encryptionInfo\":\"\(ei)\"}".utf8), .malformedRequest)
        add("missing deviceRequest", Array("{\"encryptionInfo\":\"\(ei)\"}".utf8), .malformedRequest)
        add("missing encryptionInfo", Array("{\"deviceRequest\":\"\(goodDR)\"}".utf8), .malformedRequest)
        add("deviceRequest is a number", Array("{\"deviceRequest\":1,\"encryptionInfo\":\"\(ei)\"}".utf8), .malformedRequest)
        add("deviceRequest is null", Array("{\"deviceRequest\":null,\"encryptionInfo\":\"\(ei)\"}".utf8), .malformedRequest)
        add("encryptionInfo is an object", Array("{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":{}}".utf8), .malformedRequest)
        add("empty deviceRequest", Array("{\"deviceRequest\":\"\",\"encryptionInfo\":\"\(ei)\"}".utf8), .malformedRequest)
        add("empty encryptionInfo", Array("{\"deviceRequest\":\"\(goodDR)\",\"encryptionInfo\":\"\"}".utf8), .malformedRequest)
        add("no org-iso-mdoc entry", Array("{\"requests\":[{\"protocol\":\"openid4vp-v1-signed\",\"data\":{}}]}".utf8), .unsupportedProtocol)
        add("empty requests", Array("{\"requests\":[]}".utf8), .unsupportedProtocol)
        add("unknown framing", Array("{\"foo\":1}".utf8), .malformedRequest)
        add("requests entry without data", Array("{\"requests\":[{\"protocol\":\"org-iso-mdoc\"}]}".utf8), .malformedRequest)
        add("requests entry not an object (skipped: no org-iso-mdoc entry)", Array("{\"requests\":[1]}".utf8), .unsupportedProtocol)
        add("requests not an array", Array("{\"requests\":{}}".utf8), .malformedRequest)
        add("digital not an object", Array("{\"digital\":[]}".utf8), .malformedRequest)
        add("protocol preview", Array("{\"protocol\":\"preview\",\"data\":{}}".utf8), .unsupportedProtocol)
        add("protocol with different case", Array("{\"protocol\":\"ORG-ISO-MDOC\",\"data\":\(String(decoding: data(goodDR, ei), as: UTF8.self))}".utf8), .unsupportedProtocol)
        add("data missing", Array("{\"protocol\":\"org-iso-mdoc\"}".utf8), .malformedRequest)
        add("data not JSON string", Array("{\"protocol\":\"org-iso-mdoc\",\"data\":\"{nope\"}".utf8), .malformedRequest)
        addData("non-base64url characters", dr: "+" + goodDR.dropFirst(), .malformedRequest)
        addData("padding in the middle", dr: "ab=c" + goodDR, .malformedRequest)
        addData("too much padding", dr: goodDR + "===", .malformedRequest)
        addData("impossible base64 length", dr: "A", .malformedRequest)
        addData("encryptionInfo not base64url", ei: "!!!!", .malformedRequest)

        // EncryptionInfo.
        func eiWith(_ v: CBORValue) -> String { b64(v) }
        addData("EncryptionInfo wrong label", ei: eiWith(.array([.text("ARFEncryptionv2"), .map([.init(.text("nonce"), .bytes([1])), .init(.text("recipientPublicKey"), goodKey)])])), .invalidEncryptionInfo)
        addData("EncryptionInfo missing nonce", ei: eiWith(.array([.text("dcapi"), .map([.init(.text("recipientPublicKey"), goodKey)])])), .invalidEncryptionInfo)
        addData("EncryptionInfo missing key", ei: eiWith(.array([.text("dcapi"), .map([.init(.text("nonce"), .bytes([1]))])])), .invalidEncryptionInfo)
        addData("EncryptionInfo not an array", ei: eiWith(.map([])), .invalidEncryptionInfo)
        addData("EncryptionInfo array of 1", ei: eiWith(.array([.text("dcapi")])), .invalidEncryptionInfo)
        addData("EncryptionInfo not CBOR", ei: b64raw([0x1c]), .invalidEncryptionInfo)
        addData("EncryptionInfo trailing bytes", ei: b64raw(CBORValue.array([.text("dcapi"), .map([])]).encoded() + [0]), .invalidEncryptionInfo)
        func keyCase(_ name: String, _ k: CBORValue) {
            addData("recipient key: \(name)", ei: eiWith(.array([.text("dcapi"), .map([.init(.text("nonce"), .bytes([1])), .init(.text("recipientPublicKey"), k)])])), .unsupportedRecipientKey)
        }
        var offY = y; offY[31] ^= 1
        keyCase("OKP X25519", .map([.init(.int(1), .int(1)), .init(.int(-1), .int(4)), .init(.int(-2), .bytes(x))]))
        keyCase("P-384", .map([.init(.int(1), .int(2)), .init(.int(-1), .int(2)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bytes(y))]))
        keyCase("missing kty", .map([.init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bytes(y))]))
        keyCase("x of 31 bytes", .map([.init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(Array(x.dropFirst()))), .init(.int(-3), .bytes(y))]))
        keyCase("y of 33 bytes", .map([.init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bytes(y + [0]))]))
        keyCase("off-curve point", .map([.init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bytes(offY))]))
        keyCase("point at infinity (zeros)", .map([.init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes([UInt8](repeating: 0, count: 32))), .init(.int(-3), .bytes([UInt8](repeating: 0, count: 32)))]))
        keyCase("compressed point", .map([.init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bool(false))]))
        keyCase("coordinates ≥ p", .map([.init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes([UInt8](repeating: 0xff, count: 32))), .init(.int(-3), .bytes(y))]))
        keyCase("private key included", .map([.init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bytes(y)), .init(.int(-4), .bytes([1]))]))

        // DeviceRequest / CBOR.
        let docReq: CBORValue = .array([.map([.init(.text("itemsRequest"), items)])])
        addData("DeviceRequest not CBOR", dr: b64raw([0xff]), .invalidDeviceRequest)
        addData("DeviceRequest trailing bytes", dr: b64raw(Base64URL.decode(goodDR)! + [0]), .invalidDeviceRequest)
        addData("DeviceRequest unknown version 2.0", dr: dr([.init(.text("version"), .text("2.0")), .init(.text("docRequests"), docReq)]), .invalidDeviceRequest)
        addData("DeviceRequest version garbage", dr: dr([.init(.text("version"), .text("one")), .init(.text("docRequests"), docReq)]), .invalidDeviceRequest)
        addData("DeviceRequest version number", dr: dr([.init(.text("version"), .unsigned(1)), .init(.text("docRequests"), docReq)]), .invalidDeviceRequest)
        addData("DeviceRequest empty docRequests", dr: dr([.init(.text("version"), .text("1.0")), .init(.text("docRequests"), .array([]))]), .invalidDeviceRequest)
        addData("DeviceRequest docRequests not array", dr: dr([.init(.text("version"), .text("1.0")), .init(.text("docRequests"), .map([]))]), .invalidDeviceRequest)
        addData("itemsRequest not tag 24", dr: dr([.init(.text("version"), .text("1.0")), .init(.text("docRequests"), .array([.map([.init(.text("itemsRequest"), .bytes([0xa0]))])]))]), .invalidDeviceRequest)
        addData("tag 24 over text", dr: dr([.init(.text("version"), .text("1.0")), .init(.text("docRequests"), .array([.map([.init(.text("itemsRequest"), .tagged(24, .text("x")))])]))]), .invalidDeviceRequest)
        addData("tag 24 over non-CBOR bytes", dr: dr([.init(.text("version"), .text("1.0")), .init(.text("docRequests"), .array([.map([.init(.text("itemsRequest"), .tagged(24, .bytes([0x9f])))])]))]), .invalidDeviceRequest)
        addData("IntentToRetain not bool", dr: dr([.init(.text("version"), .text("1.0")), .init(.text("docRequests"), .array([.map([.init(.text("itemsRequest"), .embedded(.map([
            .init(.text("docType"), .text("d")), .init(.text("nameSpaces"), .map([.init(.text("n"), .map([.init(.text("e"), .unsigned(1))]))]))])))])]))]), .invalidDeviceRequest)
        addData("useCases pointing outside docRequests", dr: dr([.init(.text("version"), .text("1.1")), .init(.text("docRequests"), docReq),
            .init(.text("deviceRequestInfo"), .embedded(.map([.init(.text("useCases"), .array([.map([.init(.text("mandatory"), .bool(true)), .init(.text("documentSets"), .array([.array([.unsigned(9)])]))])]))])))]), .invalidDeviceRequest)
        addData("declared array length 2^64-1", dr: b64raw([0xa2, 0x67] + Array("version".utf8) + [0x63] + Array("1.0".utf8) + [0x6b] + Array("docRequests".utf8) + [0x9b] + [UInt8](repeating: 0xff, count: 8)), .invalidDeviceRequest)
        addData("declared bstr length 2^63", dr: b64raw([0x5b, 0x80, 0, 0, 0, 0, 0, 0, 0, 1]), .invalidDeviceRequest)
        addData("indefinite-length bomb", dr: b64raw([UInt8](repeating: 0x9f, count: 20_000)), .limitExceeded)
        addData("nesting 100000 deep", dr: b64raw([UInt8](repeating: 0x81, count: 100_000) + [0]), .limitExceeded)
        addData("invalid UTF-8 text", dr: b64raw([0xa1, 0x62, 0xc3, 0x28, 0x00]), .invalidDeviceRequest)
        addData("duplicate map keys", dr: b64raw([0xa2, 0x61, 0x61, 0x00, 0x61, 0x61, 0x01]), .invalidDeviceRequest)
        // alternativeDataElements (1.1): substitutes count against the element limit.
        func v11(_ requestInfo: CBORValue) -> String {
            dr([.init(.text("version"), .text("1.1")), .init(.text("docRequests"), .array([.map([.init(.text("itemsRequest"), .embedded(.map([
                .init(.text("docType"), .text(TestWorld.mDL)),
                .init(.text("nameSpaces"), .map([.init(.text(TestWorld.mDLNS), .map([.init(.text("age_over_25"), .bool(false)), .init(.text("family_name"), .bool(false))]))])),
                .init(.text("requestInfo"), requestInfo)])))])]))])
        }
        func ref(_ e: String, _ ns: String = TestWorld.mDLNS) -> CBORValue { .array([.text(ns), .text(e)]) }
        add("2000 alternative elements for one requested element", data( v11(.map([.init(.text("alternativeDataElements"), .array([.map([
            .init(.text("requestedElement"), ref("age_over_25")),
            .init(.text("alternativeElementSets"), .array((0..<400).map { k in .array((0..<5).map { ref("e\(k)_\($0)") }) }))])]))])), ei), .limitExceeded, detail: "alternative elements")
        addData("alternativeDataElements not an array", dr: v11(.map([.init(.text("alternativeDataElements"), .map([]))])), .invalidDeviceRequest)
        addData("alternative element reference of one item", dr: v11(.map([.init(.text("alternativeDataElements"), .array([.map([
            .init(.text("requestedElement"), ref("age_over_25")), .init(.text("alternativeElementSets"), .array([.array([.array([.text(TestWorld.mDLNS)])])]))])]))])), .invalidDeviceRequest)
        let manyElements: CBORValue = .embedded(.map([.init(.text("docType"), .text("d")), .init(.text("nameSpaces"), .map([.init(.text("n"), .map((0..<100_000).map { .init(.text("e\($0)"), .bool(false)) }))]))]))
        addData("100000 requested elements", dr: dr([.init(.text("version"), .text("1.0")), .init(.text("docRequests"), .array([.map([.init(.text("itemsRequest"), manyElements)])]))]), .limitExceeded)

        // Reader authentication.
        let signedGood = try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin, framing: .dataObject, signing: world.perDocumentSigning)
        add("request signed for another origin", Array(signedGood.rawRequest), .readerAuthenticationFailed, origin: "https://other.example")
        let wrongKey = try SoftwareSigner.generate()
        add("signature by a key that is not the certificate's", Array(try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin,
            framing: .dataObject, signing: .perDocument(signer: wrongKey, chain: [world.readerCert])).rawRequest), .readerAuthenticationFailed)
        add("alg/key mismatch (P-384 key, ES384 vs P-256 cert)", Array(try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin,
            framing: .dataObject, signing: .perDocument(signer: try SoftwareSigner.generate(curve: .p384), chain: [world.readerCert])).rawRequest), .readerAuthenticationFailed)
        func withReaderAuth(_ ra: CBORValue) -> [UInt8] {
            data(dr([.init(.text("version"), .text("1.0")), .init(.text("docRequests"), .array([.map([.init(.text("itemsRequest"), items), .init(.text("readerAuth"), ra)])]))]), ei)
        }
        add("readerAuth missing x5chain", withReaderAuth(.array([.bytes([0xa1, 0x01, 0x26]), .map([]), .null, .bytes([UInt8](repeating: 1, count: 64))])), .readerAuthenticationFailed)
        add("readerAuth garbage x5chain", withReaderAuth(.array([.bytes([0xa1, 0x01, 0x26]), .map([.init(.int(33), .bytes([1, 2, 3]))]), .null, .bytes([UInt8](repeating: 1, count: 64))])), .readerAuthenticationFailed)
        add("readerAuth unsupported alg (EdDSA)", withReaderAuth(.array([.bytes([0xa1, 0x01, 0x27]), .map([.init(.int(33), .bytes(world.readerCert.der))]), .null, .bytes([UInt8](repeating: 1, count: 64))])), .readerAuthenticationFailed)
        add("readerAuth missing alg", withReaderAuth(.array([.bytes([0xa0]), .map([.init(.int(33), .bytes(world.readerCert.der))]), .null, .bytes([UInt8](repeating: 1, count: 64))])), .readerAuthenticationFailed)
        add("readerAuth signature of 63 bytes", withReaderAuth(.array([.bytes([0xa1, 0x01, 0x26]), .map([.init(.int(33), .bytes(world.readerCert.der))]), .null, .bytes([UInt8](repeating: 1, count: 63))])), .readerAuthenticationFailed)
        add("readerAuth not an array", withReaderAuth(.map([])), .invalidDeviceRequest)
        // COSE header rules (RFC 9052 §3.1; 18013-5: alg protected), each in an otherwise valid signature.
        let transcript = SessionTranscript(encryptionInfo: ei, origin: try Origin(Self.origin))
        let rab = MdocAuthentication.readerAuthenticationBytes(sessionTranscript: transcript.bytes, itemsRequestBytes: items.encoded())
        func signedReaderAuth(protected: [CBORValue.MapEntry], unprotected: [CBORValue.MapEntry]) throws -> CBORValue {
            let p = protected.isEmpty ? [UInt8]() : CBORValue.map(protected).encoded()
            let tbs = COSESign1.signatureStructure(protected: p, externalAAD: [UInt8](), payload: rab)
            return .array([.bytes(p), .map(unprotected), .null, .bytes(try world.readerKey.sign(tbs))])
        }
        let x5: CBORValue.MapEntry = .init(.int(33), .bytes(world.readerCert.der))
        let es256: CBORValue.MapEntry = .init(.int(1), .int(-7))
        add("readerAuth alg only in the unprotected header", withReaderAuth(try signedReaderAuth(protected: [], unprotected: [es256, x5])), .readerAuthenticationFailed,
            detail: "alg is not in the protected header")
        add("readerAuth crit names an unknown label", withReaderAuth(try signedReaderAuth(protected: [es256, .init(.int(2), .array([.int(99)])), .init(.int(99), .int(0))],
                                                                                             unprotected: [x5])), .readerAuthenticationFailed, detail: "crit header refused")
        add("readerAuth crit names a text label", withReaderAuth(try signedReaderAuth(protected: [es256, .init(.int(2), .array([.text("exp")])), .init(.text("exp"), .int(0))],
                                                                                         unprotected: [x5])), .readerAuthenticationFailed, detail: "crit header refused")
        add("readerAuth crit in the unprotected header", withReaderAuth(try signedReaderAuth(protected: [es256], unprotected: [.init(.int(2), .array([.int(1)])), x5])),
            .readerAuthenticationFailed, detail: "crit header refused")
        add("readerAuth crit is an empty array", withReaderAuth(try signedReaderAuth(protected: [es256, .init(.int(2), .array([]))], unprotected: [x5])), .readerAuthenticationFailed, detail: "crit header refused")
        add("readerAuth crit names a label absent from the protected header", withReaderAuth(try signedReaderAuth(protected: [es256, .init(.int(2), .array([.int(33)]))],
                                                                                                                  unprotected: [x5])), .readerAuthenticationFailed, detail: "crit header refused")
        add("readerAuth with attached payload", withReaderAuth(.array([.bytes([0xa1, 0x01, 0x26]), .map([.init(.int(33), .bytes(world.readerCert.der))]), .bytes([1]), .bytes([UInt8](repeating: 1, count: 64))])), .readerAuthenticationFailed)

        // Origin.
        for (name, o) in [("empty", ""), ("whitespace", " "), ("tab inside", "https://a\t.example"), ("newline", "https://a.example\n"), ("NUL", "https://a.example\u{0}"),
                          ("path", "https://a.example/x"), ("query", "https://a.example?x"), ("fragment", "https://a.example#x"), ("userinfo", "https://u:p@a.example"),
                          ("IDN in Unicode", "https://bücher.example"), ("ftp scheme", "ftp://a.example"), ("data scheme", "data:text/plain,x"), ("no scheme", "a.example"),
                          ("port too large", "https://a.example:65536"), ("port not a number", "https://a.example:https"), ("bad IPv6", "https://[::g]"),
                          ("double dot host", "https://a..example"), ("app origin not enabled", "android:apk-key-hash:abc")] {
            add("origin: \(name)", data(goodDR, ei), o.isEmpty ? .missingOrigin : .invalidOrigin, origin: o)
        }
        return cases
    }

    @Test("Every catalogued hostile input is refused with its exact code and no response bytes")
    func catalogue() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")], trust: world.trusted))
        let cases = try Self.catalogue(world: world)
        #expect(cases.count >= 100)
        var refused = 0
        for c in cases {
            var produced: Data?
            do {
                produced = try engine.accept(rawRequest: Data(c.json), origin: c.origin)
                Issue.record("\(c.name): accepted")
            } catch {
                #expect(error.code == c.code, "\(c.name): \(error)")
                if let d = c.detail { #expect(error.detail.contains(d), "\(c.name): refused by another rule: \(error)") }
                #expect(!error.detail.contains("verifier.example") && !error.detail.contains("other.example"), "\(c.name): message echoes the origin")
                refused += 1
            }
            #expect(produced == nil, "\(c.name): produced bytes")
        }
        // Truncation of a valid signed request at every byte of its DeviceRequest: never accepted.
        let good = try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name", "portrait"])], origin: TestWorld.origin, framing: .dataObject, signing: world.perDocumentSigning)
        let drBytes = Base64URL.decode(good.deviceRequest)!
        var truncations = 0
        for cut in 0..<drBytes.count {
            let raw = Data(Self.data(Base64URL.encode(drBytes.prefix(cut)), good.encryptionInfo))
            expectRefusal(cut == 0 ? .malformedRequest : .invalidDeviceRequest) { try engine.accept(rawRequest: raw, origin: Self.origin) }
            truncations += 1
        }
        print("hostile catalogue: \(refused) named cases refused with the expected code; \(truncations) truncations of a valid request refused")
    }

    @Test("COSE header controls: a readerAuth with alg protected and crit naming a protected x5chain is accepted (the rows above fail on their fault alone)")
    func criticalHeaderControl() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")], trust: world.trusted))
        let req = try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin, framing: .dataObject)
        let dr = try DeviceRequest(encoded: Base64URL.decode(req.deviceRequest)!)
        let items = dr.docRequests[0].itemsRequestBytes
        let transcript = SessionTranscript(encryptionInfo: req.encryptionInfo, origin: TestWorld.origin)
        let rab = MdocAuthentication.readerAuthenticationBytes(sessionTranscript: transcript.bytes, itemsRequestBytes: items)
        func request(protected: [CBORValue.MapEntry], unprotected: [CBORValue.MapEntry]) throws -> Data {
            let p = CBORValue.map(protected).encoded()
            let sig = try world.readerKey.sign(COSESign1.signatureStructure(protected: p, externalAAD: [UInt8](), payload: rab))
            var w = CBORWriter(capacity: 4096)
            w.writeMapHeader(count: 2)
            w.writeText("version"); w.writeText("1.0")
            w.writeText("docRequests"); w.writeArrayHeader(count: 1); w.writeMapHeader(count: 2)
            w.writeText("itemsRequest"); w.writeRaw(Array(items))
            w.writeText("readerAuth")
            w.write(.array([.bytes(p), .map(unprotected), .null, .bytes(sig)]))
            return Data(Self.data(Base64URL.encode(w.bytes), req.encryptionInfo))
        }
        let x5: CBORValue.MapEntry = .init(.int(33), .bytes(world.readerCert.der))
        let ok = try request(protected: [.init(.int(1), .int(-7)), .init(.int(2), .array([.int(33)])), x5], unprotected: [])
        guard case .trusted = try engine.parse(rawRequest: ok, origin: Self.origin).readerVerdict else { Issue.record("crit [33] with x5chain protected refused"); return }
        let plain = try request(protected: [.init(.int(1), .int(-7))], unprotected: [x5])
        guard case .trusted = try engine.parse(rawRequest: plain, origin: Self.origin).readerVerdict else { Issue.record("plain readerAuth refused"); return }
    }

    /// Hostile `alternativeDataElements` that must still be answered, releasing exactly the requested
    /// element the credential holds and nothing the alternatives aim at.
    static func alternativeRows() -> [(name: String, alternatives: [AnnexCReader.AlternativeElements])] {
        let ns = TestWorld.mDLNS
        func e(_ n: String, _ space: String = ns) -> ElementID { ElementID(space, n) }
        let everything = TestWorld.mDLElements.map { e($0.identifier) }
        return [
            ("every mDL element as one set for a missing element", [.init(e("age_over_25"), [everything])]),
            ("seven elements, one over the default bound", [.init(e("age_over_25"), [Array(everything.prefix(7))])]),
            ("a set in another namespace naming mDL element names", [.init(e("age_over_25"), [[e("portrait", "org.iso.18013.5.1.aamva")], [e("portrait", "")]])]),
            ("a set mixing the namespace with another", [.init(e("age_over_25"), [[e("birth_date"), e("portrait", "x")]])]),
            ("an alternative for an element not requested", [.init(e("age_over_99"), [[e("portrait")]])]),
            ("an alternative for the held element itself", [.init(e("family_name"), [[e("portrait")]])]),
            ("an alternative entry repeated, the last one hostile", [.init(e("age_over_25"), [[e("document_number")]]), .init(e("age_over_25"), [everything])]),
        ]
    }

    @Test("Hostile alternativeDataElements rows: answered, and nothing beyond the requested held element leaves the device (accept and with a narrow approval)")
    func alternativeCatalogue() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")]))
        let held = [TestWorld.mDL: Set(engine.context.credentials[0].elements)]
        var rows = 0
        for row in Self.alternativeRows() {
            let doc = AnnexCReader.DocumentRequest(docType: TestWorld.mDL, elements: [.init(ElementID(TestWorld.mDLNS, "age_over_25"), intentToRetain: false), .init(ElementID(TestWorld.mDLNS, "family_name"), intentToRetain: false)],
                                                   alternatives: row.alternatives)
            let req = try AnnexCReader.makeRequest(documents: [doc], origin: TestWorld.origin, version: .v1_1)
            let all = try AnnexCReader.openResponse(try engine.accept(rawRequest: req.rawRequest, origin: Self.origin), for: req, issuerRoots: [world.iaca],
                                                    at: TestWorld.now, consent: .init(held: held))
            // (A repeated entry is answered by its last one, which is not honoured: the earlier harmless set is not used either.)
            #expect(all.documents[0].elements.map(\.element.identifier) == ["family_name"], "\(row.name)")
            let parsed = try engine.parse(rawRequest: req.rawRequest, origin: Self.origin)
            let narrow = try engine.respond(to: parsed, approving: .elements([ElementID(TestWorld.mDLNS, "age_over_25"), ElementID(TestWorld.mDLNS, "family_name")]))
            let v = try AnnexCReader.openResponse(narrow, for: req, issuerRoots: [world.iaca], at: TestWorld.now, consent: .init(held: held))
            #expect(v.documents[0].elements.map(\.element.identifier) == ["family_name"], "\(row.name): approving the requested elements released a substitute")
            rows += 1
        }
        print("hostile alternatives: \(rows) rows answered with nothing beyond what was shown and approved")
    }

    /// The credential-context rows of the catalogue: damaged, insecure or mismatched snapshots are
    /// refused at load with their exact code; unusable credentials make `accept` refuse with its exact
    /// code and no bytes.
    @Test("Credential-context catalogue: each damaged snapshot or unusable credential refused with its exact code")
    func contextCatalogue() throws {
        let world = try TestWorld()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-ctxcat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let keys = dir.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        let entry = try world.entry(id: "mdl")
        let key = world.deviceKeys["keys/mdl.pem"]!
        func writeKey(_ signer: SoftwareSigner?, mode: Int = 0o600) throws {
            let path = keys.appendingPathComponent("mdl.pem").path
            unlink(path)
            guard let signer else { return }
            #expect(FileManager.default.createFile(atPath: path, contents: Data(try signer.pkcs8PEM().utf8), attributes: [.posixPermissions: mode]))
            chmod(path, mode_t(mode))
        }
        try writeKey(key)
        let good = try CredentialContext(entries: [entry], keyResolver: FileKeyResolver(directory: dir)).encoded()
        let file = dir.appendingPathComponent("context.cbor").path
        func load(_ bytes: [UInt8]?, mode: Int = 0o600) -> Result<CredentialContext?, AnnexCError> {
            unlink(file)
            if let bytes {
                _ = FileManager.default.createFile(atPath: file, contents: Data(bytes), attributes: [.posixPermissions: mode])
                chmod(file, mode_t(mode))
            }
            do { return .success(try CredentialContext.load(from: dir)) } catch { return .failure(error) }
        }
        var rows = 0
        func expectLoad(_ name: String, _ bytes: [UInt8]?, mode: Int = 0o600, _ code: AnnexCError.Code?) {
            switch load(bytes, mode: mode) {
            case .success(let ctx):
                if let code { Issue.record("\(name): loaded, expected \(code)") } else if bytes != nil { #expect(ctx != nil, "\(name)") } else { #expect(ctx == nil, "\(name): missing snapshot must load as nil") }
            case .failure(let e):
                #expect(e.code == code, "\(name): \(e)")
            }
            rows += 1
        }
        // A value inside an issuer-signed item (its digest then fails), located by its bytes.
        let marker = Array("Mustermann".utf8)
        let at = try #require((0...(good.count - marker.count)).first { Array(good[$0..<($0 + marker.count)]) == marker })
        var valueFlipped = good; valueFlipped[at] ^= 0x20
        var formatRenamed = good
        let fmt = Array("mdoc-respond-context".utf8)
        if let f = (0...(good.count - fmt.count)).first(where: { Array(good[$0..<($0 + fmt.count)]) == fmt }) { formatRenamed[f] = UInt8(ascii: "x") }
        expectLoad("context: the good snapshot", good, nil)
        expectLoad("context: missing (no snapshot yet)", nil, nil)
        expectLoad("context: empty file", [], .contextCorrupt)
        expectLoad("context: truncated to one byte", Array(good.prefix(1)), .contextCorrupt)
        expectLoad("context: truncated at half", Array(good.prefix(good.count / 2)), .contextCorrupt)
        expectLoad("context: truncated by one byte", Array(good.dropLast()), .contextCorrupt)
        expectLoad("context: trailing garbage", good + [0x00], .contextCorrupt)
        expectLoad("context: not CBOR", Array("{\"credentials\": []}".utf8), .contextCorrupt)
        expectLoad("context: an element value altered", valueFlipped, .contextCorrupt)
        expectLoad("context: format name altered", formatRenamed, .contextCorrupt)
        expectLoad("context: wrong version", CBORValue.map([.init(.text("format"), .text("mdoc-respond-context")), .init(.text("version"), .unsigned(2))]).encoded(), .contextCorrupt)
        expectLoad("context: world-readable file", good, mode: 0o644, .contextInsecure)
        expectLoad("context: group-readable file", good, mode: 0o640, .contextInsecure)
        expectLoad("context: world-writable file", good, mode: 0o602, .contextInsecure)
        // Directory rules: the context directory must be the user's own and not group/world-writable.
        _ = load(good)
        for (name, mode) in [("group-writable", 0o770), ("world-writable", 0o757)] {
            chmod(dir.path, mode_t(mode))
            switch load(good) {
            case .success: Issue.record("context: \(name) directory loaded")
            case .failure(let e): #expect(e.code == .contextInsecure, "context: \(name) directory: \(e)")
            }
            chmod(dir.path, 0o700)
            rows += 1
        }
        // Device keys are resolved when their credential signs: the snapshot loads, and `accept` refuses
        // with keyUnavailable and no bytes.
        let keyRequest = try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        func expectSigningRefused(_ name: String) {
            do {
                let ctx = try #require(try CredentialContext.load(from: dir))
                let engine = AnnexCEngine(context: ctx, configuration: .init(clock: { TestWorld.now }))
                var produced: Data?
                do { produced = try engine.accept(rawRequest: keyRequest.rawRequest, origin: Self.origin) } catch {
                    #expect(error.code == .keyUnavailable, "\(name): \(error)")
                }
                #expect(produced == nil, "\(name): produced bytes")
            } catch {
                Issue.record("\(name): did not load: \(error)")
            }
            rows += 1
        }
        try writeKey(try SoftwareSigner.generate())
        expectSigningRefused("context: device key does not match the MSO")
        try writeKey(key, mode: 0o644)
        expectSigningRefused("context: world-readable device key file")
        try writeKey(nil)
        expectSigningRefused("context: device key file missing")
        try writeKey(key)
        // Unusable credentials: the engine refuses, with no response bytes.
        let request = try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        let day: TimeInterval = 86400
        let unusable: [(String, CredentialContext.Entry)] = [
            ("credential: expired", try world.entry(id: "old", validFrom: TestWorld.now.addingTimeInterval(-400 * day), validUntil: TestWorld.now.addingTimeInterval(-day))),
            ("credential: not yet valid", try world.entry(id: "future", validFrom: TestWorld.now.addingTimeInterval(day), validUntil: TestWorld.now.addingTimeInterval(400 * day))),
            ("credential: cancelled", try world.entry(id: "gone", cancelled: true)),
            ("credential: other docType only", try world.entry(id: "pid", docType: TestWorld.pid)),
        ]
        for (name, e) in unusable {
            let engine = world.engine(try world.context([e]))
            var produced: Data?
            do { produced = try engine.accept(rawRequest: request.rawRequest, origin: Self.origin) } catch {
                #expect(error.code == .noMatchingCredential, "\(name): \(error)")
            }
            #expect(produced == nil, "\(name): produced bytes")
            rows += 1
        }
        print("context catalogue: \(rows) named rows refused (or loaded) exactly as catalogued")
        #expect(rows == 23)
    }
}

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

extension CatalogueBuilder {
    func deviceRequestRows() {
        // DeviceRequest / CBOR.
        let docReq: CBORValue = .array([RequestCBOR.docRequest(items)])
        func request(_ docRequests: CBORValue, version: CBORValue = .text("1.0"), extra: [CBORValue.MapEntry] = [])
            -> String
        { b64(RequestCBOR.deviceRequest(version: version, docRequests: docRequests, extra: extra)) }
        addData(
            "DeviceRequest not CBOR", dr: b64raw([0xff]), AnnexCRule.deviceRequestInvalid,
            lower: "mdoc.DeviceRequest.cbor@0/cbor.unexpectedBreak@0")
        addData(
            "DeviceRequest trailing bytes", dr: b64raw(Base64URL.decode(goodDR)! + [0]),
            AnnexCRule.deviceRequestInvalid, lower: "mdoc.DeviceRequest.cbor@119/cbor.trailingBytes@119")
        addData(
            "DeviceRequest unknown version 2.0",
            dr: request(docReq, version: .text("2.0")), AnnexCRule.deviceRequestInvalid,
            lower: "mdoc.DeviceRequest.version.unsupportedVersion")
        addData(
            "DeviceRequest version garbage",
            dr: request(docReq, version: .text("one")), AnnexCRule.deviceRequestInvalid,
            lower: "mdoc.DeviceRequest.version.unsupportedVersion")
        addData(
            "DeviceRequest version number",
            dr: request(docReq, version: .unsigned(1)), AnnexCRule.deviceRequestInvalid,
            lower: "mdoc.DeviceRequest.version.wrongType@9")
        addData(
            "DeviceRequest empty docRequests",
            dr: request(.array([])), AnnexCRule.deviceRequestInvalid,
            lower: "mdoc.DeviceRequest.docRequests.invalidValue@25"
        )
        addData(
            "DeviceRequest docRequests not array",
            dr: request(.map([])), AnnexCRule.deviceRequestInvalid, lower: "mdoc.DeviceRequest.docRequests.wrongType@25"
        )
        addData(
            "itemsRequest not tag 24",
            dr: request(.array([RequestCBOR.docRequest(.bytes([0xa0]))])), AnnexCRule.deviceRequestInvalid,
            lower: "mdoc.DocRequest.itemsRequest.wrongType@40")
        addData(
            "tag 24 over text",
            dr: request(.array([RequestCBOR.docRequest(.tagged(24, .text("x")))])), AnnexCRule.deviceRequestInvalid,
            lower: "mdoc.DeviceRequest.cbor@42/cbor.invalidTagContent@42")
        addData(
            "tag 24 over non-CBOR bytes",
            dr: request(.array([RequestCBOR.docRequest(.tagged(24, .bytes([0x9f])))])), AnnexCRule.deviceRequestInvalid,
            lower: "mdoc.DocRequest.itemsRequest.cbor@44/cbor.truncated@44")
        addData(
            "IntentToRetain not bool",
            dr: request(.array([RequestCBOR.docRequest(RequestCBOR.itemsRequest("d", "n", [("e", .unsigned(1))]))])),
            AnnexCRule.deviceRequestInvalid, lower: "mdoc.IntentToRetain.wrongType")
        addData(
            "useCases pointing outside docRequests",
            dr: request(
                docReq, version: .text("1.1"), extra: [.init(.text("deviceRequestInfo"), RequestCBOR.useCases([[9]]))]),
            AnnexCRule.deviceRequestInvalid, lower: "mdoc.UseCase.documentSets.invalidValue")
        addData(
            "declared array length 2^64-1",
            dr: b64raw(
                [0xa2, 0x67] + Array("version".utf8) + [0x63] + Array("1.0".utf8) + [0x6b] + Array("docRequests".utf8)
                    + [0x9b] + [UInt8](repeating: 0xff, count: 8)), AnnexCRule.deviceRequestInvalid,
            lower: "mdoc.DeviceRequest.cbor@25/cbor.lengthExceedsInput@25")
        addData(
            "declared bstr length 2^63", dr: b64raw([0x5b, 0x80, 0, 0, 0, 0, 0, 0, 0, 1]),
            AnnexCRule.deviceRequestInvalid, lower: "mdoc.DeviceRequest.cbor@0/cbor.truncated@0")
        addData(
            "indefinite-length bomb", dr: b64raw([UInt8](repeating: 0x9f, count: 20_000)),
            AnnexCRule.deviceRequestOverLimits, lower: "cbor.depthLimitExceeded")
        addData(
            "nesting 100000 deep", dr: b64raw([UInt8](repeating: 0x81, count: 100_000) + [0]),
            AnnexCRule.deviceRequestOverLimits, lower: "cbor.depthLimitExceeded")
        addData(
            "invalid UTF-8 text", dr: b64raw([0xa1, 0x62, 0xc3, 0x28, 0x00]), AnnexCRule.deviceRequestInvalid,
            lower: "mdoc.DeviceRequest.cbor@1/cbor.invalidUTF8@1")
        addData(
            "duplicate map keys", dr: b64raw([0xa2, 0x61, 0x61, 0x00, 0x61, 0x61, 0x01]),
            AnnexCRule.deviceRequestInvalid, lower: "mdoc.DeviceRequest.cbor@4/cbor.duplicateMapKey@4")
        // alternativeDataElements (1.1): substitutes count against the element limit.
        func v11(_ requestInfo: CBORValue) -> String {
            let items = RequestCBOR.itemsRequest(
                TestWorld.mDL, TestWorld.mDLNS, [("age_over_25", .bool(false)), ("family_name", .bool(false))],
                extra: [.init(.text("requestInfo"), requestInfo)])
            return request(.array([RequestCBOR.docRequest(items)]), version: .text("1.1"))
        }
        func ref(_ e: String, _ ns: String = TestWorld.mDLNS) -> CBORValue { .array([.text(ns), .text(e)]) }
        add(
            "2000 alternative elements for one requested element",
            data(
                v11(
                    RequestCBOR.alternatives(
                        ref("age_over_25"), .array((0..<400).map { k in .array((0..<5).map { ref("e\(k)_\($0)") }) }))),
                ei), AnnexCRule.tooManyElements)
        addData(
            "alternativeDataElements not an array", dr: v11(.map([.init(.text("alternativeDataElements"), .map([]))])),
            AnnexCRule.deviceRequestInvalid, lower: "mdoc.DocRequestInfo.alternativeDataElements.wrongType@169")
        addData(
            "alternative element reference of one item",
            dr: v11(RequestCBOR.alternatives(ref("age_over_25"), .array([.array([.array([.text(TestWorld.mDLNS)])])]))),
            AnnexCRule.deviceRequestInvalid, lower: "mdoc.DocRequestInfo.alternativeDataElements element.wrongType")
        // A reader that requires a zero-knowledge proof (requestInfo.zkRequest, zkRequired: true) never
        // gets a plain presentation; a malformed zkRequest is a malformed DeviceRequest.
        addData(
            "zkRequired true (no proof can be made)", dr: v11(RequestCBOR.zkRequest(required: .bool(true))),
            ZeroKnowledgeRule.noProver, at: "docRequests[0].itemsRequest.requestInfo.zkRequest")
        addData(
            "zkRequired true in a 1.0 request",
            dr: request(
                .array([
                    RequestCBOR.docRequest(
                        RequestCBOR.itemsRequest(
                            TestWorld.mDL, TestWorld.mDLNS, [("age_over_18", .bool(false))],
                            extra: [.init(.text("requestInfo"), RequestCBOR.zkRequest(required: .bool(true)))]))
                ])), ZeroKnowledgeRule.noProver, at: "docRequests[0].itemsRequest.requestInfo.zkRequest")
        addData(
            "zkRequired not a boolean", dr: v11(RequestCBOR.zkRequest(required: .text("yes"))),
            AnnexCRule.deviceRequestInvalid, lower: "mdoc.ZkRequest.zkRequired.wrongType")
        addData(
            "zkRequest without systemSpecs",
            dr: v11(.map([.init(.text("zkRequest"), .map([.init(.text("zkRequired"), .bool(false))]))])),
            AnnexCRule.deviceRequestInvalid, lower: "mdoc.ZkRequest.systemSpecs.missingField")
        let manyElements = RequestCBOR.itemsRequest(
            TestWorld.mDL, TestWorld.mDLNS, (0..<1025).map { ("e\($0)", .bool(false)) })
        addData(
            "1025 requested elements (one over the limit)",
            dr: request(.array([RequestCBOR.docRequest(manyElements)])), AnnexCRule.tooManyElements)
    }

    func readerAuthenticationRows() throws {
        // Reader authentication.
        let signedGood = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin, framing: .dataObject,
            signing: world.perDocumentSigning)
        add(
            "request signed for another origin", Array(signedGood.rawRequest), AnnexCRule.signatureInvalid,
            origin: "https://other.example", at: "docRequests[0].readerAuth")
        let wrongKey = try SoftwareSigner.generate()
        add(
            "signature by a key that is not the certificate's",
            Array(
                try AnnexCReader.makeRequest(
                    documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin,
                    framing: .dataObject, signing: .perDocument(signer: wrongKey, chain: [world.readerCert])
                ).rawRequest), AnnexCRule.signatureInvalid,
            at: "docRequests[0].readerAuth")
        add(
            "alg/key mismatch (P-384 key, ES384 vs P-256 cert)",
            Array(
                try AnnexCReader.makeRequest(
                    documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin,
                    framing: .dataObject,
                    signing: .perDocument(signer: try SoftwareSigner.generate(curve: .p384), chain: [world.readerCert])
                ).rawRequest), AnnexCRule.keyAlgorithmMismatch,
            at: "docRequests[0].readerAuth")
        func withReaderAuth(_ ra: CBORValue) -> [UInt8] {
            data(
                b64(RequestCBOR.deviceRequest(docRequests: .array([RequestCBOR.docRequest(items, readerAuth: ra)]))), ei
            )
        }
        // Every readerAuth below is correctly signed by the reader's key over the right
        // ReaderAuthenticationBytes; each carries exactly one fault.
        let transcript = AnnexCSessionTranscript(encryptionInfo: ei, origin: try Origin(HostileCatalogue.origin))
        let rab = MdocAuthentication.readerAuthenticationBytes(
            sessionTranscript: transcript.bytes, itemsRequestBytes: items.encoded())
        func signedReaderAuth(
            protected: [CBORValue.MapEntry], unprotected: [CBORValue.MapEntry], attached: Bool = false,
            signature: ([UInt8]) -> [UInt8] = { $0 }
        ) throws -> CBORValue {
            let p = protected.isEmpty ? [UInt8]() : CBORValue.map(protected).encoded()
            let tbs = COSESign1.signatureStructure(protected: p, externalAAD: [UInt8](), payload: rab)
            return .array([
                .bytes(p), .map(unprotected), attached ? .bytes(rab) : .null,
                .bytes(signature(try world.readerKey.sign(tbs))),
            ])
        }
        let x5: CBORValue.MapEntry = .init(.int(33), .bytes(world.readerCert.der))
        let es256: CBORValue.MapEntry = .init(.int(1), .int(-7))
        // The control: the same construction without a fault is accepted (criticalHeaderControl checks it).
        add(
            "readerAuth missing x5chain", withReaderAuth(try signedReaderAuth(protected: [es256], unprotected: [])),
            AnnexCRule.x5chainMissing)
        add(
            "readerAuth garbage x5chain",
            withReaderAuth(
                try signedReaderAuth(protected: [es256], unprotected: [.init(.int(33), .bytes([1, 2, 3]))])),
            AnnexCRule.certificateInvalid)
        add(
            "readerAuth x5chain an empty array",
            withReaderAuth(try signedReaderAuth(protected: [es256], unprotected: [.init(.int(33), .array([]))])),
            AnnexCRule.x5chainMalformed)
        add(
            "readerAuth unsupported alg (EdDSA label on an ECDSA signature)",
            withReaderAuth(try signedReaderAuth(protected: [.init(.int(1), .int(-8))], unprotected: [x5])),
            AnnexCRule.algorithmNotAllowed)
        add(
            "readerAuth unknown alg",
            withReaderAuth(try signedReaderAuth(protected: [.init(.int(1), .int(-65000))], unprotected: [x5])),
            AnnexCRule.algorithmUnknown)
        add(
            "readerAuth missing alg",
            withReaderAuth(try signedReaderAuth(protected: [.init(.int(4), .bytes([1]))], unprotected: [x5])),
            AnnexCRule.algorithmUnknown)
        add(
            "readerAuth alg/curve mismatch (ES384 label, P-256 key)",
            withReaderAuth(try signedReaderAuth(protected: [.init(.int(1), .int(-35))], unprotected: [x5])),
            AnnexCRule.keyAlgorithmMismatch)
        add(
            "readerAuth signature of 63 bytes",
            withReaderAuth(
                try signedReaderAuth(protected: [es256], unprotected: [x5], signature: { Array($0.dropLast()) })),
            AnnexCRule.signatureLength)
        add(
            "readerAuth signature with one bit flipped",
            withReaderAuth(
                try signedReaderAuth(
                    protected: [es256], unprotected: [x5],
                    signature: {
                        var s = $0
                        s[40] ^= 1
                        return s
                    })),
            AnnexCRule.signatureInvalid)
        add(
            "readerAuth not an array", withReaderAuth(.map([])), AnnexCRule.deviceRequestInvalid, lower: "mdoc.")
        add(
            "readerAuth with attached payload",
            withReaderAuth(try signedReaderAuth(protected: [es256], unprotected: [x5], attached: true)),
            AnnexCRule.payloadAttached)
        // COSE header rules (RFC 9052 §3.1; 18013-5: alg protected).
        add(
            "readerAuth alg only in the unprotected header",
            withReaderAuth(try signedReaderAuth(protected: [], unprotected: [es256, x5])),
            AnnexCRule.algorithmNotProtected)
        add(
            "readerAuth crit names an unknown label",
            withReaderAuth(
                try signedReaderAuth(
                    protected: [es256, .init(.int(2), .array([.int(99)])), .init(.int(99), .int(0))],
                    unprotected: [x5])), AnnexCRule.criticalHeader)
        add(
            "readerAuth crit names a text label",
            withReaderAuth(
                try signedReaderAuth(
                    protected: [es256, .init(.int(2), .array([.text("exp")])), .init(.text("exp"), .int(0))],
                    unprotected: [x5])), AnnexCRule.criticalHeader)
        add(
            "readerAuth crit in the unprotected header",
            withReaderAuth(
                try signedReaderAuth(protected: [es256], unprotected: [.init(.int(2), .array([.int(1)])), x5])),
            AnnexCRule.criticalHeader)
        add(
            "readerAuth crit is an empty array",
            withReaderAuth(try signedReaderAuth(protected: [es256, .init(.int(2), .array([]))], unprotected: [x5])),
            AnnexCRule.criticalHeader)
        add(
            "readerAuth crit names a label absent from the protected header",
            withReaderAuth(
                try signedReaderAuth(
                    protected: [es256, .init(.int(2), .array([.int(33)]))],
                    unprotected: [x5])), AnnexCRule.criticalHeader)
        // readerAuthAll (1.1): tampered after signing, in the signature and in the bytes it covers.
        let all = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"]), TestWorld.ask(TestWorld.pid, ["age_over_18"])],
            origin: TestWorld.origin,
            framing: .dataObject, signing: world.allSigning, version: .v1_1,
            useCases: [.init(mandatory: true, documentSets: [[0]])])
        let allDR = Base64URL.decode(all.deviceRequest)!
        func tampered(_ body: (inout [UInt8]) -> Void) -> [UInt8] {
            var b = allDR
            body(&b)
            return data(Base64URL.encode(b), all.encryptionInfo)
        }
        let sigAt = allDR.count - 10  // inside readerAuthAll's signature, the request's last bytes
        add(
            "readerAuthAll signature tampered", tampered { $0[sigAt] ^= 0x01 }, AnnexCRule.signatureInvalid,
            at: "readerAuthAll[0]")
        let docTypeBytes = Array(TestWorld.pid.utf8)
        let docTypeAt = (0...(allDR.count - docTypeBytes.count)).first {
            Array(allDR[$0..<($0 + docTypeBytes.count)]) == docTypeBytes
        }!
        add(
            "readerAuthAll over a DocRequest changed after signing",
            tampered { $0[docTypeAt + docTypeBytes.count - 1] ^= 0x03 }, AnnexCRule.signatureInvalid,
            at: "readerAuthAll[0]")
        let useCaseBytes = Array("mandatory".utf8)
        let useCaseAt = (0...(allDR.count - useCaseBytes.count)).first {
            Array(allDR[$0..<($0 + useCaseBytes.count)]) == useCaseBytes
        }!
        add(
            "readerAuthAll over deviceRequestInfo changed after signing (mandatory → false)",
            tampered { $0[useCaseAt + useCaseBytes.count] = 0xf4 },
            AnnexCRule.signatureInvalid, at: "readerAuthAll[0]")
    }

    func originRows() {
        // Origin.
        let originRules: [String: OriginRule] = [
            "empty": .empty, "whitespace": .characters, "tab inside": .characters, "newline": .characters,
            "NUL": .characters, "path": .path, "query": .query, "fragment": .fragment, "userinfo": .userinfo,
            "IDN in Unicode": .characters, "ftp scheme": .scheme, "data scheme": .noScheme, "no scheme": .noScheme,
            "port too large": .port, "port not a number": .port, "bad IPv6": .ipv6Invalid,
            "double dot host": .hostEmptyLabel, "app origin not enabled": .appOriginsDisabled,
        ]
        for (name, o) in [
            ("empty", ""), ("whitespace", " "), ("tab inside", "https://a\t.example"),
            ("newline", "https://a.example\n"), ("NUL", "https://a.example\u{0}"),
            ("path", "https://a.example/x"), ("query", "https://a.example?x"), ("fragment", "https://a.example#x"),
            ("userinfo", "https://u:p@a.example"),
            ("IDN in Unicode", "https://bücher.example"), ("ftp scheme", "ftp://a.example"),
            ("data scheme", "data:text/plain,x"), ("no scheme", "a.example"),
            ("port too large", "https://a.example:65536"), ("port not a number", "https://a.example:https"),
            ("bad IPv6", "https://[::g]"),
            ("double dot host", "https://a..example"), ("app origin not enabled", "android:apk-key-hash:abc"),
        ] {
            add("origin: \(name)", data(goodDR, ei), originRules[name]!, origin: o)
        }
    }
}

import Foundation
import Testing
import TestSupport
@testable import MdocCBOR

@Suite("ISO 18013-5 data model")
struct DataModelTests {
    static let docType = "org.iso.18013.5.1.mDL"
    static let ns = "org.iso.18013.5.1"

    static func itemsRequest(_ elements: [String] = ["family_name"], extra: [CBORValue.MapEntry] = []) -> [UInt8] {
        CBORValue.embedded(
            .map(
                [
                    .init(.text("docType"), .text(docType)),
                    .init(
                        .text("nameSpaces"),
                        .map([.init(.text(ns), .map(elements.map { .init(.text($0), .bool(true)) }))])),
                ] + extra)
        ).encoded()
    }

    /// Builds a DeviceRequest with the given top-level entries (values pre-encoded).
    static func request(version: String, docRequests: [[UInt8]], extra: [(String, [UInt8])] = []) -> [UInt8] {
        var w = CBORWriter()
        w.writeMapHeader(count: 2 + extra.count)
        w.writeText("version")
        w.writeText(version)
        w.writeText("docRequests")
        w.writeArrayHeader(count: docRequests.count)
        for d in docRequests {
            w.writeMapHeader(count: 1)
            w.writeText("itemsRequest")
            w.writeRaw(d)
        }
        for (k, v) in extra {
            w.writeText(k)
            w.writeRaw(v)
        }
        return w.bytes
    }

    /// DeviceRequestInfoBytes with one mandatory use case answered by `documentSets`.
    static func deviceRequestInfo(
        _ documentSets: [[UInt64]], useCase: [CBORValue.MapEntry] = [], extra: [CBORValue.MapEntry] = []
    ) -> [UInt8] {
        let sets = CBORValue.array(documentSets.map { .array($0.map { .unsigned($0) }) })
        let useCase = CBORValue.map(
            [.init(.text("mandatory"), .bool(true)), .init(.text("documentSets"), sets)] + useCase)
        return CBORValue.embedded(.map([.init(.text("useCases"), .array([useCase]))] + extra)).encoded()
    }

    static let deviceRequestInfo = deviceRequestInfo(
        [[0], [1]], useCase: [.init(.text("purposeHints"), .map([.init(.text("org.iso.jtc1.sc17"), .int(2))]))],
        extra: [.init(.text("futureKey"), .text("kept"))])

    @Test("Version 1.1 honours deviceRequestInfo and readerAuthAll; 1.0 ignores them and says so")
    func versions() throws {
        let signer = try SoftwareSigner.generate()
        let items = [Self.itemsRequest(), Self.itemsRequest(["age_over_18"])]
        let transcript = CBORValue.array([
            .null, .null, .array([.text("dcapi"), .bytes([UInt8](repeating: 1, count: 32))]),
        ]).encoded()
        let info = try CBORDocument(decoding: Self.deviceRequestInfo).root.encodedBytes
        let rab = MdocAuthentication.readerAuthenticationAllBytes(
            sessionTranscript: transcript, itemsRequestBytes: items.map { $0[...] }, deviceRequestInfoBytes: info)
        let auth = try COSESign1.sign(payload: rab, detached: true, signer: signer)
        var all = CBORWriter()
        all.writeArrayHeader(count: 1)
        all.writeRaw(auth)
        let extra = [("deviceRequestInfo", Self.deviceRequestInfo), ("readerAuthAll", all.bytes)]

        let r11 = try DeviceRequest(encoded: Self.request(version: "1.1", docRequests: items, extra: extra))
        #expect(r11.isVersion11OrLater && !r11.ignoredNewerFields)
        let dri = try #require(r11.deviceRequestInfo)
        #expect(Array(dri.bytes) == Self.deviceRequestInfo)
        #expect(dri.useCases.count == 1 && dri.useCases[0].mandatory && dri.useCases[0].documentSets == [[0], [1]])
        #expect(dri.useCases[0].purposeHints.first?.1 == 2)
        #expect(dri.item["futureKey"]?.stringValue == "kept")
        #expect(r11.readerAuthAll.count == 1)
        // readerAuthAll verifies over ReaderAuthenticationAll rebuilt from the exact received bytes.
        let rebuilt = MdocAuthentication.readerAuthenticationAllBytes(
            sessionTranscript: transcript, itemsRequestBytes: r11.docRequests.map(\.itemsRequestBytes),
            deviceRequestInfoBytes: dri.bytes)
        try r11.readerAuthAll[0].verify(key: signer.publicKey, detachedPayload: rebuilt)
        // Covering the wrong items (only the first) fails.
        let partial = MdocAuthentication.readerAuthenticationAllBytes(
            sessionTranscript: transcript, itemsRequestBytes: [r11.docRequests[0].itemsRequestBytes],
            deviceRequestInfoBytes: dri.bytes)
        #expect(throws: COSEError.verificationFailed) {
            try r11.readerAuthAll[0].verify(key: signer.publicKey, detachedPayload: partial)
        }
        // With null instead of DeviceRequestInfoBytes the payload differs too.
        let withNull = MdocAuthentication.readerAuthenticationAllBytes(
            sessionTranscript: transcript, itemsRequestBytes: r11.docRequests.map(\.itemsRequestBytes),
            deviceRequestInfoBytes: nil)
        #expect(withNull != rebuilt)

        let r10 = try DeviceRequest(encoded: Self.request(version: "1.0", docRequests: items, extra: extra))
        #expect(!r10.isVersion11OrLater && r10.ignoredNewerFields)
        #expect(r10.deviceRequestInfo == nil && r10.readerAuthAll.isEmpty)
    }

    struct BadRequest: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let code: MdocDataError.Code
        let field: String
        var testDescription: String { name }
    }

    static var badRequests: [BadRequest] {
        let ok = itemsRequest()
        func raw(_ v: CBORValue) -> [UInt8] { v.encoded() }
        let outOfRange = deviceRequestInfo([[5]])
        return [
            .init(name: "not a map", bytes: raw(.array([])), code: .wrongType, field: "DeviceRequest"),
            .init(
                name: "missing version", bytes: raw(.map([.init(.text("docRequests"), .array([]))])),
                code: .missingField, field: "DeviceRequest.version"),
            .init(
                name: "version 2.0", bytes: request(version: "2.0", docRequests: [ok]), code: .unsupportedVersion,
                field: "DeviceRequest.version"),
            .init(
                name: "version garbage", bytes: request(version: "1.0-beta", docRequests: [ok]),
                code: .unsupportedVersion, field: "DeviceRequest.version"),
            .init(
                name: "version as number",
                bytes: raw(.map([.init(.text("version"), .float(1.0)), .init(.text("docRequests"), .array([]))])),
                code: .wrongType, field: "DeviceRequest.version"),
            .init(
                name: "empty docRequests", bytes: request(version: "1.0", docRequests: []), code: .invalidValue,
                field: "DeviceRequest.docRequests"),
            .init(
                name: "itemsRequest not tag 24", bytes: request(version: "1.0", docRequests: [raw(.bytes([0xa0]))]),
                code: .wrongType, field: "DocRequest.itemsRequest"),
            .init(
                name: "itemsRequest embeds malformed CBOR",
                bytes: request(version: "1.0", docRequests: [raw(.tagged(24, .bytes([0xa1, 0x01])))]), code: .cbor,
                field: "DocRequest.itemsRequest"),
            .init(
                name: "docType missing",
                bytes: request(
                    version: "1.0", docRequests: [raw(.embedded(.map([.init(.text("nameSpaces"), .map([]))])))]),
                code: .missingField, field: "ItemsRequest.docType"),
            .init(
                name: "empty nameSpaces",
                bytes: request(
                    version: "1.0",
                    docRequests: [
                        raw(
                            .embedded(
                                .map([.init(.text("docType"), .text("x")), .init(.text("nameSpaces"), .map([]))])))
                    ]), code: .invalidValue, field: "ItemsRequest.nameSpaces"),
            .init(
                name: "intentToRetain not bool",
                bytes: request(
                    version: "1.0",
                    docRequests: [
                        raw(
                            .embedded(
                                .map([
                                    .init(.text("docType"), .text("x")),
                                    .init(
                                        .text("nameSpaces"),
                                        .map([.init(.text("n"), .map([.init(.text("e"), .unsigned(1))]))])),
                                ])))
                    ]), code: .wrongType, field: "IntentToRetain"),
            .init(
                name: "useCases pointing outside docRequests",
                bytes: request(version: "1.1", docRequests: [ok], extra: [("deviceRequestInfo", outOfRange)]),
                code: .invalidValue, field: "UseCase.documentSets"),
            .init(
                name: "readerAuth not COSE_Sign1",
                bytes: {
                    var w = CBORWriter()
                    w.writeMapHeader(count: 2)
                    w.writeText("version")
                    w.writeText("1.0")
                    w.writeText("docRequests")
                    w.writeArrayHeader(count: 1)
                    w.writeMapHeader(count: 2)
                    w.writeText("itemsRequest")
                    w.writeRaw(ok)
                    w.writeText("readerAuth")
                    w.writeArrayHeader(count: 0)
                    return w.bytes
                }(), code: .cose, field: "DocRequest.readerAuth"),
        ]
    }

    @Test("Malformed DeviceRequests fail with the structure, field and rule", arguments: badRequests)
    func badRequest(_ c: BadRequest) {
        do {
            _ = try DeviceRequest(encoded: c.bytes)
            Issue.record("\(c.name): accepted")
        } catch {
            #expect(error.code == c.code, "\(c.name): \(error)")
            #expect(error.field == c.field, "\(c.name): \(error)")
        }
    }

    @Test("Unknown keys are tolerated and kept; requestInfo (DocRequestInfo) is parsed")
    func unknownKeysAndRequestInfo() throws {
        let info: CBORValue = .map([
            .init(
                .text("alternativeDataElements"),
                .array([
                    .map([
                        .init(.text("requestedElement"), .array([.text(Self.ns), .text("age_over_18")])),
                        .init(
                            .text("alternativeElementSets"),
                            .array([.array([.array([.text(Self.ns), .text("birth_date")])])])),
                    ])
                ])),
            .init(.text("issuerIdentifiers"), .array([.bytes([1, 2, 3])])),
            .init(.text("uniqueDocSetRequired"), .bool(true)),
            .init(.text("maximumResponseSize"), .unsigned(65536)),
            .init(.text("somethingNew"), .unsigned(7)),
        ])
        let items = Self.itemsRequest(
            ["age_over_18"], extra: [.init(.text("requestInfo"), info), .init(.text("vendorKey"), .null)])
        let r = try DeviceRequest(
            encoded: Self.request(version: "1.0", docRequests: [items], extra: [("unknownTop", [0xf5])]))
        let ri = try #require(r.docRequests[0].itemsRequest.requestInfo)
        #expect(ri.alternativeDataElements.count == 1)
        #expect(ri.alternativeDataElements[0].requestedElement.identifier == "age_over_18")
        #expect(ri.alternativeDataElements[0].alternativeElementSets[0][0].identifier == "birth_date")
        #expect(ri.issuerIdentifiers.map(Array.init) == [[1, 2, 3]])
        #expect(ri.uniqueDocSetRequired == true && ri.maximumResponseSize == 65536)
        #expect(ri.item["somethingNew"]?.unsignedValue == 7)
        #expect(r.docRequests[0].itemsRequest.item["vendorKey"]?.isNull == true)
        #expect(r.item["unknownTop"]?.boolValue == true)
        // The exact ItemsRequestBytes are kept.
        #expect(Array(r.docRequests[0].itemsRequestBytes) == items)
    }

    @Test("IssuerSigned: digest mismatch and unknown digestID are detected")
    func digestMismatch() throws {
        let signer = try SoftwareSigner.generate()
        let item = CBORValue.embedded(
            .map([
                .init(.text("digestID"), .unsigned(7)), .init(.text("random"), .bytes([1, 2])),
                .init(.text("elementIdentifier"), .text("family_name")), .init(.text("elementValue"), .text("X")),
            ])
        ).encoded()
        func issuerSigned(digest: [UInt8], id: UInt64) throws -> IssuerSigned {
            let mso: CBORValue = .map([
                .init(.text("version"), .text("1.0")), .init(.text("digestAlgorithm"), .text("SHA-256")),
                .init(.text("docType"), .text(Self.docType)),
                .init(
                    .text("valueDigests"), .map([.init(.text(Self.ns), .map([.init(.unsigned(id), .bytes(digest))]))])),
                .init(.text("deviceKeyInfo"), .map([.init(.text("deviceKey"), signer.publicKey.cborValue)])),
                .init(
                    .text("validityInfo"),
                    .map([
                        .init(.text("signed"), .tagged(0, .text("2026-01-01T00:00:00Z"))),
                        .init(.text("validFrom"), .tagged(0, .text("2026-01-01T00:00:00Z"))),
                        .init(.text("validUntil"), .tagged(0, .text("2027-01-01T00:00:00Z"))),
                    ])),
            ])
            let auth = try COSESign1.sign(payload: CBORValue.embedded(mso).encoded(), detached: false, signer: signer)
            var w = CBORWriter()
            w.writeMapHeader(count: 2)
            w.writeText("nameSpaces")
            w.writeMapHeader(count: 1)
            w.writeText(Self.ns)
            w.writeArrayHeader(count: 1)
            w.writeRaw(item)
            w.writeText("issuerAuth")
            w.writeRaw(auth)
            return try IssuerSigned(encoded: w.bytes)
        }
        let good = try issuerSigned(digest: MdocDigest.sha256(item), id: 7)
        try good.checkValueDigests(against: try good.mobileSecurityObject())
        let bad = try issuerSigned(digest: [UInt8](repeating: 0, count: 32), id: 7)
        #expect(throws: MdocDataError(.digestMismatch, "IssuerSignedItemBytes")) {
            try bad.checkValueDigests(against: try bad.mobileSecurityObject())
        }
        let missing = try issuerSigned(digest: MdocDigest.sha256(item), id: 8)
        #expect(throws: MdocDataError(.digestMismatch, "IssuerSignedItem.digestID")) {
            try missing.checkValueDigests(against: try missing.mobileSecurityObject())
        }
        // The MSO's validity and device key are exposed.
        let mso = try good.mobileSecurityObject()
        #expect(mso.deviceKey == signer.publicKey)
        #expect(!mso.validityInfo.contains(MdocDate.parseDateTime("2025-06-01T00:00:00Z")!))
    }

    @Test(
        "DeviceResponse: deviceSignature and deviceMac forms, documentErrors, errors; both auth forms at once is refused"
    )
    func deviceResponseForms() throws {
        func response(deviceAuth: CBORValue) -> [UInt8] {
            CBORValue.map([
                .init(.text("version"), .text("1.0")), .init(.text("status"), .unsigned(0)),
                .init(.text("documentErrors"), .array([.map([.init(.text("org.example.other"), .int(0))])])),
                .init(
                    .text("documents"),
                    .array([
                        .map([
                            .init(.text("docType"), .text(Self.docType)),
                            .init(
                                .text("issuerSigned"),
                                .map([
                                    .init(
                                        .text("issuerAuth"),
                                        .array([
                                            .bytes([0xa1, 0x01, 0x26]), .map([]), .bytes([0xa0]),
                                            .bytes([UInt8](repeating: 0, count: 64)),
                                        ]))
                                ])),
                            .init(
                                .text("deviceSigned"),
                                .map([
                                    .init(.text("nameSpaces"), .tagged(24, .bytes([0xa0]))),
                                    .init(.text("deviceAuth"), deviceAuth),
                                ])),
                            .init(
                                .text("errors"),
                                .map([.init(.text(Self.ns), .map([.init(.text("portrait"), .int(0))]))])),
                        ])
                    ])),
            ]).encoded()
        }
        let sig = CBORValue.array([
            .bytes([0xa1, 0x01, 0x26]), .map([]), .null, .bytes([UInt8](repeating: 1, count: 64)),
        ])
        let mac = CBORValue.array([
            .bytes([0xa1, 0x01, 0x05]), .map([]), .null, .bytes([UInt8](repeating: 1, count: 32)),
        ])
        let r1 = try DeviceResponse(encoded: response(deviceAuth: .map([.init(.text("deviceSignature"), sig)])))
        guard case .signature = r1.documents[0].deviceSigned.deviceAuth else {
            Issue.record("expected signature")
            return
        }
        #expect(r1.documentErrors.first?.first?.docType == "org.example.other")
        #expect(r1.documents[0].errors.first?.element == "portrait")
        let r2 = try DeviceResponse(encoded: response(deviceAuth: .map([.init(.text("deviceMac"), mac)])))
        guard case .mac = r2.documents[0].deviceSigned.deviceAuth else {
            Issue.record("expected mac")
            return
        }
        #expect(throws: MdocDataError(.invalidValue, "DeviceAuth")) {
            try DeviceResponse(
                encoded: response(
                    deviceAuth: .map([.init(.text("deviceSignature"), sig), .init(.text("deviceMac"), mac)])))
        }
    }
}

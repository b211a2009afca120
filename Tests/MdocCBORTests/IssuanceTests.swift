import Foundation
import Testing
import TestSupport
@testable import MdocCBOR

@Suite("Certificates and issuance")
struct IssuanceTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    @Test("IACA → DS and reader root → reader certificates validate strictly, with the right EKUs and key identifiers")
    func profiles() throws {
        let iacaKey = try SoftwareSigner.generate()
        let dsKey = try SoftwareSigner.generate()
        let iacaName = DistinguishedName(commonName: "Test IACA", country: "UT")
        let from = Self.now.addingTimeInterval(-86400)
        let to = Self.now.addingTimeInterval(365 * 86400)
        let iaca = try Certificate.issue(
            subject: iacaName, publicKey: iacaKey.publicKey, issuer: nil, issuerKey: iacaKey, serial: 1,
            notBefore: from, notAfter: to, profile: .iaca)
        let ds = try Certificate.issue(
            subject: .init(commonName: "Test DS", country: "UT"), publicKey: dsKey.publicKey, issuer: iaca,
            issuerKey: iacaKey,
            serial: 2, notBefore: from, notAfter: to, profile: .documentSigner)
        #expect(iaca.isCA && !ds.isCA)
        #expect(ds.hasExtendedKeyUsage(MdocKeyUsage.documentSigner))
        #expect(!ds.hasExtendedKeyUsage(MdocKeyUsage.readerAuthentication))
        #expect(ds.authorityKeyIdentifier == iaca.subjectKeyIdentifier)
        #expect(ds.issuer == iaca.subject)
        #expect(try ds.publicKey() == dsKey.publicKey)
        try Certificate.validatePath(leaf: ds, anchors: [iaca], at: Self.now)
        #expect(throws: COSEError.self) {
            try Certificate.validatePath(leaf: ds, anchors: [iaca], at: to.addingTimeInterval(86400))
        }
        #expect(throws: COSEError.self) {
            try Certificate.validatePath(leaf: ds, anchors: [iaca], at: from.addingTimeInterval(-86400))
        }
        // A DS signed by another key does not chain.
        let rogue = try SoftwareSigner.generate()
        let forged = try Certificate.issue(
            subject: .init(commonName: "Test DS"), publicKey: dsKey.publicKey, issuer: iaca, issuerKey: rogue,
            serial: 3, notBefore: from, notAfter: to, profile: .documentSigner)
        #expect(throws: COSEError.self) { try Certificate.validatePath(leaf: forged, anchors: [iaca], at: Self.now) }
    }

    @Test("MdocIssuer output parses, verifies, and its digests match")
    func issue() throws {
        let dsKey = try SoftwareSigner.generate()
        let device = try SoftwareSigner.generate()
        let ds = try Certificate.issue(
            subject: .init(commonName: "DS"), publicKey: dsKey.publicKey, issuer: nil, issuerKey: dsKey, serial: 1,
            notBefore: Self.now.addingTimeInterval(-10), notAfter: Self.now.addingTimeInterval(1000),
            profile: .documentSigner)
        let issuer = MdocIssuer(signer: dsKey, certificateChain: [ds])
        let bytes = try issuer.issue(
            docType: "org.iso.18013.5.1.mDL",
            nameSpaces: [
                ("org.iso.18013.5.1", [.init("family_name", .text("Doe")), .init("age_over_18", .bool(true))])
            ],
            deviceKey: device.publicKey, signed: Self.now, validFrom: Self.now,
            validUntil: Self.now.addingTimeInterval(1000))
        let s = try IssuerSigned(encoded: bytes)
        #expect(try s.issuerAuth.headers.x5chain() == [ds.der])
        try s.issuerAuth.verify(key: dsKey.publicKey)
        let mso = try s.mobileSecurityObject()
        try s.checkValueDigests(against: mso)
        #expect(mso.deviceKey == device.publicKey)
        #expect(s.nameSpaces[0].items.map(\.elementIdentifier) == ["family_name", "age_over_18"])
        // Deterministic map encoding: the IssuerSigned itself decodes under the strict preferred-encoding check.
        _ = try CBORDocument(decoding: bytes, options: .init(requirePreferredEncoding: true))
        // Each namespace's items are read from one tape: every field as the item's map decoded alone gives it.
        let root = try CBORDocument(decoding: bytes).root
        let tagged = Array(try #require(root["nameSpaces"]?["org.iso.18013.5.1"]).children)
        #expect(tagged.count == 2)
        for (item, t) in zip(s.nameSpaces[0].items, tagged) {
            let alone = try CBORDocument(decoding: bytes, range: try #require(t.embeddedRange)).root
            #expect(item.bytes == t.encodedBytes && item.bytes.startIndex == t.byteRange.lowerBound)
            #expect(item.digestID == alone["digestID"]?.unsignedValue)
            #expect(item.random == alone["random"]?.byteStringSlice)
            #expect(item.elementIdentifier == alone["elementIdentifier"]?.stringValue)
            let value = try #require(alone["elementValue"])
            #expect(item.elementValue.byteRange == value.byteRange)
            #expect(CBORValue(item.elementValue) == CBORValue(value))
        }
    }

    @Test("An IssuerSigned namespace's items: a bad item's tag, CBOR or field refuses it with the rule it broke")
    func badItems() throws {
        let good = CBORValue.map([
            .init(.text("digestID"), .unsigned(1)), .init(.text("random"), .bytes([1, 2, 3])),
            .init(.text("elementIdentifier"), .text("family_name")), .init(.text("elementValue"), .text("Doe")),
        ])
        func issuerSigned(_ items: [[UInt8]]) throws -> IssuerSigned {
            var w = CBORWriter()
            w.writeMapHeader(count: 1)
            w.writeText("nameSpaces")
            w.writeMapHeader(count: 1)
            w.writeText("org.iso.18013.5.1")
            w.writeArrayHeader(count: items.count)
            for i in items { w.writeRaw(i) }
            return try IssuerSigned(encoded: w.bytes)
        }
        let ok = CBORValue.embedded(good).encoded()
        // Every item well formed: the namespace is read (issuerAuth is then what is missing).
        #expect(throws: MdocDataError(.missingField, "IssuerSigned.issuerAuth")) { try issuerSigned([ok, ok]) }
        // Not a tag 24 byte string (a tag 24 around anything else is the outer reader's refusal).
        let text24 = #expect(throws: MdocDataError.self) {
            try issuerSigned([ok, CBORValue.tagged(24, .text("x")).encoded()])
        }
        #expect(text24?.field == "IssuerSigned" && text24?.cbor?.code == .invalidTagContent)
        #expect(throws: MdocDataError(.wrongType, "IssuerSignedItemBytes")) { try issuerSigned([ok, good.encoded()]) }
        // Its content not one CBOR item: truncated, or with a byte after the item.
        let cut = CBORValue.tagged(24, .bytes(Array(good.encoded().dropLast()))).encoded()
        let extra = CBORValue.tagged(24, .bytes(good.encoded() + [0x00])).encoded()
        for (bad, code) in [(cut, CBORError.Code.truncated), (extra, .trailingBytes)] {
            let e = #expect(throws: MdocDataError.self) { try issuerSigned([ok, bad]) }
            #expect(
                e?.code == .cbor && e?.field == "IssuerSignedItemBytes" && e?.cbor?.code == code,
                "\(String(describing: e))")
        }
        // A field missing or mistyped in the second item.
        let noValue = CBORValue.embedded(
            .map([
                .init(.text("digestID"), .unsigned(1)), .init(.text("random"), .bytes([1])),
                .init(.text("elementIdentifier"), .text("x")),
            ])
        ).encoded()
        #expect(throws: MdocDataError(.missingField, "IssuerSignedItem.elementValue")) {
            try issuerSigned([ok, noValue])
        }
        let textID = CBORValue.embedded(
            .map([
                .init(.text("digestID"), .text("1")), .init(.text("random"), .bytes([1])),
                .init(.text("elementIdentifier"), .text("x")), .init(.text("elementValue"), .null),
            ])
        ).encoded()
        #expect(throws: MdocDataError(.wrongType, "IssuerSignedItem.digestID")) { try issuerSigned([ok, textID]) }
    }
}

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
    }
}

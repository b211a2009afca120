#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Creates IssuerSigned structures with a signed MobileSecurityObject: the issuer side, for tests,
/// conformance tooling and the project's generated vectors. A wallet never issues; it stores what an
/// issuer produced and copies those bytes verbatim.
public struct MdocIssuer: Sendable {
    /// The document signer key that signs the MSO (test issuers only: a software key).
    public let signer: SoftwareSigner
    /// The certificates placed in issuerAuth's x5chain (document signer first).
    public let certificateChain: [Certificate]

    /// Creates an issuer.
    public init(signer: SoftwareSigner, certificateChain: [Certificate]) {
        self.signer = signer
        self.certificateChain = certificateChain
    }

    /// One element to issue.
    public struct Element: Sendable {
        /// DataElementIdentifier, e.g. `family_name`.
        public var identifier: String
        /// DataElementValue, encoded deterministically into the IssuerSignedItem.
        public var value: CBORValue
        /// Creates an element.
        public init(_ identifier: String, _ value: CBORValue) {
            self.identifier = identifier
            self.value = value
        }
    }

    /// Issues a credential.
    /// - Parameters:
    ///   - docType: the document type.
    ///   - nameSpaces: elements per namespace, in order.
    ///   - deviceKey: the holder's device public key (goes into deviceKeyInfo).
    ///   - signed: the MSO signing time.
    ///   - validFrom: the start of the MSO's validity.
    ///   - validUntil: the end of the MSO's validity.
    ///   - random: source of the per-item salts (16 bytes each); random by default, seedable for
    ///     reproducible vectors.
    /// - Returns: the encoded IssuerSigned (`{"nameSpaces", "issuerAuth"}`).
    public func issue(
        docType: String, nameSpaces: [(String, [Element])], deviceKey: COSEKey, signed: Date, validFrom: Date,
        validUntil: Date,
        random: (Int) -> [UInt8] = { n in (0..<n).map { _ in UInt8.random(in: 0...255) } }
    ) throws(COSEError) -> [UInt8] {
        var digestID: UInt64 = 0
        var itemsByNS = [(String, [[UInt8]])]()
        var digests = [CBORValue.MapEntry]()
        for (ns, elements) in nameSpaces {
            var items = [[UInt8]]()
            var nsDigests = [CBORValue.MapEntry]()
            for e in elements {
                let item = CBORValue.embedded(
                    .map([
                        .init(.text("digestID"), .unsigned(digestID)),
                        .init(.text("random"), .bytes(random(16))),
                        .init(.text("elementIdentifier"), .text(e.identifier)),
                        .init(.text("elementValue"), e.value),
                    ])
                ).encoded()
                items.append(item)
                nsDigests.append(.init(.unsigned(digestID), .bytes(MdocDigest.sha256(item))))
                digestID += 1
            }
            itemsByNS.append((ns, items))
            digests.append(.init(.text(ns), .map(nsDigests)))
        }
        let mso: CBORValue = .map([
            .init(.text("version"), .text("1.0")),
            .init(.text("digestAlgorithm"), .text("SHA-256")),
            .init(.text("docType"), .text(docType)),
            .init(.text("valueDigests"), .map(digests)),
            .init(.text("deviceKeyInfo"), .map([.init(.text("deviceKey"), deviceKey.cborValue)])),
            .init(
                .text("validityInfo"),
                .map([
                    .init(.text("signed"), .tagged(0, .text(MdocDate.formatDateTime(signed)))),
                    .init(.text("validFrom"), .tagged(0, .text(MdocDate.formatDateTime(validFrom)))),
                    .init(.text("validUntil"), .tagged(0, .text(MdocDate.formatDateTime(validUntil)))),
                ])),
        ])
        let x5: CBORValue =
            certificateChain.count == 1
            ? .bytes(certificateChain[0].der) : .array(certificateChain.map { .bytes($0.der) })
        let issuerAuth = try COSESign1.sign(
            payload: CBORValue.embedded(mso).encoded(), detached: false, signer: signer,
            unprotected: certificateChain.isEmpty ? [] : [.init(.int(COSEHeaderLabel.x5chain), x5)])
        var w = CBORWriter(capacity: 1024 + itemsByNS.reduce(0) { $0 + $1.1.reduce(0) { $0 + $1.count } })
        w.writeMapHeader(count: 2)
        w.writeText("issuerAuth")
        w.writeRaw(issuerAuth)
        w.writeText("nameSpaces")
        w.writeMapHeader(count: itemsByNS.count)
        for (ns, items) in itemsByNS {
            w.writeText(ns)
            w.writeArrayHeader(count: items.count)
            for i in items { w.writeRaw(i) }
        }
        return w.bytes
    }
}

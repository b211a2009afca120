#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR
import Synchronization

/// The snapshot's CBOR encoding: what `context.cbor` holds.
extension CredentialContext {
    // MARK: Encoding

    /// The snapshot encoding (deterministic CBOR):
    /// `{"format", "version", "credentials": [{"id", "docTypes", "issuerSigned", "deviceKey", "cancelled", "validFrom", "validUntil",
    ///   ? "verified": bstr .size 32, ? "keyVerified": bstr .size 32}],
    ///   "nextCredentialNumber": uint,
    ///   "readerTrust": {"anchors": [bstr], "authorities": null / [bstr], "requireReaderAuth": bool, "requireTrustedReader": bool,
    ///   ? "signerProfile": "requestSigner", ? "anchorPurposes": [("mdocReader" / "relyingParty" / null)]}}`
    /// (`requireTrustedReader` absent in older snapshots: false; `signerProfile` written only when it is
    /// not the default `mdocReader`; `verified`, the SHA-256 of `issuerSigned` as it passed the full
    /// check, absent in older snapshots; `keyVerified`, the SHA-256 of the device key file as it
    /// passed the key checks and matched the MSO's `deviceKey`, written when the writer resolved the
    /// key through a key file).
    public func encoded() -> [UInt8] {
        let creds: [CBORValue] = credentials.map { c in
            .map(
                [
                    .init(.text("id"), .text(c.id)),
                    .init(.text("docTypes"), .array(c.docTypes.map { .text($0) })),
                    .init(.text("issuerSigned"), .bytes(c.issuerSignedBytes)),
                    .init(.text("deviceKey"), .text(c.deviceKeyReference)),
                    .init(.text("cancelled"), .bool(c.isCancelled)),
                    .init(.text("validFrom"), .tagged(0, .text(MdocDate.formatDateTime(c.validFrom)))),
                    .init(.text("validUntil"), .tagged(0, .text(MdocDate.formatDateTime(c.validUntil)))),
                    .init(.text("verified"), .bytes(c.verifiedDigest)),
                ] + (c.keyRecord.map { [.init(.text("keyVerified"), .bytes($0))] } ?? []))
        }
        let authorities: CBORValue
        switch readerTrust.authorities {
        case .any: authorities = .null
        case .only(let list): authorities = .array(list.map { .bytes($0) })
        }
        return CBORValue.map([
            .init(.text("format"), .text(Self.formatName)),
            .init(.text("version"), .unsigned(Self.formatVersion)),
            .init(.text("credentials"), .array(creds)),
            .init(.text("nextCredentialNumber"), .unsigned(nextCredentialNumber)),
            .init(
                .text("readerTrust"),
                .map(
                    [
                        .init(.text("anchors"), .array(readerTrust.anchors.der.map { .bytes($0) })),
                        .init(.text("authorities"), authorities),
                        .init(.text("requireReaderAuth"), .bool(readerTrust.requireReaderAuthentication)),
                        .init(.text("requireTrustedReader"), .bool(readerTrust.requireTrustedReader)),
                    ]
                        + (readerTrust.signerProfile == .mdocReader
                            ? [] : [.init(.text("signerProfile"), .text(readerTrust.signerProfile.rawValue))])
                        + (readerTrust.anchors.purposes.allSatisfy { $0 == nil }
                            ? []
                            : [
                                .init(
                                    .text("anchorPurposes"),
                                    .array(readerTrust.anchors.purposes.map { $0.map { .text($0.rawValue) } ?? .null }))
                            ]))),
        ]).encoded()
    }

    /// Decodes a snapshot. A credential the snapshot records as checked (`verified` matching its
    /// validity and docTypes shape) is parsed and indexed only when a request can first select it, and
    /// checked again in full then only if its bytes no longer match the record; any other credential is
    /// checked in full now (see `init(entries:readerTrust:keyResolver:validatingKeys:)`). Device keys are
    /// resolved when first used unless `validatingKeys`; a key file whose bytes match the credential's
    /// `keyVerified` record is not checked against its scalar again (d·G), everything else about it is.
    public init(encoded bytes: [UInt8], keyResolver: any DeviceKeyResolver, validatingKeys: Bool = false)
        throws(PresentmentError)
    {
        let root: CBORItem
        do {
            root = try CBORDocument(decoding: bytes, options: .init(maxDepth: 16, maxInputSize: Self.maxFileSize)).root
        } catch {
            throw PresentmentError(ContextRule.snapshotNotCBOR, underlying: error)
        }
        guard root.type == .map, root[field: "format"]?.isText(Self.formatName) == true else {
            throw PresentmentError(ContextRule.notASnapshot)
        }
        guard let v = root[field: "version"]?.unsignedValue else {
            throw PresentmentError(ContextRule.versionMissing)
        }
        guard v == Self.formatVersion else {
            throw PresentmentError(ContextRule.versionUnsupported)
        }
        guard let list = root[field: "credentials"], list.type == .array else {
            throw PresentmentError(ContextRule.credentialsMissing)
        }
        var creds = [StoredCredential]()
        creds.reserveCapacity(list.count)
        for c in list.children {
            // Asked for in the order `encoded()` writes them (one compare each; any order is read).
            var field = CBORItem.Fields(c)
            let id = field("id")?.stringValue
            let types = field("docTypes")
            let record = field("verified")?.byteStringValue
            let cancelled = field("cancelled")?.boolValue
            let key = field("deviceKey")?.stringValue
            let validFrom = field("validFrom")?.dateValue
            let validUntil = field("validUntil")?.dateValue
            let keyRecord = field("keyVerified")?.byteStringValue
            let issuerSigned = field("issuerSigned")
            guard c.type == .map, let id, let issuerSigned, issuerSigned.type == .byteString, let key, let cancelled,
                let types, types.type == .array
            else {
                throw PresentmentError(ContextRule.entryShape)
            }
            var docTypes = [String]()
            for t in types.children {
                guard let s = t.stringValue else {
                    throw PresentmentError(ContextRule.docTypeNotText)
                }
                docTypes.append(s)
            }
            guard !docTypes.isEmpty else { throw PresentmentError(ContextRule.noDocTypes) }
            // The IssuerSigned where it lies in the snapshot's buffer (a chunked one joined once).
            let (isBuffer, isRange): ([UInt8], Range<Int>)
            if let joined = issuerSigned.isIndefiniteLength ? issuerSigned.byteStringValue : nil {
                (isBuffer, isRange) = (joined, 0..<joined.count)
            } else {
                (isBuffer, isRange) = (issuerSigned.buffer, issuerSigned.contentRange)
            }
            if let record, record.count == 32, let validFrom, let validUntil {
                creds.append(
                    try StoredCredential(
                        recorded: id, docTypes: docTypes, issuerSignedBytes: isBuffer, range: isRange,
                        deviceKeyReference: key,
                        isCancelled: cancelled, validFrom: validFrom, validUntil: validUntil, verifiedDigest: record,
                        keyRecord: keyRecord.flatMap { $0.count == 32 ? $0 : nil },
                        resolver: keyResolver))
                if validatingKeys { _ = try creds[creds.count - 1].signer() }
            } else {
                let checked = try StoredCredential(
                    id: id, docTypes: docTypes, issuerSignedBytes: Array(isBuffer[isRange]), deviceKeyReference: key,
                    isCancelled: cancelled, resolver: keyResolver, validatingKey: validatingKeys)
                // The stored validity must agree with the MSO (it is what the host app registered).
                guard validUntil == checked.validUntil, validFrom == checked.validFrom else {
                    throw PresentmentError(ContextRule.validityMismatch)
                }
                creds.append(checked)
            }
        }
        guard let rt = root[field: "readerTrust"], rt.type == .map else {
            throw PresentmentError(ContextRule.readerTrustMissing)
        }
        // The anchors' DER, parsed when reader trust is first needed (see `ReaderTrustPolicy.trustAnchors`).
        var anchors = [[UInt8]]()
        if let a = rt[field: "anchors"] {
            guard a.type == .array else {
                throw PresentmentError(ContextRule.anchorsNotArray)
            }
            for d in a.children {
                guard let der = d.byteStringValue else {
                    throw PresentmentError(ContextRule.anchorNotCertificate)
                }
                anchors.append(der)
            }
        }
        var authorities = AuthorityPolicy.any
        if let au = rt[field: "authorities"], !au.isNull {
            guard au.type == .array else {
                throw PresentmentError(ContextRule.authoritiesNotArray)
            }
            var list = [[UInt8]]()
            for k in au.children {
                guard let b = k.byteStringValue else {
                    throw PresentmentError(ContextRule.authorityNotBytes)
                }
                list.append(b)
            }
            authorities = .only(list)
        }
        let require = rt[field: "requireReaderAuth"]?.boolValue ?? false
        let requireTrusted = rt[field: "requireTrustedReader"]?.boolValue ?? false
        var profile = SignerProfile.mdocReader
        if let p = rt[field: "signerProfile"] {
            guard let name = p.stringValue, let known = SignerProfile(rawValue: name) else {
                throw PresentmentError(ContextRule.signerProfileUnknown)
            }
            profile = known
        }
        // Each anchor's purpose (absent in snapshots written before anchors had one: every anchor then
        // follows the signer profile).
        var purposes: [AnchorPurpose?]?
        if let list = rt[field: "anchorPurposes"] {
            guard list.type == .array, list.count == anchors.count else {
                throw PresentmentError(ContextRule.anchorPurposesInvalid)
            }
            var out = [AnchorPurpose?]()
            for p in list.children {
                if p.isNull {
                    out.append(nil)
                } else if let name = p.stringValue, let known = AnchorPurpose(rawValue: name) {
                    out.append(known)
                } else {
                    throw PresentmentError(ContextRule.anchorPurposesInvalid)
                }
            }
            purposes = out
        }
        var next: UInt64?
        if let n = root[field: "nextCredentialNumber"] {
            guard let v = n.unsignedValue else {
                throw PresentmentError(ContextRule.nextCredentialNumber)
            }
            next = v
        }
        try self.init(
            checking: creds,
            readerTrust: ReaderTrustPolicy(
                anchors: TrustAnchors(der: anchors, purposes: purposes), authorities: authorities,
                requireReaderAuthentication: require,
                requireTrustedReader: requireTrusted, signerProfile: profile),
            nextCredentialNumber: next)
    }
}

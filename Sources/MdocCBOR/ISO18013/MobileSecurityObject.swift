internal import CryptoCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// MobileSecurityObject (ISO/IEC 18013-5 §9.1.2.4), decoded from issuerAuth's payload
/// (`#6.24(bstr .cbor MSO)`).
public struct MobileSecurityObject: Sendable {
    /// `validityInfo`.
    public struct ValidityInfo: Sendable {
        /// When the MSO was signed.
        public let signed: Date
        /// validFrom: the credential must not be presented before it.
        public let validFrom: Date
        /// validUntil: the credential must not be presented after it.
        public let validUntil: Date
        /// Expected update, if given.
        public let expectedUpdate: Date?

        /// True when `date` is within [validFrom, validUntil].
        public func contains(_ date: Date) -> Bool { date >= validFrom && date <= validUntil }
    }

    /// `keyAuthorizations`: what the device key may sign in DeviceSigned.
    public struct KeyAuthorizations: Sendable {
        /// Namespaces the device key may sign in full (keyAuthorizations.nameSpaces).
        public let nameSpaces: [String]
        /// Individual elements by namespace.
        public let dataElements: [String: [String]]
    }

    /// The MSO `version` (`1.0`; 18013-5 §9.1.2.4).
    public let version: String
    /// `digestAlgorithm` as written ("SHA-256", "SHA-384", "SHA-512").
    public let digestAlgorithm: String
    /// The device key the holder proves possession of.
    public let deviceKey: COSEKey
    /// `keyAuthorizations`, if present.
    public let keyAuthorizations: KeyAuthorizations?
    /// `keyInfo`, if present.
    public let keyInfo: CBORItem?
    /// The docType the issuer signed; a Document's docType must equal it.
    public let docType: String
    /// signed / validFrom / validUntil (and expectedUpdate) as tdate.
    public let validityInfo: ValidityInfo
    /// The decoded MSO map (unknown keys such as `status` are available here).
    public let item: CBORItem
    /// MobileSecurityObjectBytes exactly as signed (the whole tag-24 item).
    public let bytes: ArraySlice<UInt8>
    private let valueDigestsItem: CBORItem

    /// Decodes the MSO from the payload of `issuerAuth`.
    public init(issuerAuth: COSESign1, options: CBORDecodingOptions = .default) throws(MdocDataError) {
        guard let payload = issuerAuth.payload else { throw MdocDataError(.missingField, "IssuerAuth.payload") }
        let top: CBORItem
        do {
            top = try CBORDocument(
                decoding: issuerAuth.item.buffer, range: payload.startIndex..<payload.endIndex, options: options
            ).root
        } catch {
            throw MdocDataError(.cbor, "MobileSecurityObjectBytes", cbor: error)
        }
        let (b, item) = try top.embedded("MobileSecurityObjectBytes", options: options)
        _ = try item.requireMap("MobileSecurityObject")
        self.bytes = b
        self.item = item
        version = try item.required("version", "MobileSecurityObject").text("MobileSecurityObject.version")
        digestAlgorithm = try item.required("digestAlgorithm", "MobileSecurityObject").text(
            "MobileSecurityObject.digestAlgorithm")
        docType = try item.required("docType", "MobileSecurityObject").text("MobileSecurityObject.docType")
        valueDigestsItem = try item.required("valueDigests", "MobileSecurityObject").requireMap(
            "MobileSecurityObject.valueDigests")
        for (k, v) in valueDigestsItem.mapEntries {
            _ = try k.text("ValueDigests key")
            _ = try v.requireMap("DigestIDs")
            for (id, d) in v.mapEntries {
                _ = try id.uint("DigestID")
                _ = try d.bytes("Digest")
            }
        }
        let dki = try item.required("deviceKeyInfo", "MobileSecurityObject").requireMap("DeviceKeyInfo")
        let dk = try dki.required("deviceKey", "DeviceKeyInfo")
        deviceKey = try cose("DeviceKeyInfo.deviceKey") { () throws(COSEError) in try COSEKey(dk) }
        keyInfo = dki[field: "keyInfo"]
        if let ka = dki[field: "keyAuthorizations"] {
            _ = try ka.requireMap("KeyAuthorizations")
            var spaces = [String]()
            if let n = ka[field: "nameSpaces"] {
                for s in try n.array("KeyAuthorizations.nameSpaces", nonEmpty: true) {
                    spaces.append(try s.text("KeyAuthorizations.nameSpaces[]"))
                }
            }
            var elems = [String: [String]]()
            if let d = ka[field: "dataElements"] {
                _ = try d.requireMap("KeyAuthorizations.dataElements")
                for (k, v) in d.mapEntries {
                    var list = [String]()
                    for e in try v.array("KeyAuthorizations.dataElements value", nonEmpty: true) {
                        list.append(try e.text("DataElementIdentifier"))
                    }
                    elems[try k.text("KeyAuthorizations.dataElements key")] = list
                }
            }
            keyAuthorizations = KeyAuthorizations(nameSpaces: spaces, dataElements: elems)
        } else {
            keyAuthorizations = nil
        }
        let vi = try item.required("validityInfo", "MobileSecurityObject").requireMap("ValidityInfo")
        func date(_ key: StaticString) throws(MdocDataError) -> Date {
            let d = try vi.required(key, "ValidityInfo")
            guard d.tagNumber == 0, let v = d.dateValue else {
                throw MdocDataError(.invalidDate, "ValidityInfo.\(key)")
            }
            return v
        }
        let expected: Date?
        if let e = vi[field: "expectedUpdate"] {
            guard e.tagNumber == 0, let v = e.dateValue else {
                throw MdocDataError(.invalidDate, "ValidityInfo.expectedUpdate")
            }
            expected = v
        } else {
            expected = nil
        }
        validityInfo = ValidityInfo(
            signed: try date("signed"), validFrom: try date("validFrom"), validUntil: try date("validUntil"),
            expectedUpdate: expected)
    }

    /// The digest for `digestID` in `nameSpace`, if listed.
    public func valueDigest(nameSpace: String, digestID: UInt64) -> ArraySlice<UInt8>? {
        guard let ns = valueDigestsItem[nameSpace] else { return nil }
        for (k, v) in ns.mapEntries where k.unsignedValue == digestID { return v.byteStringSlice }
        return nil
    }

    /// Number of digests per namespace.
    public var valueDigestCounts: [String: Int] {
        var out = [String: Int]()
        for (k, v) in valueDigestsItem.mapEntries { out[k.stringValue ?? ""] = v.count }
        return out
    }

    var digest: DigestAlgorithm? {
        switch digestAlgorithm {
        case "SHA-256": .sha256
        case "SHA-384": .sha384
        case "SHA-512": .sha512
        default: nil
        }
    }
}

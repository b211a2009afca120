/// Common COSE header labels (IANA "COSE Header Parameters").
public enum COSEHeaderLabel {
    /// `alg`.
    public static let algorithm: Int64 = 1
    /// `crit`.
    public static let critical: Int64 = 2
    /// `content type`.
    public static let contentType: Int64 = 3
    /// `kid`.
    public static let keyID: Int64 = 4
    /// `x5chain` (RFC 9360).
    public static let x5chain: Int64 = 33
}

/// The protected and unprotected headers of a received COSE message, with the protected bucket's
/// exact bytes kept for the Sig_structure / MAC_structure.
public struct COSEHeaders: Sendable {
    /// The protected header bstr's content exactly as received (may be empty).
    public let protectedBytes: ArraySlice<UInt8>
    /// The decoded protected map (nil when the protected bstr is empty).
    public let protected: CBORItem?
    /// The unprotected header map.
    public let unprotected: CBORItem

    init(protectedItem: CBORItem, unprotectedItem: CBORItem) throws(COSEError) {
        guard let pb = protectedItem.byteStringSlice else { throw .malformed("protected header is not a byte string") }
        guard unprotectedItem.type == .map else { throw .malformed("unprotected header is not a map") }
        protectedBytes = pb
        if pb.isEmpty {
            protected = nil
        } else {
            do {
                let doc = try protectedItem.decodeEmbeddedBstr()
                guard doc.root.type == .map else { throw COSEError.malformed("protected header is not a map") }
                protected = doc.root
            } catch let e as COSEError {
                throw e
            } catch {
                throw .cbor(error as! CBORError)
            }
        }
        unprotected = unprotectedItem
        // A label may not appear in both buckets (RFC 9052 §3).
        if let protected {
            for (k, _) in protected.mapEntries {
                for (k2, _) in unprotected.mapEntries where CBORValue(k) == CBORValue(k2) {
                    throw .malformed("header label in both buckets")
                }
            }
        }
    }

    /// The value for an integer label, looked up in the protected bucket first.
    public subscript(label: Int64) -> CBORItem? {
        protected?[intKey: label] ?? unprotected[intKey: label]
    }

    /// The algorithm (label 1).
    public func algorithm() throws(COSEError) -> COSEAlgorithm {
        guard let item = self[COSEHeaderLabel.algorithm] else { throw .unsupportedAlgorithm }
        guard let v = item.int64Value, let alg = COSEAlgorithm(rawValue: v) else { throw .unsupportedAlgorithm }
        return alg
    }

    /// The algorithm (label 1) from the protected bucket only: where a signature must commit to its
    /// algorithm (18013-5 requires `alg` protected for every mdoc COSE_Sign1).
    public func protectedAlgorithm() throws(COSEError) -> COSEAlgorithm {
        guard let item = protected?[intKey: COSEHeaderLabel.algorithm] else {
            if unprotected[intKey: COSEHeaderLabel.algorithm] != nil {
                throw .malformed("alg is not in the protected header")
            }
            throw .unsupportedAlgorithm
        }
        guard let v = item.int64Value, let alg = COSEAlgorithm(rawValue: v) else { throw .unsupportedAlgorithm }
        return alg
    }

    /// Applies `crit` (label 2, RFC 9052 §3.1): when present it must sit in the protected bucket and
    /// be a non-empty array of labels, each present in the protected bucket and among `understood`.
    /// A message naming a label the application does not understand must be refused.
    public func checkCritical(understood: Set<Int64>) throws(COSEError) {
        if unprotected[intKey: COSEHeaderLabel.critical] != nil {
            throw .malformed("crit is not in the protected header")
        }
        guard let crit = protected?[intKey: COSEHeaderLabel.critical] else { return }
        guard crit.type == .array, crit.count >= 1 else { throw .malformed("crit is not a non-empty array") }
        for label in crit.children {
            guard let l = label.int64Value else {
                if label.type == .textString {
                    throw .malformed("crit names a header parameter that is not understood")
                }
                throw .malformed("crit label is neither an integer nor text")
            }
            guard understood.contains(l) else {
                throw .malformed("crit names a header parameter that is not understood")
            }
            guard protected?[intKey: l] != nil else {
                throw .malformed("crit names a header parameter absent from the protected header")
            }
        }
    }

    /// The protected bytes as they enter Sig_structure/MAC_structure: empty when the protected
    /// bucket is empty or holds an empty map (`h'a0'`), per RFC 9052 §4.4.
    var bodyProtected: ArraySlice<UInt8> {
        if protectedBytes.count == 1 && protectedBytes.first == 0xa0 {
            return protectedBytes[protectedBytes.startIndex..<protectedBytes.startIndex]
        }
        return protectedBytes
    }

    /// The DER certificates of `x5chain` (label 33), protected bucket first; the value is one bstr or
    /// an array of at least one bstr. Empty when absent.
    public func x5chain() throws(COSEError) -> [[UInt8]] {
        guard let v = self[COSEHeaderLabel.x5chain] else { return [] }
        if let one = v.byteStringValue { return [one] }
        guard v.type == .array, v.count >= 1 else {
            throw .malformed("x5chain is neither a bstr nor a non-empty array")
        }
        var out = [[UInt8]]()
        for c in v.children {
            guard let der = c.byteStringValue else { throw .malformed("x5chain element is not a byte string") }
            out.append(der)
        }
        return out
    }
}

extension CBORItem {
    /// Parses the content of a byte string as one CBOR item (COSE protected headers are
    /// `bstr .cbor header_map`, without tag 24).
    func decodeEmbeddedBstr(options: CBORDecodingOptions = .default) throws(CBORError) -> CBORDocument {
        guard type == .byteString, !isIndefiniteLength else { throw CBORError(.typeMismatch, at: byteRange.lowerBound) }
        return try CBORDocument(decoding: buffer, range: contentRange, options: options)
    }
}

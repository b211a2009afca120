internal import CryptoCore

/// COSE_Mac0 (RFC 9052 §6.2) with the HMAC algorithms of RFC 9053 §3.1: the ISO 18013-5 deviceMac.
public struct COSEMac0: Sendable {
    /// The COSE_Mac0 tag.
    public static let tag: UInt64 = 17

    /// Headers, with the protected bytes as received.
    public let headers: COSEHeaders
    /// The attached payload, or nil when detached.
    public let payload: ArraySlice<UInt8>?
    /// The MAC tag exactly as received (32 bytes for HMAC 256/256).
    public let macTag: ArraySlice<UInt8>

    /// Parses a COSE_Mac0 (tagged with 17 or untagged).
    public init(_ item: CBORItem) throws(COSEError) {
        var body = item
        if item.type == .tag {
            guard item.tagNumber == Self.tag, let c = item.tagContent else {
                throw .malformed("COSE_Mac0 tag is not 17")
            }
            body = c
        }
        guard body.type == .array, body.count == 4 else { throw .malformed("COSE_Mac0 is not an array of 4") }
        headers = try COSEHeaders(protectedItem: body[0]!, unprotectedItem: body[1]!)
        let pl = body[2]!
        if pl.isNull {
            payload = nil
        } else if let b = pl.byteStringSlice {
            payload = b
        } else {
            throw .malformed("COSE_Mac0 payload is neither bstr nor null")
        }
        guard let t = body[3]!.byteStringSlice else { throw .malformed("COSE_Mac0 tag is not a byte string") }
        macTag = t
    }

    /// `MAC_structure = ["MAC0", protected, external_aad, payload]`.
    public static func macStructure<P: Collection<UInt8>, Q: Collection<UInt8>>(
        protected: P, externalAAD: [UInt8], payload: Q
    ) -> [UInt8] {
        var w = CBORWriter(capacity: 24 + protected.count + externalAAD.count + payload.count)
        w.writeArrayHeader(count: 4)
        w.writeText("MAC0")
        w.writeBytes(protected)
        w.writeBytes(externalAAD)
        w.writeBytes(payload)
        return w.bytes
    }

    /// Verifies the tag with `key` (compared in constant time). Throws `verificationFailed` on mismatch.
    public func verify(key: [UInt8], detachedPayload: [UInt8]? = nil, externalAAD: [UInt8] = []) throws(COSEError) {
        let alg = try headers.algorithm()
        guard alg.isMAC, let digest = alg.digest, let len = alg.macLength else { throw .unsupportedAlgorithm }
        let data: [UInt8]
        switch (payload, detachedPayload) {
        case (let p?, nil):
            data = Self.macStructure(protected: headers.bodyProtected, externalAAD: externalAAD, payload: p)
        case (nil, let d?):
            data = Self.macStructure(protected: headers.bodyProtected, externalAAD: externalAAD, payload: d)
        default: throw .payloadMismatch
        }
        guard macTag.count == len else { throw .invalidSignatureLength }
        let full = digest.hmac(key: key, data: data)
        guard SecureBytes.constantTimeEqual(Array(full.prefix(len)), Array(macTag)) else { throw .verificationFailed }
    }

    /// Creates a COSE_Mac0 with protected `{1: alg}` and an empty unprotected map.
    public static func create(
        payload: [UInt8], detached: Bool, key: [UInt8], algorithm: COSEAlgorithm = .hmac256,
        externalAAD: [UInt8] = [], tagged: Bool = false
    ) throws(COSEError) -> [UInt8] {
        guard algorithm.isMAC, let digest = algorithm.digest, let len = algorithm.macLength else {
            throw .unsupportedAlgorithm
        }
        var ph = CBORWriter(capacity: 4)
        ph.writeMapHeader(count: 1)
        ph.writeInt(COSEHeaderLabel.algorithm)
        ph.writeInt(algorithm.rawValue)
        let tagBytes = Array(
            digest.hmac(key: key, data: macStructure(protected: ph.bytes, externalAAD: externalAAD, payload: payload))
                .prefix(len))
        var w = CBORWriter(capacity: 64 + payload.count)
        if tagged { w.writeTag(Self.tag) }
        w.writeArrayHeader(count: 4)
        w.writeBytes(ph.bytes)
        w.writeMapHeader(count: 0)
        if detached { w.writeNull() } else { w.writeBytes(payload) }
        w.writeBytes(tagBytes)
        return w.bytes
    }
}

internal import CryptoCore
import JOSE
import MdocCBOR

/// The SessionTranscript of an OpenID4VP presentation over the Digital Credentials API (OpenID4VP
/// B.2.6.2): `[null, null, ["OpenID4VPDCAPIHandover", SHA-256(CBOR([origin, nonce, jwkThumbprint]))]]`,
/// the thumbprint the RFC 7638 SHA-256 thumbprint (bstr) of the key the response is encrypted to, or
/// `null` for response mode `dc_api`.
package struct OpenID4VPHandover: Sendable, Hashable {
    /// The CBOR SessionTranscript the device signatures cover.
    package let sessionTranscript: [UInt8]

    /// The CBOR `OpenID4VPDCAPIHandover` array: the SessionTranscript's third element.
    package var handover: [UInt8] { Array(sessionTranscript[Self.handoverStart...]) }

    /// Where the handover starts in the SessionTranscript: after its array head and two nulls.
    private static let handoverStart = 3

    /// Builds the structures for an origin (serialized, no `origin:` prefix), the request's `nonce` as
    /// received, and the encryption key's thumbprint (32 bytes; nil for `dc_api`).
    package init(origin: String, nonce: String, jwkThumbprint: [UInt8]?) {
        guard let jwkThumbprint else {
            self.init(origin: origin, nonce: nonce, thumbprint: nil)
            return
        }
        self = jwkThumbprint.withUnsafeBufferPointer { Self(origin: origin, nonce: nonce, thumbprint: $0) }
    }

    /// Builds the structures for an origin, the request's `nonce` and the key the response is encrypted
    /// to (nil for `dc_api`), its thumbprint computed on the stack.
    package init(origin: String, nonce: String, responseKey: JWK?) {
        guard let responseKey else {
            self.init(origin: origin, nonce: nonce, thumbprint: nil)
            return
        }
        self = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { t in
            responseKey.thumbprint(into: UnsafeMutableRawBufferPointer(t))
            return Self(origin: origin, nonce: nonce, thumbprint: UnsafeBufferPointer(t))
        }
    }

    private init(origin: String, nonce: String, thumbprint: UnsafeBufferPointer<UInt8>?) {
        // [null, null, ["OpenID4VPDCAPIHandover", bstr SHA-256(info)]]: 3 + 1 + 23 + 2 + 32 bytes.
        var t = CBORWriter(capacity: 61)
        t.writeArrayHeader(count: 3)
        t.writeNull()
        t.writeNull()
        t.writeArrayHeader(count: 2)
        t.writeText("OpenID4VPDCAPIHandover")
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { digest in
            Self.withInfo(origin: origin, nonce: nonce, thumbprint: thumbprint) {
                DigestAlgorithm.sha256.hash($0, into: UnsafeMutableRawBufferPointer(digest))
            }
            t.writeHead(major: 2, argument: 32)
            t.writeRaw(UnsafeBufferPointer(digest))
        }
        sessionTranscript = t.takeBytes()
    }

    /// The CBOR `OpenID4VPDCAPIHandoverInfo` array `[origin, nonce, jwkThumbprint]` (for a trace and
    /// the published example; the SessionTranscript hashes it without keeping it).
    package static func handoverInfo(origin: String, nonce: String, jwkThumbprint: [UInt8]?) -> [UInt8] {
        func info(_ t: UnsafeBufferPointer<UInt8>?) -> [UInt8] {
            withInfo(origin: origin, nonce: nonce, thumbprint: t) { Array($0) }
        }
        guard let jwkThumbprint else { return info(nil) }
        return jwkThumbprint.withUnsafeBufferPointer { info($0) }
    }

    /// Calls `body` with the CBOR `OpenID4VPDCAPIHandoverInfo`, written in a temporary buffer (on the
    /// stack unless the origin and nonce are large).
    private static func withInfo<R>(
        origin: String, nonce: String, thumbprint: UnsafeBufferPointer<UInt8>?, _ body: (UnsafeRawBufferPointer) -> R
    ) -> R {
        withUTF8Bytes(origin) { o in
            withUTF8Bytes(nonce) { n in
                // An array head, two texts and a bstr (or null), each head at most 9 bytes.
                let capacity = 1 + 9 + o.count + 9 + n.count + 9 + (thumbprint?.count ?? 0)
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
                    let p = buffer.baseAddress!
                    var k = CBORWriter.writeHead(major: 4, argument: 3, at: p)
                    k += CBORWriter.writeText(o, at: p + k)
                    k += CBORWriter.writeText(n, at: p + k)
                    if let thumbprint {
                        k += CBORWriter.writeHead(major: 2, argument: UInt64(thumbprint.count), at: p + k)
                        (p + k).update(from: thumbprint.baseAddress!, count: thumbprint.count)
                        k += thumbprint.count
                    } else {
                        p[k] = 0xf6  // null
                        k += 1
                    }
                    return body(UnsafeRawBufferPointer(start: p, count: k))
                }
            }
        }
    }
}

internal import CryptoCore
import MdocCBOR

/// The SessionTranscript of an OpenID4VP presentation over the Digital Credentials API (OpenID4VP
/// B.2.6.2): `[null, null, ["OpenID4VPDCAPIHandover", SHA-256(CBOR([origin, nonce, jwkThumbprint]))]]`,
/// the thumbprint the RFC 7638 SHA-256 thumbprint (bstr) of the key the response is encrypted to, or
/// `null` for response mode `dc_api`.
package struct OpenID4VPHandover: Sendable, Hashable {
    /// The CBOR `OpenID4VPDCAPIHandoverInfo` array.
    package let handoverInfo: [UInt8]
    /// The CBOR `OpenID4VPDCAPIHandover` array.
    package let handover: [UInt8]
    /// The CBOR SessionTranscript the device signatures cover.
    package let sessionTranscript: [UInt8]

    /// Builds the structures for an origin (serialized, no `origin:` prefix), the request's `nonce` as
    /// received, and the encryption key's thumbprint (nil for `dc_api`).
    package init(origin: String, nonce: String, jwkThumbprint: [UInt8]?) {
        var info = CBORWriter(capacity: 64 + origin.utf8.count + nonce.utf8.count)
        info.writeArrayHeader(count: 3)
        info.writeText(origin)
        info.writeText(nonce)
        if let jwkThumbprint { info.writeBytes(jwkThumbprint) } else { info.writeNull() }
        handoverInfo = info.bytes
        var h = CBORWriter(capacity: 64)
        h.writeArrayHeader(count: 2)
        h.writeText("OpenID4VPDCAPIHandover")
        h.writeBytes(DigestAlgorithm.sha256.hash(handoverInfo))
        handover = h.bytes
        var t = CBORWriter(capacity: 80)
        t.writeArrayHeader(count: 3)
        t.writeNull()
        t.writeNull()
        t.writeRaw(handover)
        sessionTranscript = t.bytes
    }
}

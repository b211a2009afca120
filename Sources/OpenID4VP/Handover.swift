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
        sessionTranscript = DCAPISessionTranscript.encoded(
            handover: "OpenID4VPDCAPIHandover",
            info: Self.handoverInfo(origin: origin, nonce: nonce, jwkThumbprint: jwkThumbprint))
    }

    /// Builds the structures for an origin, the request's `nonce` and the key the response is encrypted
    /// to (nil for `dc_api`).
    package init(origin: String, nonce: String, responseKey: JWK?) {
        self.init(origin: origin, nonce: nonce, jwkThumbprint: responseKey?.thumbprint)
    }

    /// The CBOR `OpenID4VPDCAPIHandoverInfo` array `[origin, nonce, jwkThumbprint]` (the thumbprint a
    /// bstr, or null for `dc_api`): the structure whose SHA-256 the handover holds.
    package static func handoverInfo(origin: String, nonce: String, jwkThumbprint: [UInt8]?) -> [UInt8] {
        DCAPISessionTranscript.info(count: 3, capacity: 32 + origin.utf8.count + nonce.utf8.count) {
            $0.writeText(origin)
            $0.writeText(nonce)
            if let jwkThumbprint { $0.writeBytes(jwkThumbprint) } else { $0.writeNull() }
        }
    }
}

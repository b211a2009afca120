#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
@_spi(Testing) import AnnexC
import HPKE
@_spi(Testing) import OpenID4VP
import Presentment

// Test hooks, not API (`@_spi(Testing)`): deterministic answers for known-answer tests and the fuzzers,
// which answer the same request several ways and compare what was released.

extension DigitalCredentialsEngine.Configuration {
    /// Seals every answer with fixed ephemeral keys: Annex C's HPKE key, and OpenID4VP's JWE key from
    /// a P-256 scalar. A reused ephemeral key breaks both schemes: never in a wallet.
    @_spi(Testing) public mutating func useEphemeralKeys(hpke: HPKE.PrivateKey, jweP256Scalar: [UInt8])
        throws(PresentmentError)
    {
        annexC.ephemeralKeySource = { hpke }
        let jwe = try JWEEphemeralKey(p256Scalar: jweP256Scalar)
        openID4VP.ephemeralKeySource = { jwe }
    }
}

extension ProtocolDetails {
    /// The payload (`{"vp_token": …}` JSON) of an OpenID4VP answer to the request these details came
    /// from, read back by the sender with the scalar given to `useEphemeralKeys`; nil for an answer not
    /// written for it (or an Annex C request).
    @_spi(Testing) public func openID4VPPayload(of response: Data, jweP256Scalar: [UInt8]) -> [UInt8]? {
        guard let details = openID4VP, let key = try? JWEEphemeralKey(p256Scalar: jweP256Scalar) else { return nil }
        return details.payload(of: response, ephemeral: key)
    }
}

extension ProtocolDetails {
    /// The verifier's HPKE recipient key of an Annex C request (its EncryptionInfo), for a test that
    /// opens an answer sealed with the fixed ephemeral key of `useEphemeralKeys`; nil for OpenID4VP.
    @_spi(Testing) public var annexCRecipientKey: COSEKey? { annexC?.encryptionInfo.recipientPublicKey }
}

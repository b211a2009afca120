#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
internal import CryptoCore
import JOSE
import WebEncoding

extension OpenID4VPDetails {
    /// Test hook: the response payload (`{"vp_token": …}` JSON) of an answer to the request these
    /// details came from, read back by the sender: a `dc_api.jwt` answer is decrypted with the fixed
    /// ephemeral key and the verifier's public key (the same ECDH secret). Nil when the answer is not
    /// one written for this request.
    @_spi(Testing) public func payload(of response: Data, ephemeral: JWEEphemeralKey) -> [UInt8]? {
        guard var data = try? JSONValue.parse(Array(response)) else { return nil }
        if data["protocol"] != nil, let inner = data["data"] { data = inner }
        guard let enc = responseKey else { return data["vp_token"] != nil ? data.serialized : nil }
        guard let jwe = data["response"]?.string,
            let opened = try? JWE.decrypt(
                jwe,
                agreement: { (_) throws(JOSEError) -> [UInt8] in
                    do { return try ephemeral.key.sharedSecret(with: enc.key.publicKey) } catch {
                        throw JOSEError(.invalidKey, "key agreement failed")
                    }
                })
        else { return nil }
        return opened.plaintext
    }
}

import MdocCBOR
import Presentment
import WebEncoding
internal import CryptoCore

/// `EncryptionInfo = ["dcapi", {"nonce": bstr, "recipientPublicKey": COSE_Key}]` (18013-7 Annex C).
public struct EncryptionInfo: Sendable {
    /// The reader's nonce.
    public let nonce: [UInt8]
    /// The reader's HPKE recipient key: EC2 P-256, validated on the curve.
    public let recipientPublicKey: COSEKey

    /// Parses the base64url text exactly as received.
    init(base64url text: String) throws(PresentmentError) {
        guard text.utf8.count <= 4096 else {
            throw PresentmentError(.invalidEncryptionInfo, "encryptionInfo longer than 4096 characters")
        }
        guard let bytes = Base64URL.decode(text) else {
            throw PresentmentError(.malformedRequest, "encryptionInfo is not base64url (URL-safe alphabet, no padding)")
        }
        let root: CBORItem
        do {
            root = try CBORDocument(decoding: bytes, options: .init(maxDepth: 8, maxItems: 64, maxInputSize: 4096)).root
        } catch {
            throw PresentmentError(
                .invalidEncryptionInfo, "EncryptionInfo is not well-formed CBOR (\(error.code.rawValue))")
        }
        guard root.type == .array, root.count == 2 else {
            throw PresentmentError(.invalidEncryptionInfo, "EncryptionInfo is not an array of 2")
        }
        guard root[0]!.isText("dcapi") else {
            throw PresentmentError(.invalidEncryptionInfo, "EncryptionInfo[0] is not \"dcapi\"")
        }
        let params = root[1]!
        guard params.type == .map else {
            throw PresentmentError(.invalidEncryptionInfo, "EncryptionParameters is not a map")
        }
        guard let n = params["nonce"] else { throw PresentmentError(.invalidEncryptionInfo, "nonce missing") }
        guard let nonce = n.byteStringValue else {
            throw PresentmentError(.invalidEncryptionInfo, "nonce is not a byte string")
        }
        guard let k = params["recipientPublicKey"] else {
            throw PresentmentError(.invalidEncryptionInfo, "recipientPublicKey missing")
        }
        guard k.type == .map else {
            throw PresentmentError(.invalidEncryptionInfo, "recipientPublicKey is not a COSE_Key map")
        }
        // kty 2 / crv 1 first, so an OKP or other curve is reported as unsupported, not malformed.
        guard k[intKey: 1]?.int64Value == 2 else {
            throw PresentmentError(.unsupportedRecipientKey, "recipientPublicKey kty is not EC2")
        }
        guard k[intKey: -1]?.int64Value == 1 else {
            throw PresentmentError(.unsupportedRecipientKey, "recipientPublicKey curve is not P-256")
        }
        do {
            recipientPublicKey = try COSEKey(k)
        } catch {
            throw PresentmentError(
                .unsupportedRecipientKey, "recipientPublicKey is not a valid P-256 point (\(Self.reason(error)))")
        }
        self.nonce = nonce
    }

    private static func reason(_ e: COSEError) -> String {
        if e.code == .invalidKey { return e.detail }
        return "invalid key"
    }
}

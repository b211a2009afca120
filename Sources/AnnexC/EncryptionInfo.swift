import MdocCBOR
import Presentment
import WebEncoding
internal import CryptoCore

/// `EncryptionInfo = ["dcapi", {"nonce": bstr, "recipientPublicKey": COSE_Key}]` (18013-7 Annex C).
package struct EncryptionInfo: Sendable {
    /// The reader's nonce.
    package let nonce: [UInt8]
    /// The reader's HPKE recipient key: EC2 P-256, validated on the curve.
    package let recipientPublicKey: COSEKey

    /// Parses the base64url text exactly as received, given as its UTF-8 bytes.
    // unsafe: the text as a view of the request's bytes, decoded in place (no copy of the string).
    init(base64url text: UnsafeRawBufferPointer) throws(PresentmentError) {
        guard text.count <= 4096 else {
            throw PresentmentError(AnnexCRule.encryptionInfoTooLong)
        }
        guard let bytes = Base64URL.decode(text) else {
            throw PresentmentError(AnnexCRule.encryptionInfoNotBase64URL)
        }
        let root: CBORItem
        do {
            root = try CBORDocument(decoding: bytes, options: .init(maxDepth: 8, maxItems: 64, maxInputSize: 4096)).root
        } catch {
            throw PresentmentError(AnnexCRule.encryptionInfoNotCBOR, underlying: error)
        }
        guard root.type == .array, root.count == 2 else {
            throw PresentmentError(AnnexCRule.encryptionInfoNotArray)
        }
        guard root[0]!.isText("dcapi") else {
            throw PresentmentError(AnnexCRule.encryptionInfoNotDcapi)
        }
        let params = root[1]!
        guard params.type == .map else {
            throw PresentmentError(AnnexCRule.parametersNotMap)
        }
        guard let n = params[field: "nonce"] else { throw PresentmentError(AnnexCRule.nonceMissing) }
        guard let nonce = n.byteStringValue else {
            throw PresentmentError(AnnexCRule.nonceNotBytes)
        }
        guard let k = params[field: "recipientPublicKey"] else {
            throw PresentmentError(AnnexCRule.recipientKeyMissing)
        }
        guard k.type == .map else {
            throw PresentmentError(AnnexCRule.recipientKeyNotMap)
        }
        // kty 2 / crv 1 first, so an OKP or other curve is reported as unsupported, not malformed.
        guard k[intKey: 1]?.int64Value == 2 else {
            throw PresentmentError(AnnexCRule.recipientKeyNotEC2)
        }
        guard k[intKey: -1]?.int64Value == 1 else {
            throw PresentmentError(AnnexCRule.recipientKeyNotP256)
        }
        do {
            recipientPublicKey = try COSEKey(k)
        } catch {
            throw PresentmentError(AnnexCRule.recipientKeyInvalid, underlying: error)
        }
        self.nonce = nonce
    }
}

import MdocCBOR

/// `EncryptionInfo = ["dcapi", {"nonce": bstr, "recipientPublicKey": COSE_Key}]` (18013-7 Annex C).
public struct EncryptionInfo: Sendable {
    /// The reader's nonce.
    public let nonce: [UInt8]
    /// The reader's HPKE recipient key: EC2 P-256, validated on the curve.
    public let recipientPublicKey: COSEKey

    /// Parses the base64url text exactly as received.
    init(base64url text: String) throws(AnnexCError) {
        guard text.utf8.count <= 4096 else { throw AnnexCError(.invalidEncryptionInfo, "encryptionInfo longer than 4096 characters") }
        guard let bytes = Base64URL.decode(text) else { throw AnnexCError(.malformedRequest, "encryptionInfo is not base64url") }
        let root: CBORItem
        do { root = try CBORDocument(decoding: bytes, options: .init(maxDepth: 8, maxItems: 64, maxInputSize: 4096)).root } catch {
            throw AnnexCError(.invalidEncryptionInfo, "EncryptionInfo is not well-formed CBOR (\(error.code.rawValue))")
        }
        guard root.type == .array, root.count == 2 else { throw AnnexCError(.invalidEncryptionInfo, "EncryptionInfo is not an array of 2") }
        guard root[0]!.isText("dcapi") else { throw AnnexCError(.invalidEncryptionInfo, "EncryptionInfo[0] is not \"dcapi\"") }
        let params = root[1]!
        guard params.type == .map else { throw AnnexCError(.invalidEncryptionInfo, "EncryptionParameters is not a map") }
        guard let n = params["nonce"] else { throw AnnexCError(.invalidEncryptionInfo, "nonce missing") }
        guard let nonce = n.byteStringValue else { throw AnnexCError(.invalidEncryptionInfo, "nonce is not a byte string") }
        guard let k = params["recipientPublicKey"] else { throw AnnexCError(.invalidEncryptionInfo, "recipientPublicKey missing") }
        guard k.type == .map else { throw AnnexCError(.invalidEncryptionInfo, "recipientPublicKey is not a COSE_Key map") }
        // kty 2 / crv 1 first, so an OKP or other curve is reported as unsupported, not malformed.
        guard k[intKey: 1]?.int64Value == 2 else { throw AnnexCError(.unsupportedRecipientKey, "recipientPublicKey kty is not EC2") }
        guard k[intKey: -1]?.int64Value == 1 else { throw AnnexCError(.unsupportedRecipientKey, "recipientPublicKey curve is not P-256") }
        do {
            recipientPublicKey = try COSEKey(k)
        } catch {
            throw AnnexCError(.unsupportedRecipientKey, "recipientPublicKey is not a valid P-256 point (\(Self.reason(error)))")
        }
        self.nonce = nonce
    }

    private static func reason(_ e: COSEError) -> String {
        if case .invalidKey(let what) = e { return what }
        return "invalid key"
    }
}

/// The SessionTranscript of Annex C: `[null, null, ["dcapi", SHA-256(CBOR([encryptionInfo, origin]))]]`.
public struct SessionTranscript: Sendable, Hashable {
    /// `CBOR([encryptionInfo as received, origin])`.
    public let dcapiInfo: [UInt8]
    /// SHA-256 of `dcapiInfo` (the last 32 bytes of `bytes`).
    public var dcapiInfoHash: [UInt8] { Array(bytes.suffix(32)) }
    /// The encoded SessionTranscript (44 bytes): HPKE `info`, and the array embedded in the
    /// Reader/DeviceAuthentication structures.
    public let bytes: [UInt8]

    /// Builds the transcript from the encryptionInfo string exactly as received and the serialized origin.
    public init(encryptionInfo: String, origin: Origin) {
        var w = CBORWriter(capacity: encryptionInfo.utf8.count + origin.serialized.utf8.count + 8)
        w.writeArrayHeader(count: 2)
        w.writeText(encryptionInfo)
        w.writeText(origin.serialized)
        dcapiInfo = w.bytes
        // 83 f6 f6 82 65 "dcapi" 58 20 <hash>: the 12-byte head, then the digest written in place.
        let head: [UInt8] = [0x83, 0xf6, 0xf6, 0x82, 0x65, 0x64, 0x63, 0x61, 0x70, 0x69, 0x58, 0x20]
        let info = dcapiInfo
        bytes = [UInt8](unsafeUninitializedCapacity: 44) { buf, n in
            _ = buf.initialize(from: head)
            MdocDigest.sha256(info, into: UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buf)[12..<44]))
            n = 44
        }
    }
}

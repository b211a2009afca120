import MdocCBOR
internal import CryptoCore

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
    /// The encryptionInfo string exactly as received.
    private let encryptionInfoText: String
    /// The serialized origin.
    private let originText: String
    /// `CBOR([encryptionInfo as received, origin])` (re-encoded on demand: only explanations read it).
    public var dcapiInfo: [UInt8] {
        var w = CBORWriter(capacity: encryptionInfoText.utf8.count + originText.utf8.count + 8)
        w.writeArrayHeader(count: 2)
        w.writeText(encryptionInfoText)
        w.writeText(originText)
        return w.bytes
    }
    /// SHA-256 of `dcapiInfo` (the last 32 bytes of `bytes`).
    public var dcapiInfoHash: [UInt8] { Array(bytes.suffix(32)) }
    /// The encoded SessionTranscript (44 bytes): HPKE `info`, and the array embedded in the
    /// Reader/DeviceAuthentication structures.
    public let bytes: [UInt8]

    /// Builds the transcript from the encryptionInfo string exactly as received and the serialized origin.
    public init(encryptionInfo: String, origin: Origin) {
        encryptionInfoText = encryptionInfo
        originText = origin.serialized
        // dcapiInfo is assembled in a temporary buffer and hashed; the transcript is
        // 83 f6 f6 82 65 "dcapi" 58 20 <hash>: the 12-byte head, then the digest written in place.
        let head: [UInt8] = [0x83, 0xf6, 0xf6, 0x82, 0x65, 0x64, 0x63, 0x61, 0x70, 0x69, 0x58, 0x20]
        bytes = withUTF8Bytes(encryptionInfo) { e in withUTF8Bytes(origin.serialized) { u in
            let length = 1 + CBORWriter.headLength(UInt64(e.count)) + e.count + CBORWriter.headLength(UInt64(u.count)) + u.count
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { info in
                let p = info.baseAddress!
                p[0] = 0x82
                var n = 1
                n += CBORWriter.writeText(e, at: p + n)
                n += CBORWriter.writeText(u, at: p + n)
                return ByteArrays.make(count: 44) { buf in
                    _ = buf.initialize(from: head)
                    DigestAlgorithm.sha256.hash(UnsafeRawBufferPointer(start: p, count: n),
                                                into: UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buf)[12..<44]))
                }
            }
        } }
    }
}

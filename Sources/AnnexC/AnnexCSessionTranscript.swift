import MdocCBOR
import Presentment
internal import CryptoCore

/// The SessionTranscript of ISO/IEC 18013-7 Annex C (§C.3): `[null, null, ["dcapi", SHA-256(CBOR([encryptionInfo, origin]))]]`.
package struct AnnexCSessionTranscript: Sendable, Hashable {
    /// The encryptionInfo string exactly as received.
    private let encryptionInfoText: String
    /// The serialized origin.
    private let originText: String
    /// `CBOR([encryptionInfo as received, origin])` (re-encoded on demand: only explanations read it).
    package var dcapiInfo: [UInt8] {
        var w = CBORWriter(capacity: encryptionInfoText.utf8.count + originText.utf8.count + 8)
        w.writeArrayHeader(count: 2)
        w.writeText(encryptionInfoText)
        w.writeText(originText)
        return w.bytes
    }
    /// SHA-256 of `dcapiInfo` (the last 32 bytes of `bytes`).
    package var dcapiInfoHash: [UInt8] { Array(bytes.suffix(32)) }
    /// The encoded SessionTranscript (44 bytes): HPKE `info`, and the array embedded in the
    /// Reader/DeviceAuthentication structures.
    package let bytes: [UInt8]

    /// Builds the transcript from the encryptionInfo string exactly as received and the serialized origin.
    package init(encryptionInfo: String, origin: Origin) {
        encryptionInfoText = encryptionInfo
        originText = origin.serialized
        // dcapiInfo is assembled in a temporary buffer and hashed; the transcript is
        // 83 f6 f6 82 65 "dcapi" 58 20 <hash>: the 12-byte head, then the digest written in place.
        let head: [UInt8] = [0x83, 0xf6, 0xf6, 0x82, 0x65, 0x64, 0x63, 0x61, 0x70, 0x69, 0x58, 0x20]
        bytes = withUTF8Bytes(encryptionInfo) { e in
            withUTF8Bytes(origin.serialized) { u in
                let length =
                    1 + CBORWriter.headLength(UInt64(e.count)) + e.count + CBORWriter.headLength(UInt64(u.count))
                    + u.count
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { info in
                    let p = info.baseAddress!
                    p[0] = 0x82
                    var n = 1
                    n += CBORWriter.writeText(e, at: p + n)
                    n += CBORWriter.writeText(u, at: p + n)
                    // The SessionTranscript is public (the verifier computes it too): no cleansing.
                    return ByteArrays.make(count: 44, cleansing: false) { buf in
                        _ = buf.initialize(from: head)
                        DigestAlgorithm.sha256.hash(
                            UnsafeRawBufferPointer(start: p, count: n),
                            into: UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buf)[12..<44]))
                    }
                }
            }
        }
    }
}

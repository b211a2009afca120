import MdocCBOR
import Presentment
internal import CryptoCore

/// The SessionTranscript of ISO/IEC 18013-7 Annex C (§C.3): `[null, null, ["dcapi", SHA-256(CBOR([encryptionInfo, origin]))]]`.
package struct AnnexCSessionTranscript: Sendable, Hashable {
    /// `CBOR([encryptionInfo as received, origin])`, the structure whose SHA-256 the transcript holds
    /// (built again on demand: only explanations and tests read it).
    package static func dcapiInfo(encryptionInfo: UnsafeRawBufferPointer, origin: Origin) -> [UInt8] {
        withUTF8Bytes(origin.serialized) { u in
            let e = encryptionInfo.assumingMemoryBound(to: UInt8.self)
            return [UInt8](unsafeUninitializedCapacity: dcapiInfoLength(e.count, u.count)) { buf, n in
                n = writeDcapiInfo(e, u, at: buf.baseAddress!)
            }
        }
    }

    /// SHA-256 of dcapiInfo (the last 32 bytes of `bytes`).
    package var dcapiInfoHash: [UInt8] { Array(bytes.suffix(32)) }
    /// The encoded SessionTranscript (44 bytes): HPKE `info`, and the array embedded in the
    /// Reader/DeviceAuthentication structures.
    package let bytes: [UInt8]

    /// Builds the transcript from the encryptionInfo string exactly as received and the serialized origin.
    package init(encryptionInfo: String, origin: Origin) {
        self = withUTF8Bytes(encryptionInfo) { Self(encryptionInfo: UnsafeRawBufferPointer($0), origin: origin) }
    }

    /// Builds the transcript from the UTF-8 bytes of the encryptionInfo string exactly as received and
    /// the serialized origin.
    package init(encryptionInfo: UnsafeRawBufferPointer, origin: Origin) {
        // dcapiInfo is assembled in a temporary buffer and hashed; the transcript is
        // 83 f6 f6 82 65 "dcapi" 58 20 <hash>: the 12-byte head, then the digest written in place.
        let head: [UInt8] = [0x83, 0xf6, 0xf6, 0x82, 0x65, 0x64, 0x63, 0x61, 0x70, 0x69, 0x58, 0x20]
        let e = encryptionInfo.assumingMemoryBound(to: UInt8.self)
        bytes = withUTF8Bytes(origin.serialized) { u in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.dcapiInfoLength(e.count, u.count)) { info in
                let p = info.baseAddress!
                let n = Self.writeDcapiInfo(e, u, at: p)
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

    /// The length of dcapiInfo for an encryptionInfo of `e` bytes and an origin of `u`.
    private static func dcapiInfoLength(_ e: Int, _ u: Int) -> Int {
        1 + CBORWriter.headLength(UInt64(e)) + e + CBORWriter.headLength(UInt64(u)) + u
    }

    /// Writes dcapiInfo at `p` (room for `dcapiInfoLength`), returning its length.
    private static func writeDcapiInfo(
        _ e: UnsafeBufferPointer<UInt8>, _ u: UnsafeBufferPointer<UInt8>, at p: UnsafeMutablePointer<UInt8>
    ) -> Int {
        p[0] = 0x82
        var n = 1
        n += CBORWriter.writeText(e, at: p + n)
        n += CBORWriter.writeText(u, at: p + n)
        return n
    }
}

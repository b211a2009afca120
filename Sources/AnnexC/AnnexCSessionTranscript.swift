import MdocCBOR
import Presentment
internal import CryptoCore

/// The SessionTranscript of ISO/IEC 18013-7 Annex C (§C.3):
/// `[null, null, ["dcapi", SHA-256(dcapiInfo)]]`, dcapiInfo = `[encryptionInfo, origin]` with the
/// encryptionInfo string exactly as received and the serialized origin.
package struct AnnexCSessionTranscript: Sendable, Hashable {
    /// The encoded SessionTranscript (44 bytes): HPKE `info`, and the array embedded in the
    /// Reader/DeviceAuthentication structures.
    package let bytes: [UInt8]

    /// SHA-256 of dcapiInfo (the last 32 bytes of `bytes`).
    package var dcapiInfoHash: [UInt8] { Array(bytes.suffix(32)) }

    /// Builds the transcript from the encryptionInfo string exactly as received and the serialized origin.
    package init(encryptionInfo: String, origin: Origin) {
        // unsafe: the string's UTF-8 bytes as a view for the byte-level initializer below.
        self = withUTF8Bytes(encryptionInfo) { Self(encryptionInfo: UnsafeRawBufferPointer($0), origin: origin) }
    }

    /// Builds the transcript from the UTF-8 bytes of the encryptionInfo string exactly as received and
    /// the serialized origin.
    // unsafe: the encryptionInfo as received, a view of the request's bytes (hashed as is, never copied to a String).
    package init(encryptionInfo: UnsafeRawBufferPointer, origin: Origin) {
        bytes = DCAPISessionTranscript.encoded(
            handover: "dcapi", info: Self.dcapiInfo(encryptionInfo: encryptionInfo, origin: origin))
    }

    /// dcapiInfo, `CBOR([encryptionInfo as received, origin])`: the structure whose SHA-256 the
    /// transcript holds.
    // unsafe: as the initializer: the bytes as received.
    package static func dcapiInfo(encryptionInfo: UnsafeRawBufferPointer, origin: Origin) -> [UInt8] {
        let serialized = origin.serialized
        return DCAPISessionTranscript.info(count: 2, capacity: 20 + encryptionInfo.count + serialized.utf8.count) {
            $0.writeText(utf8: encryptionInfo)
            $0.writeText(serialized)
        }
    }
}

internal import CryptoCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `LabeledExtract` and `LabeledExpand` (RFC 9180 §4) for one KDF and suite_id.
struct LabeledKDF {
    let digest: DigestAlgorithm
    let suiteID: [UInt8]

    static let version = Array("HPKE-v1".utf8)

    /// `LabeledExtract(salt, label, ikm) = Extract(salt, "HPKE-v1" ‖ suite_id ‖ label ‖ ikm)`, fed to HMAC
    /// piece by piece (no concatenated copy).
    func labeledExtract(salt: [UInt8], label: StaticString, ikm: [UInt8]) -> [UInt8] {
        Self.version.withUnsafeBytes { v in
            suiteID.withUnsafeBytes { sid in
                ikm.withUnsafeBytes { i in
                    digest.hkdfExtract(salt: salt, ikmParts: [v, sid, UnsafeRawBufferPointer(start: label.utf8Start, count: label.utf8CodeUnitCount), i])
                }
            }
        }
    }

    /// `LabeledExpand(prk, label, info, L) = Expand(prk, I2OSP(L, 2) ‖ "HPKE-v1" ‖ suite_id ‖ label ‖ info, L)`.
    func labeledExpand(prk: [UInt8], label: StaticString, info: [UInt8], length: Int) throws(HPKE.Error) -> [UInt8] {
        guard length >= 0, length <= 0xFFFF, length <= 255 * digest.outputSize else { throw .invalidLength }
        let l = (UInt8(length >> 8), UInt8(length & 0xff))
        let r: [UInt8]? = withUnsafeBytes(of: l) { lb in
            Self.version.withUnsafeBytes { v in
                suiteID.withUnsafeBytes { sid in
                    info.withUnsafeBytes { i in
                        try? digest.hkdfExpand(prk: prk, infoParts: [lb, v, sid, UnsafeRawBufferPointer(start: label.utf8Start, count: label.utf8CodeUnitCount), i], length: length)
                    }
                }
            }
        }
        guard let r else { throw .invalidLength }
        return r
    }
}

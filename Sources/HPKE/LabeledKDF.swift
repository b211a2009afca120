internal import CryptoCore
import Foundation

/// `LabeledExtract` and `LabeledExpand` (RFC 9180 §4) for one KDF and suite_id.
struct LabeledKDF {
    let digest: DigestAlgorithm
    let suiteID: [UInt8]

    static let version = Array("HPKE-v1".utf8)

    /// `LabeledExtract(salt, label, ikm) = Extract(salt, "HPKE-v1" ‖ suite_id ‖ label ‖ ikm)`.
    func labeledExtract(salt: [UInt8], label: String, ikm: [UInt8]) -> [UInt8] {
        var labeledIKM = Self.version
        labeledIKM.reserveCapacity(Self.version.count + suiteID.count + label.utf8.count + ikm.count)
        labeledIKM += suiteID
        labeledIKM += label.utf8
        labeledIKM += ikm
        defer { SecureBytes.cleanse(&labeledIKM) }
        return digest.hkdfExtract(salt: salt, ikm: labeledIKM)
    }

    /// `LabeledExpand(prk, label, info, L) = Expand(prk, I2OSP(L, 2) ‖ "HPKE-v1" ‖ suite_id ‖ label ‖ info, L)`.
    func labeledExpand(prk: [UInt8], label: String, info: [UInt8], length: Int) throws(HPKE.Error) -> [UInt8] {
        guard length >= 0, length <= 0xFFFF, length <= 255 * digest.outputSize else { throw .invalidLength }
        var labeledInfo = I2OSP(length, 2)
        labeledInfo.reserveCapacity(2 + Self.version.count + suiteID.count + label.utf8.count + info.count)
        labeledInfo += Self.version
        labeledInfo += suiteID
        labeledInfo += label.utf8
        labeledInfo += info
        do {
            return try digest.hkdfExpand(prk: prk, info: labeledInfo, length: length)
        } catch {
            throw .invalidLength
        }
    }
}

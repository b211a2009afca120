internal import CryptoCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A `suite_id` (RFC 9180 §4/§5.1) held inline: at most 10 bytes, no heap storage.
struct SuiteID: Sendable {
    private var storage: (UInt64, UInt64) = (0, 0)
    let count: Int

    /// `"KEM" ‖ I2OSP(kem_id, 2)`.
    init(kem: UInt16) {
        count = 5
        withUnsafeMutableBytes(of: &storage) { s in
            s[0] = 0x4b
            s[1] = 0x45
            s[2] = 0x4d
            s[3] = UInt8(kem >> 8)
            s[4] = UInt8(kem & 0xff)
        }
    }

    /// `"HPKE" ‖ I2OSP(kem_id, 2) ‖ I2OSP(kdf_id, 2) ‖ I2OSP(aead_id, 2)`.
    init(kem: UInt16, kdf: UInt16, aead: UInt16) {
        count = 10
        withUnsafeMutableBytes(of: &storage) { s in
            s[0] = 0x48
            s[1] = 0x50
            s[2] = 0x4b
            s[3] = 0x45
            s[4] = UInt8(kem >> 8)
            s[5] = UInt8(kem & 0xff)
            s[6] = UInt8(kdf >> 8)
            s[7] = UInt8(kdf & 0xff)
            s[8] = UInt8(aead >> 8)
            s[9] = UInt8(aead & 0xff)
        }
    }

    /// The bytes, valid inside `body`.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: storage) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    /// The bytes as an array (tests and diagnostics).
    var bytes: [UInt8] { withBytes { Array($0) } }
}

/// `LabeledExtract` and `LabeledExpand` (RFC 9180 §4) for one KDF and suite_id. The `into:` forms
/// write into caller-owned buffers and feed HMAC piece by piece: no concatenation, no allocation.
struct LabeledKDF {
    let digest: DigestAlgorithm
    let suiteID: SuiteID

    private static let version: StaticString = "HPKE-v1"

    private static func bytes(_ s: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
    }

    /// `LabeledExtract(salt, label, ikm) = Extract(salt, "HPKE-v1" ‖ suite_id ‖ label ‖ ikm)`.
    func labeledExtract(salt: [UInt8], label: StaticString, ikm: [UInt8]) -> [UInt8] {
        ByteArrays.make(count: digest.outputSize) { out in
            salt.withUnsafeBytes { s in
                ikm.withUnsafeBytes { i in
                    labeledExtract(salt: s, label: label, ikm: i, into: UnsafeMutableRawBufferPointer(out))
                }
            }
        }
    }

    /// `LabeledExtract` into `out` (exactly Nh bytes).
    func labeledExtract(
        salt: UnsafeRawBufferPointer, label: StaticString, ikm: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawBufferPointer
    ) {
        suiteID.withBytes { sid in
            withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: 4) { parts in
                parts[0] = Self.bytes(Self.version)
                parts[1] = sid
                parts[2] = Self.bytes(label)
                parts[3] = ikm
                digest.hkdfExtract(salt: salt, ikmParts: UnsafeBufferPointer(parts), into: out)
            }
        }
    }

    /// `LabeledExpand(prk, label, info, L) = Expand(prk, I2OSP(L, 2) ‖ "HPKE-v1" ‖ suite_id ‖ label ‖ info, L)`.
    func labeledExpand(prk: [UInt8], label: StaticString, info: [UInt8], length: Int) throws(HPKE.Error) -> [UInt8] {
        guard length >= 0, length <= 0xFFFF, length <= 255 * digest.outputSize else { throw .invalidLength }
        var failed = false
        let r = ByteArrays.make(count: length) { out in
            prk.withUnsafeBytes { p in
                info.withUnsafeBytes { i in
                    withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: 1) { parts in
                        parts[0] = i
                        do {
                            try labeledExpand(
                                prk: p, label: label, info: UnsafeBufferPointer(parts),
                                into: UnsafeMutableRawBufferPointer(out))
                        } catch { failed = true }
                    }
                }
            }
        }
        if failed { throw .invalidLength }
        return r
    }

    /// `LabeledExpand` into `out` (L = `out.count`), with `info` given as the concatenation of parts.
    func labeledExpand(
        prk: UnsafeRawBufferPointer, label: StaticString, info: UnsafeBufferPointer<UnsafeRawBufferPointer>,
        into out: UnsafeMutableRawBufferPointer
    ) throws(HPKE.Error) {
        let length = out.count
        guard length <= 0xFFFF, length <= 255 * digest.outputSize else { throw .invalidLength }
        let l = (UInt8(length >> 8), UInt8(length & 0xff))
        let ok: Bool = withUnsafeBytes(of: l) { lb in
            suiteID.withBytes { sid in
                withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: 4 + info.count) { parts in
                    parts[0] = lb
                    parts[1] = Self.bytes(Self.version)
                    parts[2] = sid
                    parts[3] = Self.bytes(label)
                    for (k, p) in info.enumerated() { parts[4 + k] = p }
                    do {
                        try digest.hkdfExpand(prk: prk, infoParts: UnsafeBufferPointer(parts), into: out)
                        return true
                    } catch { return false }
                }
            }
        }
        guard ok else { throw .invalidLength }
    }
}

import DigitalCredentials
import AnnexCReader
import Foundation
import HPKE
import MdocCBOR

/// SplitMix64 seeded from SHA-256(seed ‖ label).
struct SeededRandom {
    var state: UInt64
    init(_ label: String) {
        let h = MdocDigest.sha256(Array((seed + "/" + label).utf8))
        state = h.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
    mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: next()) } }
}

internal import COpenSSL

/// New byte arrays written in place.
///
/// `[UInt8](unsafeUninitializedCapacity:initializingWith:)` and `[UInt8](repeating:count:)` allocate
/// through the standard library's unspecialized buffer path: a generic-metadata lookup on every call
/// (measured: ~400 instructions more per array, and cold runtime code on the instruction cache).
/// Copying an `UnsafeBufferPointer` into an array takes the specialized path, so a short array is
/// written in a stack buffer first and copied once; the stack copy is then cleansed, since these
/// arrays often hold key material (HMAC and HKDF outputs, shared secrets).
package enum ByteArrays {
    /// Longest array written through a stack buffer (longer ones are rare and large enough that
    /// the lookup does not matter).
    static let stackLimit = 512

    /// A new array of exactly `count` bytes, all of which `fill` must write. `fill` is not called
    /// when `count` is 0. The stack copy is cleansed unless `cleansing` is false, which is for bytes
    /// that are public anyway (decoded request text, a transcript's hash, zeros).
    package static func make(
        count: Int, cleansing: Bool = true, _ fill: (UnsafeMutableBufferPointer<UInt8>) -> Void
    ) -> [UInt8] {
        precondition(count >= 0)
        if count == 0 { return [] }
        if count > stackLimit {
            return [UInt8](unsafeUninitializedCapacity: count) { buffer, n in
                fill(buffer)
                n = count
            }
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { scratch in
            fill(scratch)
            defer { if cleansing { OPENSSL_cleanse(scratch.baseAddress, count) } }
            return Array(UnsafeBufferPointer(scratch))
        }
    }

    /// `count` zero bytes (the stack copy holds only zeros: nothing to cleanse; a caller that then
    /// writes a secret into the array writes it there, not on the stack).
    package static func zeros(count: Int) -> [UInt8] {
        make(count: count, cleansing: false) { $0.initialize(repeating: 0) }
    }
}

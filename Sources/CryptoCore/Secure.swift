internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Random bytes, cleansing and constant-time comparison.
package enum SecureBytes {
    /// Returns `count` bytes from OpenSSL's CSPRNG.
    package static func random(count: Int) throws(CryptoError) -> [UInt8] {
        guard count >= 0 else { throw .invalidLength }
        if count == 0 { return [] }
        var out = ByteArrays.zeros(count: count)
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard ok == 1 else { throw .operationFailed(operation: "RAND_bytes") }
        return out
    }

    /// Overwrites the bytes with zeros in a way the optimizer cannot remove.
    package static func cleanse(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buf in
            if let base = buf.baseAddress, buf.count > 0 { OPENSSL_cleanse(base, buf.count) }
        }
    }

    /// Overwrites a caller-owned buffer (stack scratch space) with zeros.
    package static func cleanse(_ buf: UnsafeMutableRawBufferPointer) {
        if let base = buf.baseAddress, buf.count > 0 { OPENSSL_cleanse(base, buf.count) }
    }

    /// Constant-time equality (time depends only on the lengths).
    package static func constantTimeEqual<A: ContiguousBytes, B: ContiguousBytes>(_ a: A, _ b: B) -> Bool {
        a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in
                guard pa.count == pb.count else { return false }
                if pa.count == 0 { return true }
                return CRYPTO_memcmp(pa.baseAddress!, pb.baseAddress!, pa.count) == 0
            }
        }
    }
}

/// Calls `body` with a pointer that is never nil, even for empty input: OpenSSL rejects NULL for
/// zero-length salts and keys (engineering notes 2.3).
@inline(__always)
func withNonNullBytes<B: ContiguousBytes, R>(_ bytes: B, _ body: (UnsafeRawPointer, Int) throws -> R) rethrows -> R {
    try bytes.withUnsafeBytes { buf in
        if let base = buf.baseAddress, buf.count > 0 { return try body(base, buf.count) }
        return try withUnsafeBytes(of: UInt8(0)) { dummy in try body(dummy.baseAddress!, 0) }
    }
}

/// Equality of the short byte strings a reader compares by the hundred per request (map keys, element
/// names, namespaces). Not for secrets: `SecureBytes.constantTimeEqual` compares those.
package enum ShortBytes {
    /// Whether the `count` bytes at `a` and at `b` are equal: in eight-byte words (the last word read as
    /// the eight bytes ending the strings, shorter strings with two overlapping loads), in line, without
    /// a call. Nothing outside the `count` bytes is read.
    @inlinable
    package static func equal(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count n: Int) -> Bool {
        if n >= 8 {
            var i = 0
            while i + 8 < n {
                if a.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    != b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                {
                    return false
                }
                i += 8
            }
            return a.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        }
        if n >= 4 {
            return a.loadUnaligned(as: UInt32.self) == b.loadUnaligned(as: UInt32.self)
                && a.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
                    == b.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
        }
        if n <= 0 { return true }
        let x = a.assumingMemoryBound(to: UInt8.self)
        let y = b.assumingMemoryBound(to: UInt8.self)
        return x[0] == y[0] && x[n >> 1] == y[n >> 1] && x[n - 1] == y[n - 1]
    }
}

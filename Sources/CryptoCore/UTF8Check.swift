/// UTF-8 validation (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF). Shared with the
/// JSON framing parser (non-generic, so no runtime metadata lookups on the request path).
package enum UTF8Check {
    /// True when the `count` bytes at `p` are well-formed UTF-8. All-ASCII text (keys, identifiers: the
    /// common case) is settled in line, eight bytes at a time, without a call.
    @inlinable
    package static func isValid(_ p: UnsafePointer<UInt8>, count: Int) -> Bool {
        isASCII(p, count: count) || isValidMultibyte(p, count: count)
    }

    /// True when the `count` bytes at `p` are all below 0x80. Eight bytes at a time, the last partial
    /// word read as the eight bytes ending the text and shorter text with two overlapping loads (no
    /// byte loop; nothing outside the `count` bytes is read).
    @inlinable
    package static func isASCII(_ p: UnsafePointer<UInt8>, count: Int) -> Bool {
        let raw = UnsafeRawPointer(p)
        var high: UInt64 = 0
        if count >= 8 {
            var i = 0
            while i + 8 < count {
                high |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                i += 8
            }
            high |= raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
            high = UInt64(
                raw.loadUnaligned(as: UInt32.self) | raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
        } else if count > 0 {
            high = UInt64(p[0] | p[count >> 1] | p[count - 1])
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// The full check, for text with a byte at or above 0x80.
    @usableFromInline
    package static func isValidMultibyte(_ p: UnsafePointer<UInt8>, count: Int) -> Bool {
        var i = 0
        while i < count {
            // ASCII fast path, 8 bytes at a time.
            while i + 8 <= count {
                let w = UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
                if w & 0x8080_8080_8080_8080 != 0 { break }
                i += 8
            }
            if i >= count { break }
            let b0 = p[i]
            if b0 < 0x80 {
                i += 1
                continue
            }
            if b0 < 0xc2 { return false }
            if b0 < 0xe0 {
                guard i + 1 < count, p[i + 1] & 0xc0 == 0x80 else { return false }
                i += 2
                continue
            }
            if b0 < 0xf0 {
                guard i + 2 < count else { return false }
                let b1 = p[i + 1]
                let b2 = p[i + 2]
                guard b1 & 0xc0 == 0x80, b2 & 0xc0 == 0x80 else { return false }
                if b0 == 0xe0 && b1 < 0xa0 { return false }  // overlong
                if b0 == 0xed && b1 >= 0xa0 { return false }  // surrogates
                i += 3
                continue
            }
            if b0 < 0xf5 {
                guard i + 3 < count else { return false }
                let b1 = p[i + 1]
                let b2 = p[i + 2]
                let b3 = p[i + 3]
                guard b1 & 0xc0 == 0x80, b2 & 0xc0 == 0x80, b3 & 0xc0 == 0x80 else { return false }
                if b0 == 0xf0 && b1 < 0x90 { return false }  // overlong
                if b0 == 0xf4 && b1 >= 0x90 { return false }  // above U+10FFFF
                i += 4
                continue
            }
            return false
        }
        return true
    }
}

/// Runs `body` over the UTF-8 bytes of `s` without copying the string: native and small strings are
/// read in place (`var copy = s; copy.withUTF8` would retain and release the storage on every call);
/// only a bridged, non-contiguous string is made contiguous first.
@inlinable
package func withUTF8Bytes<R>(_ s: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let r = s.utf8.withContiguousStorageIfAvailable(body) { return r }
    var copy = s
    return copy.withUTF8(body)
}

/// The eight-bytes-at-a-time scan both directions of JSON share: how far from `start` (up to `end`)
/// runs of bytes need no escaping, stopping at the first eight-byte word holding a control character or
/// a backslash (or, with `stopAtQuote`, a quote). Callers finish the last few bytes one by one.
enum JSONScan {
    /// The high bit of each byte of `w` that is a control character (< 0x20) or a backslash, with
    /// `quote` a quote too, and with `nonASCII` a byte ≥ 0x80 too. A byte above a flagged one may be
    /// flagged as well (a borrow), never one below it, so the lowest flag (in memory order on a
    /// little-endian machine) is exact.
    @inline(__always)
    static func stops(_ w: UInt64, quote: Bool, nonASCII: Bool) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let b = w ^ (ones &* 0x5c)
        var flags = ((w &- ones &* 0x20) & ~w) | ((b &- ones) & ~b)
        if quote {
            let q = w ^ (ones &* 0x22)
            flags |= (q &- ones) & ~q
        }
        if nonASCII { flags |= w }
        return flags & 0x8080_8080_8080_8080
    }

    /// The string reader's stops: a quote, a backslash, a control character or a byte ≥ 0x80.
    @inline(__always)
    static func asciiStops(_ w: UInt64) -> UInt64 { stops(w, quote: true, nonASCII: true) }

    @inline(__always)
    static func plainRun(_ p: UnsafeRawPointer, from start: Int, to end: Int, stopAtQuote: Bool) -> Int {
        var k = start
        while k + 8 <= end {
            let w = p.loadUnaligned(fromByteOffset: k, as: UInt64.self)
            if stops(w, quote: stopAtQuote, nonASCII: false) != 0 { break }
            k += 8
        }
        return k
    }
}

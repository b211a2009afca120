/// base64url (RFC 4648 §5) without padding. Decoding accepts only the URL-safe alphabet; trailing
/// `=` padding is tolerated (and must then be correct), anything else is refused.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let table: [UInt8] = {
        var t = [UInt8](repeating: 0xff, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    /// Encodes without padding.
    public static func encode<C: Collection<UInt8>>(_ bytes: C) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var it = bytes.makeIterator()
        while let a = it.next() {
            let b = it.next(), c = it.next()
            out.append(alphabet[Int(a >> 2)])
            out.append(alphabet[Int((a & 3) << 4 | (b ?? 0) >> 4)])
            if let b { out.append(alphabet[Int((b & 0xf) << 2 | (c ?? 0) >> 6)]) }
            if let c { out.append(alphabet[Int(c & 0x3f)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes; returns nil for characters outside the alphabet, misplaced or wrong padding, an
    /// impossible length, or non-zero trailing bits.
    public static func decode(_ s: String) -> [UInt8]? {
        var chars = Array(s.utf8)
        var pad = 0
        while chars.last == UInt8(ascii: "=") { chars.removeLast(); pad += 1 }
        if pad > 0 && (chars.count + pad) % 4 != 0 { return nil }
        if pad > 2 { return nil }
        if chars.count % 4 == 1 { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count * 3 / 4)
        var acc: UInt32 = 0, bits = 0
        for c in chars {
            let v = table[Int(c)]
            if v == 0xff { return nil }
            acc = acc << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero (canonical encoding).
        if bits > 0 && acc & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }
}

internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Conversion between COSE's raw `r ‖ s` and DER `ECDSA-Sig-Value` (done in Swift: no BIGNUMs).
enum ECDSASignatureDER {
    static func encode(raw: UnsafeRawBufferPointer, coordinateSize n: Int) -> [UInt8] {
        func integer(_ bytes: UnsafeRawBufferPointer.SubSequence) -> [UInt8] {
            var start = bytes.startIndex
            while start < bytes.endIndex - 1, bytes[start] == 0 { start += 1 }
            var body = [UInt8](bytes[start...])
            if body[0] & 0x80 != 0 { body.insert(0, at: 0) }
            return [0x02] + derLength(body.count) + body
        }
        let r = integer(raw[0..<n])
        let s = integer(raw[n..<(2 * n)])
        return [0x30] + derLength(r.count + s.count) + r + s
    }

    static func derLength(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        if n < 0x100 { return [0x81, UInt8(n)] }
        return [0x82, UInt8(n >> 8), UInt8(n & 0xff)]
    }

    /// DER `SEQUENCE { INTEGER r, INTEGER s }` → raw `r ‖ s`, written straight into one output buffer.
    static func decode(der: [UInt8], coordinateSize n: Int) -> [UInt8]? {
        var i = 0
        func readLength() -> Int? {
            guard i < der.count else { return nil }
            let b = der[i]
            i += 1
            if b < 0x80 { return Int(b) }
            let count = Int(b & 0x7f)
            guard count >= 1, count <= 2, i + count <= der.count else { return nil }
            var len = 0
            for _ in 0..<count {
                len = len << 8 | Int(der[i])
                i += 1
            }
            return len
        }
        guard der.first == 0x30 else { return nil }
        i = 1
        guard let total = readLength(), i + total == der.count else { return nil }
        var out = ByteArrays.zeros(count: 2 * n)
        for half in 0..<2 {
            guard i < der.count, der[i] == 0x02 else { return nil }
            i += 1
            guard let len = readLength(), len > 0, i + len <= der.count else { return nil }
            var start = i
            while start < i + len - 1, der[start] == 0 { start += 1 }  // drop sign-padding zeros
            let significant = i + len - start
            guard significant <= n else { return nil }
            for k in 0..<significant { out[half * n + n - significant + k] = der[start + k] }
            i += len
        }
        return i == der.count ? out : nil
    }
}

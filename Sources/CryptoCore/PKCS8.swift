internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A minimal reader for unencrypted PKCS#8 `PrivateKeyInfo` holding an `ECPrivateKey` on P-256,
/// P-384 or P-521 (RFC 5208, RFC 5915), in DER or in PEM ("PRIVATE KEY"). Anything else returns nil
/// and is left to OpenSSL's general decoder.
enum ECPKCS8 {
    struct Parsed {
        let curve: Curve
        var scalar: [UInt8]
        let publicPoint: [UInt8]?
    }

    private static let ecPublicKey: [UInt8] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]
    private static let curves: [([UInt8], Curve)] = [
        ([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07], .p256),
        ([0x2b, 0x81, 0x04, 0x00, 0x22], .p384),
        ([0x2b, 0x81, 0x04, 0x00, 0x23], .p521),
    ]

    static func parse(_ input: [UInt8]) -> Parsed? {
        if var der = pem(input) {
            // The only reference to the decoded key: cleansed in place when done.
            defer { SecureBytes.cleanse(&der) }
            return der.withUnsafeBufferPointer { parseDER($0) }
        }
        guard input.first == 0x30 else { return nil }
        return input.withUnsafeBufferPointer { parseDER($0) }
    }

    private static func parseDER(_ d: UnsafeBufferPointer<UInt8>) -> Parsed? {
        var r = Reader(d: d, at: 0, end: d.count)
        guard var info = r.enter(0x30), r.at == r.end else { return nil }
        guard let version = info.read(0x02), version.count == 1, d[version.lowerBound] == 0 else { return nil }
        guard var alg = info.enter(0x30), let oid = alg.read(0x06), Array(d[oid]) == ecPublicKey,
            let curveOID = alg.read(0x06), alg.at == alg.end,
            let curve = curves.first(where: { $0.0 == Array(d[curveOID]) })?.1
        else { return nil }
        guard let inner = info.read(0x04) else { return nil }  // attributes, if any, may follow
        var ecOuter = Reader(d: d, at: inner.lowerBound, end: inner.upperBound)
        guard var ec = ecOuter.enter(0x30), ecOuter.at == ecOuter.end else { return nil }
        guard let v1 = ec.read(0x02), v1.count == 1, d[v1.lowerBound] == 1 else { return nil }
        guard let scalar = ec.read(0x04), scalar.count == curve.coordinateSize else { return nil }
        var point: [UInt8]? = nil
        if ec.peek == 0xa0 {
            guard var params = ec.enter(0xa0), let o = params.read(0x06),
                Array(d[o]) == curves.first(where: { $0.1 == curve })!.0
            else { return nil }
        }
        if ec.peek == 0xa1 {
            guard var wrapper = ec.enter(0xa1), let bits = wrapper.read(0x03),
                bits.count == curve.uncompressedPointSize + 1,
                d[bits.lowerBound] == 0
            else { return nil }
            point = Array(d[(bits.lowerBound + 1)..<bits.upperBound])
        }
        guard ec.at == ec.end else { return nil }
        return Parsed(curve: curve, scalar: Array(d[scalar]), publicPoint: point)
    }

    /// A DER cursor: `read(tag)` returns the content range of the next element when it has that tag.
    private struct Reader {
        let d: UnsafeBufferPointer<UInt8>
        var at: Int
        let end: Int
        var peek: UInt8? { at < end ? d[at] : nil }

        init(d: UnsafeBufferPointer<UInt8>, at: Int, end: Int) {
            self.d = d
            self.at = at
            self.end = end
        }

        /// Enters one constructed element with `tag`: a reader over its content.
        mutating func enter(_ tag: UInt8) -> Reader? {
            guard let r = read(tag) else { return nil }
            return Reader(d: d, at: r.lowerBound, end: r.upperBound)
        }

        /// Reads one element with `tag`: its content range.
        mutating func read(_ tag: UInt8) -> Range<Int>? {
            guard at + 2 <= end, d[at] == tag else { return nil }
            var i = at + 1
            var len = Int(d[i])
            i += 1
            if len & 0x80 != 0 {
                let n = len & 0x7f
                guard n >= 1, n <= 3, i + n <= end else { return nil }
                len = 0
                for _ in 0..<n {
                    len = len << 8 | Int(d[i])
                    i += 1
                }
                guard len >= 0x80 else { return nil }  // DER: the short form where it fits
            }
            guard len <= end - i else { return nil }
            at = i + len
            return i..<(i + len)
        }
    }

    /// The DER inside a PEM "PRIVATE KEY" block, or nil.
    private static func pem(_ input: [UInt8]) -> [UInt8]? {
        let begin = Array("-----BEGIN PRIVATE KEY-----".utf8)
        let endMarker = Array("-----END PRIVATE KEY-----".utf8)
        guard input.count < 1 << 16, let b = find(begin, in: input, from: 0) else { return nil }
        let start = b + begin.count
        guard let e = find(endMarker, in: input, from: start) else { return nil }
        var text = [UInt8]()
        defer { SecureBytes.cleanse(&text) }
        text.reserveCapacity(e - start)
        for c in input[start..<e] where c != 0x0a && c != 0x0d && c != 0x20 && c != 0x09 { text.append(c) }
        guard !text.isEmpty, text.count % 4 == 0 else { return nil }
        var out = ByteArrays.zeros(count: text.count / 4 * 3)
        let n = text.withUnsafeBufferPointer { t in
            out.withUnsafeMutableBufferPointer { EVP_DecodeBlock($0.baseAddress, t.baseAddress, Int32(t.count)) }
        }
        guard n >= 0 else {
            SecureBytes.cleanse(&out)
            return nil
        }
        let pad = text.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard pad <= 2 else {
            SecureBytes.cleanse(&out)
            return nil
        }
        out.removeLast(pad)
        return out
    }

    private static func find(_ needle: [UInt8], in hay: [UInt8], from: Int) -> Int? {
        guard hay.count >= needle.count, from <= hay.count - needle.count else { return nil }
        for i in from...(hay.count - needle.count)
        where hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle { return i }
        return nil
    }
}

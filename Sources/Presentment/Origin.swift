#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// A requesting origin in its ASCII serialization (`scheme://host[:port]`, WHATWG URL §4.2) exactly as
/// a browser writes it: scheme and host in lower case, default port dropped, an IPv6 host in brackets
/// as the URL standard serializes it (hex pieces only: `[::ffff:7f00:1]`), an IPv4 host given in any
/// numeric form a browser accepts (`127.1`, `0x7f.0.0.1`, `2130706433`) in dotted decimal, no path, no
/// trailing slash. The exact string goes into the SessionTranscript.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// The WHATWG serialization (`scheme://host[:port]`), exactly as bound into the SessionTranscript.
    public let serialized: String

    /// The serialized origin.
    public var description: String { serialized }

    /// Parses and normalizes an origin given as a string (`https://Example.com:443/` →
    /// `https://example.com`). Refuses userinfo, query, fragment, any path other than `/`, whitespace,
    /// control characters, non-ASCII hosts (give IDNs as A-labels), and schemes other than http/https —
    /// except `android:apk-key-hash:<base64>` app origins when `allowAppOrigins` is set.
    public init(_ input: String, allowAppOrigins: Bool = false) throws(PresentmentError) {
        var text = input
        let result: Result<String?, PresentmentError> = text.withUTF8 { u in
            Result { () throws(PresentmentError) -> String? in try Self.serialize(u, allowAppOrigins: allowAppOrigins) }
        }
        // nil: the input is already in serialized form, and is kept as is (no copy).
        serialized = try result.get() ?? text
    }

    // unsafe (every parse function below): the origin's UTF-8 bytes as views, read byte by byte with no
    // String operations; every index is checked against the view's count before it is read.
    private static func lower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5a ? c | 0x20 : c }

    /// The byte-level parser behind `init`, no Foundation string operations. Returns nil when the input
    /// already is the serialization (the usual case: nothing is allocated). The usual input, an https
    /// origin already serialized with a DNS name, is recognised in one pass (`isSerializedHTTPSName`);
    /// anything else goes through `parse`.
    private static func serialize(_ u: UnsafeBufferPointer<UInt8>, allowAppOrigins: Bool) throws(PresentmentError)
        -> String?
    {
        if isSerializedHTTPSName(u) { return nil }
        return try parse(u, allowAppOrigins: allowAppOrigins)
    }

    /// Whether `u` is `https://` and a lower-case DNS name of labels of `a`–`z`, `0`–`9` and `-`
    /// separated by single dots, at most 253 bytes, its last label starting with a letter (so not a
    /// number: no IPv4 reading applies, WHATWG §3.5), with no port, path, query or fragment. `parse`
    /// accepts every such input unchanged (it returns nil for it: pinned by a test); this is only the
    /// shortcut for it.
    static func isSerializedHTTPSName(_ u: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = u.count
        guard n > 8, n - 8 <= 253, startsWith("https://", u, ignoringCase: false) else { return false }
        var labelStart = 8
        for k in 8..<n {
            let c = u[k]
            if c == UInt8(ascii: ".") {
                guard k > labelStart else { return false }  // an empty label (leading, or two dots)
                labelStart = k + 1
            } else if !((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x2d) {
                return false
            }
        }
        return labelStart < n && u[labelStart] >= 0x61 && u[labelStart] <= 0x7a
    }

    /// The full parser: every scheme and host form, normalized as a browser serializes it.
    static func parse(_ u: UnsafeBufferPointer<UInt8>, allowAppOrigins: Bool) throws(PresentmentError) -> String? {
        guard !u.isEmpty else { throw PresentmentError(OriginRule.empty) }
        guard u.count <= 2048 else { throw PresentmentError(OriginRule.tooLong) }
        for c in u where c <= 0x20 || c >= 0x7f {
            throw PresentmentError(OriginRule.characters)
        }
        func hasPrefix(_ p: StaticString) -> Bool { startsWith(p, u, ignoringCase: true) }
        if hasPrefix("android:apk-key-hash:") {
            guard allowAppOrigins else { throw PresentmentError(OriginRule.appOriginsDisabled) }
            let hash = u[21...]
            guard !hash.isEmpty,
                hash.allSatisfy({ c in
                    (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x2b
                        || c == 0x2f || c == 0x2d || c == 0x5f || c == 0x3d
                })
            else { throw PresentmentError(OriginRule.appHashNotBase64) }
            // Kept as given unless the scheme prefix was not in lower case.
            return startsWith("android:apk-key-hash:", u, ignoringCase: false)
                ? nil : "android:apk-key-hash:" + String(decoding: hash, as: UTF8.self)
        }
        let https: Bool
        var i: Int
        if hasPrefix("https://") {
            https = true
            i = 8
        } else if hasPrefix("http://") {
            https = false
            i = 7
        } else {
            var k = 0
            while k < u.count, u[k] != UInt8(ascii: ":") { k += 1 }
            if k + 2 < u.count, u[k + 1] == UInt8(ascii: "/"), u[k + 2] == UInt8(ascii: "/") {
                throw PresentmentError(OriginRule.scheme)
            }
            throw PresentmentError(OriginRule.noScheme)
        }
        // Authority: up to the first '/', '?' or '#'.
        let authStart = i
        while i < u.count, u[i] != UInt8(ascii: "/"), u[i] != UInt8(ascii: "?"), u[i] != UInt8(ascii: "#") { i += 1 }
        let authEnd = i
        if i < u.count {
            switch u[i] {
            case UInt8(ascii: "?"): throw PresentmentError(OriginRule.query)
            case UInt8(ascii: "#"): throw PresentmentError(OriginRule.fragment)
            default:
                guard i == u.count - 1 else {
                    for c in u[i...] {
                        if c == UInt8(ascii: "?") { throw PresentmentError(OriginRule.query) }
                        if c == UInt8(ascii: "#") { throw PresentmentError(OriginRule.fragment) }
                    }
                    throw PresentmentError(OriginRule.path)
                }
            }
        }
        guard authEnd > authStart else { throw PresentmentError(OriginRule.noHost) }
        let auth = u[authStart..<authEnd]
        if auth.contains(UInt8(ascii: "@")) { throw PresentmentError(OriginRule.userinfo) }
        if auth.contains(UInt8(ascii: "\\")) { throw PresentmentError(OriginRule.backslash) }

        // The host: an IPv6 literal, an IPv4 address in any of the numeric forms browsers accept, or a
        // domain checked in place (its serialization is its lower-case form, `u[auth.startIndex..<hostEnd]`).
        // All three follow the WHATWG URL standard's host parser and serializer (§3.5, §3.6).
        var host: String?
        var hostEnd = auth.startIndex
        // Whether the input needs rewriting (upper case, a default port, a trailing slash).
        var rewritten = authEnd < u.count || !startsWith(https ? "https://" : "http://", u, ignoringCase: false)
        var portStart: Int?
        if auth.first == UInt8(ascii: "[") {
            guard let close = auth.firstIndex(of: UInt8(ascii: "]")) else {
                throw PresentmentError(OriginRule.ipv6Unterminated)
            }
            guard let address = parseIPv6(UnsafeBufferPointer(rebasing: u[(auth.startIndex + 1)..<close])) else {
                throw PresentmentError(OriginRule.ipv6Invalid)
            }
            host = "[" + serializeIPv6(address) + "]"
            rewritten = true
            if close + 1 < authEnd {
                guard u[close + 1] == UInt8(ascii: ":") else {
                    throw PresentmentError(OriginRule.ipv6Trailing)
                }
                portStart = close + 2
            }
        } else {
            var k = auth.startIndex
            var previous: UInt8 = UInt8(ascii: ".")
            while k < authEnd, u[k] != UInt8(ascii: ":") {
                let c = lower(u[k])
                guard (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x2d || c == 0x2e || c == 0x5f else {
                    throw PresentmentError(OriginRule.hostCharacters)
                }
                // A leading dot, or two in a row (`previous` starts as a dot).
                if c == UInt8(ascii: "."), previous == UInt8(ascii: ".") {
                    throw PresentmentError(OriginRule.hostEmptyLabel)
                }
                if c != u[k] { rewritten = true }
                previous = c
                k += 1
            }
            hostEnd = k
            guard hostEnd > auth.startIndex, hostEnd - auth.startIndex <= 253 else {
                throw PresentmentError(OriginRule.hostLength)
            }
            let name = UnsafeBufferPointer(rebasing: u[auth.startIndex..<hostEnd])
            if endsInANumber(name) {
                // `127.1`, `0x7f.0.0.1`, `2130706433` and `127.0.0.1.` are all 127.0.0.1 to a browser.
                guard let v4 = parseIPv4(name) else {
                    throw PresentmentError(OriginRule.hostNumberNotIPv4)
                }
                let dotted = "\(v4 >> 24).\((v4 >> 16) & 0xff).\((v4 >> 8) & 0xff).\(v4 & 0xff)"
                if !dotted.utf8.elementsEqual(name) {
                    host = dotted
                    rewritten = true
                }
            }
            if k < authEnd { portStart = k + 1 }
        }
        var port: Int?
        if let ps = portStart, ps < authEnd {
            let digits = u[ps..<authEnd]
            guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw PresentmentError(OriginRule.port)
            }
            // Leading zeros are allowed (WHATWG §4.4 port state); the value must fit in 16 bits.
            let significant = digits.drop { $0 == 0x30 }
            guard significant.count <= 5 else {
                throw PresentmentError(OriginRule.port)
            }
            let n = significant.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard n <= 65535 else { throw PresentmentError(OriginRule.port) }
            port = n
        }
        let keepPort = port.map { $0 != (https ? 443 : 80) } ?? false
        // An empty port (`host:`), a default port, or leading zeros change the text.
        if portStart != nil && (!keepPort || u[portStart!] == UInt8(ascii: "0")) { rewritten = true }
        guard rewritten else { return nil }
        var out = https ? "https://" : "http://"
        if let host {
            out += host
        } else {
            out += String(decoding: u[auth.startIndex..<hostEnd].lazy.map(lower), as: UTF8.self)
        }
        if keepPort, let p = port { out += ":\(p)" }
        return out
    }

    /// Whether `u` starts with the lower-case ASCII `p`, exactly or ignoring ASCII case.
    private static func startsWith(_ p: StaticString, _ u: UnsafeBufferPointer<UInt8>, ignoringCase: Bool) -> Bool {
        let n = p.utf8CodeUnitCount
        guard u.count >= n else { return false }
        for k in 0..<n where (ignoringCase ? lower(u[k]) : u[k]) != p.utf8Start[k] { return false }
        return true
    }

    /// Normalizes an origin given as a URL. Its text form goes through exactly the rules of
    /// `init(_:allowAppOrigins:)`: a URL with a path other than `/`, a query, a fragment or userinfo is
    /// refused rather than trimmed.
    public init(url: URL, allowAppOrigins: Bool = false) throws(PresentmentError) {
        try self.init(url.absoluteString, allowAppOrigins: allowAppOrigins)
    }

    // MARK: WHATWG URL standard, §3.5 host parsing and §3.6 host serializing

    /// The IPv6 parser: eight 16-bit pieces, or nil on failure. Hex pieces of up to four digits, one
    /// `::`, and a trailing dotted IPv4 part (four decimal numbers without leading zeros); no zone.
    static func parseIPv6(_ input: UnsafeBufferPointer<UInt8>) -> [UInt16]? {
        var address = [UInt16](repeating: 0, count: 8)
        var pieceIndex = 0
        var compress: Int?
        var p = 0
        let n = input.count
        func hex(_ c: UInt8) -> Int? {
            switch c {
            case 0x30...0x39: Int(c - 0x30)
            case 0x41...0x46: Int(c - 0x41 + 10)
            case 0x61...0x66: Int(c - 0x61 + 10)
            default: nil
            }
        }
        func digit(_ c: UInt8) -> Int? { c >= 0x30 && c <= 0x39 ? Int(c - 0x30) : nil }
        guard n > 0 else { return nil }
        if input[0] == UInt8(ascii: ":") {
            guard n > 1, input[1] == UInt8(ascii: ":") else { return nil }
            p = 2
            pieceIndex = 1
            compress = 1
        }
        while p < n {
            guard pieceIndex != 8 else { return nil }
            if input[p] == UInt8(ascii: ":") {
                guard compress == nil else { return nil }
                p += 1
                pieceIndex += 1
                compress = pieceIndex
                continue
            }
            var value = 0
            var length = 0
            while length < 4, p < n, let h = hex(input[p]) {
                value = value * 16 + h
                p += 1
                length += 1
            }
            if p < n, input[p] == UInt8(ascii: ".") {
                // An IPv4 address in the last two pieces.
                guard length != 0 else { return nil }
                p -= length
                guard pieceIndex <= 6 else { return nil }
                var numbersSeen = 0
                while p < n {
                    var piece: Int?
                    if numbersSeen > 0 {
                        guard input[p] == UInt8(ascii: "."), numbersSeen < 4 else { return nil }
                        p += 1
                    }
                    guard p < n, digit(input[p]) != nil else { return nil }
                    while p < n, let d = digit(input[p]) {
                        if let current = piece {
                            guard current != 0 else { return nil }
                            piece = current * 10 + d
                        } else {
                            piece = d
                        }
                        guard piece! <= 255 else { return nil }
                        p += 1
                    }
                    address[pieceIndex] = address[pieceIndex] &* 0x100 &+ UInt16(piece!)
                    numbersSeen += 1
                    if numbersSeen == 2 || numbersSeen == 4 { pieceIndex += 1 }
                }
                guard numbersSeen == 4 else { return nil }
                break
            } else if p < n, input[p] == UInt8(ascii: ":") {
                p += 1
                guard p < n else { return nil }
            } else if p < n {
                return nil
            }
            address[pieceIndex] = UInt16(value)
            pieceIndex += 1
        }
        if let compress {
            var swaps = pieceIndex - compress
            pieceIndex = 7
            while pieceIndex != 0 && swaps > 0 {
                address.swapAt(pieceIndex, compress + swaps - 1)
                pieceIndex -= 1
                swaps -= 1
            }
        } else if pieceIndex != 8 {
            return nil
        }
        return address
    }

    /// The IPv6 serializer: lower-case hex pieces without leading zeros, the first longest run of two
    /// or more zero pieces as `::`, never a dotted IPv4 part (`::ffff:7f00:1`, not `::ffff:127.0.0.1`).
    static func serializeIPv6(_ address: [UInt16]) -> String {
        var compress: Int?
        var best = 1
        var i = 0
        while i < 8 {
            var j = i
            while j < 8 && address[j] == 0 { j += 1 }
            if j - i > best {
                best = j - i
                compress = i
            }
            i = j == i ? i + 1 : j
        }
        var out = ""
        var ignoreZero = false
        for k in 0..<8 {
            if ignoreZero && address[k] == 0 { continue }
            ignoreZero = false
            if compress == k {
                out += k == 0 ? "::" : ":"
                ignoreZero = true
                continue
            }
            out += String(address[k], radix: 16)
            if k != 7 { out += ":" }
        }
        return out
    }

    /// The IPv4 number parser: `0x`/`0X` hexadecimal, a leading `0` octal, else decimal; nil on
    /// failure. `0x` alone is 0. Values past 2^32 are clamped (they fail the range check anyway).
    static func parseIPv4Number(_ part: ArraySlice<UInt8>) -> UInt64? {
        guard !part.isEmpty else { return nil }
        var s = part[...]
        var radix: UInt64 = 10
        if s.count >= 2, s.first == UInt8(ascii: "0"), s[s.index(after: s.startIndex)] | 0x20 == UInt8(ascii: "x") {
            radix = 16
            s = s.dropFirst(2)
        } else if s.count >= 2, s.first == UInt8(ascii: "0") {
            radix = 8
            s = s.dropFirst()
        }
        var v: UInt64 = 0
        for c in s {
            let d: UInt64
            switch c {
            case 0x30...0x39: d = UInt64(c - 0x30)
            case 0x61...0x66, 0x41...0x46: d = UInt64((c | 0x20) - 0x61 + 10)
            default: return nil
            }
            guard d < radix else { return nil }
            v = min(v * radix + d, 1 << 40)
        }
        return v
    }

    /// The ends-in-a-number checker: whether the last label (a trailing empty label ignored) is all
    /// decimal digits or a hexadecimal `0x` number, which makes the host an IPv4 address or invalid.
    static func endsInANumber(_ host: UnsafeBufferPointer<UInt8>) -> Bool {
        // The last label, found by scanning back (no allocation: every origin goes through here).
        var end = host.count
        if end > 0, host[end - 1] == UInt8(ascii: ".") {
            guard end > 1 else { return false }
            end -= 1
        }
        var start = end
        while start > 0, host[start - 1] != UInt8(ascii: ".") { start -= 1 }
        let last = UnsafeBufferPointer(rebasing: host[start..<end])
        guard !last.isEmpty else { return false }
        if last.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return true }
        // `0x` followed by hex digits only (what the IPv4 number parser accepts with radix 16).
        guard last.count >= 2, last[0] == UInt8(ascii: "0"), last[1] | 0x20 == UInt8(ascii: "x") else { return false }
        return last.dropFirst(2).allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }
    }

    /// The IPv4 parser: one to four numbers separated by dots (a trailing dot allowed), each but the
    /// last below 256, the last filling the remaining bytes. Nil on failure.
    static func parseIPv4(_ host: UnsafeBufferPointer<UInt8>) -> UInt32? {
        var parts = host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if parts.last?.isEmpty == true, parts.count > 1 { parts.removeLast() }
        guard parts.count <= 4 else { return nil }
        var numbers = [UInt64]()
        for part in parts {
            guard let v = parseIPv4Number(ArraySlice(part)) else { return nil }
            numbers.append(v)
        }
        guard numbers.dropLast().allSatisfy({ $0 <= 255 }) else { return nil }
        guard numbers.last! < UInt64(1) << (8 * (5 - numbers.count)) else { return nil }
        var ipv4 = numbers.last!
        for (i, v) in numbers.dropLast().enumerated() { ipv4 += v << (8 * (3 - i)) }
        return UInt32(ipv4)
    }
}

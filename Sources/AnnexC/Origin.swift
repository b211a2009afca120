#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A requesting origin in its ASCII serialization (`scheme://host[:port]`, WHATWG URL §4.2): scheme and
/// host in lower case, default port dropped, IPv6 in brackets and in canonical form, no path, no
/// trailing slash. The exact string goes into the SessionTranscript.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// The serialized origin.
    public let serialized: String

    /// The serialized origin.
    public var description: String { serialized }

    /// Parses and normalizes an origin given as a string (`https://Example.com:443/` →
    /// `https://example.com`). Refuses userinfo, query, fragment, any path other than `/`, whitespace,
    /// control characters, non-ASCII hosts (give IDNs as A-labels), and schemes other than http/https —
    /// except `android:apk-key-hash:<base64>` app origins when `allowAppOrigins` is set.
    public init(_ input: String, allowAppOrigins: Bool = false) throws(AnnexCError) {
        var text = input
        let result: Result<String?, AnnexCError> = text.withUTF8 { u in
            Result { () throws(AnnexCError) -> String? in try Self.serialize(u, allowAppOrigins: allowAppOrigins) }
        }
        // nil: the input is already in serialized form, and is kept as is (no copy).
        serialized = try result.get() ?? text
    }

    private static func lower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5a ? c | 0x20 : c }

    /// The byte-level parser behind `init`: one pass, no Foundation string operations. Returns nil
    /// when the input already is the serialization (the usual case: nothing is allocated).
    private static func serialize(_ u: UnsafeBufferPointer<UInt8>, allowAppOrigins: Bool) throws(AnnexCError) -> String? {
        guard !u.isEmpty else { throw AnnexCError(.missingOrigin, "origin is empty") }
        guard u.count <= 2048 else { throw AnnexCError(.invalidOrigin, "origin longer than 2048 bytes") }
        for c in u where c <= 0x20 || c >= 0x7f {
            throw AnnexCError(.invalidOrigin, "origin contains whitespace, control or non-ASCII characters")
        }
        func hasPrefix(_ p: StaticString) -> Bool { startsWith(p, u, ignoringCase: true) }
        if hasPrefix("android:apk-key-hash:") {
            guard allowAppOrigins else { throw AnnexCError(.invalidOrigin, "app origins are not enabled") }
            let hash = u[21...]
            guard !hash.isEmpty, hash.allSatisfy({ c in
                (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x2b || c == 0x2f || c == 0x2d || c == 0x5f || c == 0x3d
            }) else { throw AnnexCError(.invalidOrigin, "app origin hash is not base64") }
            // Kept as given unless the scheme prefix was not in lower case.
            return startsWith("android:apk-key-hash:", u, ignoringCase: false) ? nil : "android:apk-key-hash:" + String(decoding: hash, as: UTF8.self)
        }
        let https: Bool
        var i: Int
        if hasPrefix("https://") { https = true; i = 8 } else if hasPrefix("http://") { https = false; i = 7 } else {
            var k = 0
            while k < u.count, u[k] != UInt8(ascii: ":") { k += 1 }
            if k + 2 < u.count, u[k + 1] == UInt8(ascii: "/"), u[k + 2] == UInt8(ascii: "/") {
                throw AnnexCError(.invalidOrigin, "origin scheme is not http or https")
            }
            throw AnnexCError(.invalidOrigin, "origin has no http or https scheme")
        }
        // Authority: up to the first '/', '?' or '#'.
        let authStart = i
        while i < u.count, u[i] != UInt8(ascii: "/"), u[i] != UInt8(ascii: "?"), u[i] != UInt8(ascii: "#") { i += 1 }
        let authEnd = i
        if i < u.count {
            switch u[i] {
            case UInt8(ascii: "?"): throw AnnexCError(.invalidOrigin, "origin has a query")
            case UInt8(ascii: "#"): throw AnnexCError(.invalidOrigin, "origin has a fragment")
            default:
                guard i == u.count - 1 else {
                    for c in u[i...] {
                        if c == UInt8(ascii: "?") { throw AnnexCError(.invalidOrigin, "origin has a query") }
                        if c == UInt8(ascii: "#") { throw AnnexCError(.invalidOrigin, "origin has a fragment") }
                    }
                    throw AnnexCError(.invalidOrigin, "origin has a path")
                }
            }
        }
        guard authEnd > authStart else { throw AnnexCError(.invalidOrigin, "origin has no host") }
        let auth = u[authStart..<authEnd]
        if auth.contains(UInt8(ascii: "@")) { throw AnnexCError(.invalidOrigin, "origin has userinfo") }
        if auth.contains(UInt8(ascii: "\\")) { throw AnnexCError(.invalidOrigin, "origin has a backslash") }

        // The host: an IPv6 literal re-serialized in canonical form, or a name checked in place (its
        // serialization is its lower-case form, `u[auth.startIndex..<hostEnd]`).
        var ipv6Host: String?
        var hostEnd = auth.startIndex
        // Whether the input needs rewriting (upper case, a default port, a trailing slash).
        var rewritten = authEnd < u.count || !startsWith(https ? "https://" : "http://", u, ignoringCase: false)
        var portStart: Int?
        if auth.first == UInt8(ascii: "[") {
            guard let close = auth.firstIndex(of: UInt8(ascii: "]")) else { throw AnnexCError(.invalidOrigin, "unterminated IPv6 host") }
            let literal = String(decoding: u[(auth.startIndex + 1)..<close], as: UTF8.self)
            guard let canonical = canonicalIPv6(literal) else { throw AnnexCError(.invalidOrigin, "invalid IPv6 host") }
            ipv6Host = "[" + canonical + "]"
            rewritten = true
            if close + 1 < authEnd {
                guard u[close + 1] == UInt8(ascii: ":") else { throw AnnexCError(.invalidOrigin, "junk after IPv6 host") }
                portStart = close + 2
            }
        } else {
            var k = auth.startIndex
            var previous: UInt8 = UInt8(ascii: ".")
            while k < authEnd, u[k] != UInt8(ascii: ":") {
                let c = lower(u[k])
                guard (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x2d || c == 0x2e || c == 0x5f else {
                    throw AnnexCError(.invalidOrigin, "origin host has characters outside [a-z0-9-._]")
                }
                // A leading dot, or two in a row (`previous` starts as a dot).
                if c == UInt8(ascii: "."), previous == UInt8(ascii: ".") { throw AnnexCError(.invalidOrigin, "origin host has an empty label") }
                if c != u[k] { rewritten = true }
                previous = c
                k += 1
            }
            hostEnd = k
            guard hostEnd > auth.startIndex, hostEnd - auth.startIndex <= 253 else { throw AnnexCError(.invalidOrigin, "origin host is empty or too long") }
            if k < authEnd { portStart = k + 1 }
        }
        var port: Int?
        if let ps = portStart, ps < authEnd {
            let digits = u[ps..<authEnd]
            guard digits.count <= 5, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw AnnexCError(.invalidOrigin, "origin port is not a number 0-65535")
            }
            let n = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard n <= 65535 else { throw AnnexCError(.invalidOrigin, "origin port is not a number 0-65535") }
            port = n
        }
        let keepPort = port.map { $0 != (https ? 443 : 80) } ?? false
        // An empty port (`host:`), a default port, or leading zeros change the text.
        if portStart != nil && (!keepPort || u[portStart!] == UInt8(ascii: "0")) { rewritten = true }
        guard rewritten else { return nil }
        var out = https ? "https://" : "http://"
        if let ipv6Host { out += ipv6Host } else { out += String(decoding: u[auth.startIndex..<hostEnd].lazy.map(lower), as: UTF8.self) }
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
    public init(url: URL, allowAppOrigins: Bool = false) throws(AnnexCError) {
        try self.init(url.absoluteString, allowAppOrigins: allowAppOrigins)
    }

    /// RFC 5952 canonical text of an IPv6 address (what the WHATWG serializer produces), via inet_pton/ntop.
    static func canonicalIPv6(_ s: String) -> String? {
        guard !s.isEmpty, s.utf8.count <= 45, !s.contains("%") else { return nil }
        var addr = in6_addr()
        guard inet_pton(AF_INET6, s, &addr) == 1 else { return nil }
        var buf = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &addr, &buf, socklen_t(buf.count)) != nil else { return nil }
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
    }
}

import Foundation
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
        guard !input.isEmpty else { throw AnnexCError(.missingOrigin, "origin is empty") }
        guard input.utf8.count <= 2048 else { throw AnnexCError(.invalidOrigin, "origin longer than 2048 bytes") }
        guard input.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw AnnexCError(.invalidOrigin, "origin contains whitespace, control or non-ASCII characters")
        }
        let lower = input.lowercased()
        if lower.hasPrefix("android:apk-key-hash:") {
            guard allowAppOrigins else { throw AnnexCError(.invalidOrigin, "app origins are not enabled") }
            let hash = input.dropFirst("android:apk-key-hash:".count)
            guard !hash.isEmpty, hash.utf8.allSatisfy({ c in
                (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x2b || c == 0x2f || c == 0x2d || c == 0x5f || c == 0x3d
            }) else { throw AnnexCError(.invalidOrigin, "app origin hash is not base64") }
            serialized = "android:apk-key-hash:" + hash
            return
        }
        guard let schemeEnd = lower.range(of: "://") else { throw AnnexCError(.invalidOrigin, "origin has no scheme") }
        let scheme = String(lower[..<schemeEnd.lowerBound])
        guard scheme == "https" || scheme == "http" else { throw AnnexCError(.invalidOrigin, "origin scheme is not http or https") }
        var rest = Substring(input[schemeEnd.upperBound...])
        if rest.contains("?") { throw AnnexCError(.invalidOrigin, "origin has a query") }
        if rest.contains("#") { throw AnnexCError(.invalidOrigin, "origin has a fragment") }
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...] == "/" else { throw AnnexCError(.invalidOrigin, "origin has a path") }
            rest = rest[..<slash]
        }
        if rest.contains("@") { throw AnnexCError(.invalidOrigin, "origin has userinfo") }
        if rest.contains("\\") { throw AnnexCError(.invalidOrigin, "origin has a backslash") }
        guard !rest.isEmpty else { throw AnnexCError(.invalidOrigin, "origin has no host") }

        var host: String
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw AnnexCError(.invalidOrigin, "unterminated IPv6 host") }
            let literal = String(rest[rest.index(after: rest.startIndex)..<close])
            guard let canonical = Self.canonicalIPv6(literal) else { throw AnnexCError(.invalidOrigin, "invalid IPv6 host") }
            host = "[" + canonical + "]"
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw AnnexCError(.invalidOrigin, "junk after IPv6 host") }
                portText = after.dropFirst()
            }
        } else {
            let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { throw AnnexCError(.invalidOrigin, "origin host has more than one ':'") }
            host = parts[0].lowercased()
            if parts.count == 2 { portText = parts[1] }
            guard !host.isEmpty, host.utf8.count <= 253 else { throw AnnexCError(.invalidOrigin, "origin host is empty or too long") }
            guard host.utf8.allSatisfy({ c in (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x2d || c == 0x2e || c == 0x5f }) else {
                throw AnnexCError(.invalidOrigin, "origin host has characters outside [a-z0-9-._]")
            }
            guard !host.hasPrefix("."), !host.contains("..") else { throw AnnexCError(.invalidOrigin, "origin host has an empty label") }
        }
        var port: Int?
        if let p = portText, !p.isEmpty {
            guard p.utf8.count <= 5, p.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(p), n <= 65535 else {
                throw AnnexCError(.invalidOrigin, "origin port is not a number 0-65535")
            }
            port = n
        }
        let defaultPort = scheme == "https" ? 443 : 80
        if let p = port, p != defaultPort {
            serialized = "\(scheme)://\(host):\(p)"
        } else {
            serialized = "\(scheme)://\(host)"
        }
    }

    /// Normalizes an origin given as a URL, from its components (never `absoluteString`).
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

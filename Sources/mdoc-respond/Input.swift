#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR
#if canImport(Glibc)
    import Glibc
#endif

/// Reads a file or standard input (`-`), bounded in size.
enum Input {
    static let maxBytes = 64 << 20

    /// Reads a file, or standard input for `-`, never holding more than `limit` + 1 bytes: a larger
    /// input is refused as soon as it shows itself (`tooLarge`, or an I/O error by default), so a
    /// huge or endless input costs bounded memory.
    static func read(_ path: String, limit: Int = maxBytes, tooLarge: (() -> Never)? = nil) -> [UInt8] {
        // Errors name the operator's own file and the system's reason (never the content).
        let name = path == "-" ? "standard input" : safe(path)
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { fail(Exit.io, "io", "cannot open \(name): \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }
        var st = stat()
        if fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFDIR { fail(Exit.io, "io", "\(name) is a directory") }
        var bytes = [UInt8]()
        // Read straight into uninitialized chunks: a regular file in one chunk of its size (plus the
        // byte that shows it grew), a pipe in 16 KiB ones. (A zero-filled 64 KiB buffer cost a process
        // 16 page faults for a request of a few kilobytes.)
        // The size is clamped to the limit before the one byte is added (a sparse file may claim ~2^63).
        let isFile = st.st_mode & S_IFMT == S_IFREG
        var chunk = isFile ? min(max(Int(clamping: st.st_size), 0), limit) + 1 : 16384
        while true {
            let want = min(chunk, limit + 1 - bytes.count)
            var n = 0
            let part = [UInt8](unsafeUninitializedCapacity: want) { buf, initialized in
                n = Glibc.read(fd, buf.baseAddress, want)
                initialized = max(n, 0)
            }
            if n < 0 {
                if errno == EINTR { continue }
                fail(Exit.io, "io", "cannot read \(name): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            if bytes.isEmpty { bytes = part } else { bytes.append(contentsOf: part) }
            chunk = 16384
            if bytes.count > limit {
                if let tooLarge { tooLarge() }
                fail(Exit.io, "io", "\(name) is larger than \(limit) bytes")
            }
        }
        return bytes
    }

    /// Parses hex text (no separators).
    static func hexBytes(_ s: String) -> [UInt8]? {
        let u = Array(s.utf8)
        guard u.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        var i = 0
        while i < u.count {
            guard let b = UInt8(String(decoding: u[i..<(i + 2)], as: UTF8.self), radix: 16) else { return nil }
            out.append(b)
            i += 2
        }
        return out
    }

    /// A certificate from PEM or DER bytes.
    static func certificate(_ bytes: [UInt8]) -> Certificate {
        var der = bytes
        let text = String(decoding: bytes, as: UTF8.self)
        if text.contains("-----BEGIN CERTIFICATE-----") {
            let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
            guard let d = Data(base64Encoded: body) else {
                fail(Exit.refused, "invalidCertificate", "PEM certificate is not base64")
            }
            der = Array(d)
        }
        guard let c = try? Certificate(der: der) else {
            fail(Exit.refused, "invalidCertificate", "not an X.509 certificate")
        }
        return c
    }

    /// Accepts binary CBOR or hex text (whitespace ignored).
    static func cborBytes(_ raw: [UInt8], forceHex: Bool) -> [UInt8] {
        let hexDigits = Set(Array("0123456789abcdefABCDEF".utf8))
        let stripped = raw.filter { $0 != 0x20 && $0 != 0x0a && $0 != 0x0d && $0 != 0x09 }
        let looksHex = !stripped.isEmpty && stripped.count % 2 == 0 && stripped.allSatisfy { hexDigits.contains($0) }
        guard forceHex || looksHex else { return raw }
        guard looksHex else { fail(Exit.refused, "hex", "input is not valid hex") }
        var out = [UInt8]()
        out.reserveCapacity(stripped.count / 2)
        func v(_ c: UInt8) -> UInt8 { c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10 }
        var i = 0
        while i < stripped.count {
            out.append(v(stripped[i]) << 4 | v(stripped[i + 1]))
            i += 2
        }
        return out
    }
}

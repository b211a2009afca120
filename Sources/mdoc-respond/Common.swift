import DigitalCredentials
#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR
import PKCS11

/// Minimal option parsing: `--name value`, `--flag`, positionals.
struct Options {
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []

    init(_ args: [String], flags known: Set<String>, help: String) {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "-h" || a == "--help" {
                print(help)
                exit(Exit.ok)
            }
            if a.hasPrefix("--"), let eq = a.firstIndex(of: "=") {
                // --option=value (GNU style): the value is everything after the first '='.
                let name = String(a[..<eq])
                guard !known.contains(name) else { fail(Exit.usage, "usage", "\(name) takes no value; see --help") }
                values[name, default: []].append(String(a[a.index(after: eq)...]))
            } else if a.hasPrefix("--") {
                if known.contains(a) {
                    flags.insert(a)
                } else {
                    guard i + 1 < args.count else { fail(Exit.usage, "usage", "\(a) needs a value; see --help") }
                    values[a, default: []].append(args[i + 1])
                    i += 1
                }
            } else {
                positionals.append(a)
            }
            i += 1
        }
    }

    func value(_ name: String) -> String? { values[name]?.last }
    func require(_ name: String) -> String {
        guard let v = value(name) else { fail(Exit.usage, "usage", "\(name) is required; see --help") }
        return v
    }
    func check(allowed: Set<String>) {
        for k in values.keys where !allowed.contains(k) { fail(Exit.usage, "usage", "unknown option \(k); see --help") }
    }
}

/// Where the built-in test data lives: `$MDOC_RESPOND_TESTVECTORS`; else beside an installed or packaged
/// binary (`<bin>/../share/mdoc-respond/test-vectors`, as the .deb lays it out, or
/// `<bin>/mdoc-respond-data/test-vectors`, as `dist/` does); else nowhere: no path compiled in at build
/// time is ever read (a binary copied elsewhere must not pick up a build checkout's files), and a
/// command that needs a context says to pass `--context`.
enum BuiltIn {
    /// One variable of the environment (`getenv`: building `ProcessInfo`'s dictionary of all of them
    /// costs more than a `respond` answers a request in).
    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// Found once per process; nil when there is none.
    static let testVectorsIfPresent: URL? = {
        if let e = environment("MDOC_RESPOND_TESTVECTORS"), !e.isEmpty {
            return URL(fileURLWithPath: e)
        }
        // /proc/self/exe reads as the binary's path with every link resolved by the kernel.
        var link = [UInt8](repeating: 0, count: 4096)
        let n = link.withUnsafeMutableBytes { readlink("/proc/self/exe", $0.baseAddress!, $0.count) }
        if n > 0, n < link.count, let slash = link[..<n].lastIndex(of: UInt8(ascii: "/")) {
            let bin = String(decoding: link[..<slash], as: UTF8.self)
            let prefix = bin.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(bin[..<$0]) } ?? ""
            for shipped in [prefix + "/share/mdoc-respond/test-vectors", bin + "/mdoc-respond-data/test-vectors"] {
                var st = stat()
                if stat(shipped + "/context/context.cbor", &st) == 0 { return URL(fileURLWithPath: shipped) }
            }
        }
        return nil
    }()

    /// The built-in test data, or a refusal naming what to pass.
    static var testVectors: URL {
        guard let url = testVectorsIfPresent else {
            fail(
                Exit.usage, "contextUnavailable",
                "no built-in test data here: pass --context DIR (or set MDOC_RESPOND_TESTVECTORS to a test-data directory)"
            )
        }
        return url
    }
    /// Paths are joined as text (`URL.appendingPathComponent`'s first use costs a process more than
    /// reading the context).
    static var contextDirectory: URL {
        URL(fileURLWithPath: testVectors.path + "/context", isDirectory: true)
    }

    /// The directories PKCS#11 modules may be loaded from: `MDOC_PKCS11_MODULE_DIRS` (absolute paths
    /// separated by `:`, replacing the list) or the system's PKCS#11 module directories.
    static var moduleDirectories: [String] {
        guard let e = environment("MDOC_PKCS11_MODULE_DIRS"), !e.isEmpty else {
            return PKCS11ModuleDirectories.system
        }
        return e.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
    }

    /// The key resolver for a context directory (file keys, and token keys from allowed modules).
    static func keyResolver(_ dir: URL, requirePrivateFiles: Bool = true) -> ContextKeyResolver {
        ContextKeyResolver(
            directory: dir, requirePrivateFiles: requirePrivateFiles, moduleDirectories: moduleDirectories)
    }

    /// Loads `--context DIR`, or the built-in test context (whose file modes a git checkout does not keep).
    static func context(_ dir: String?) -> CredentialContext {
        do {
            if let dir {
                let url = URL(fileURLWithPath: dir)
                guard let c = try CredentialContext.load(from: url, keyResolver: keyResolver(url)) else {
                    fail(Exit.io, "contextUnavailable", "no context.cbor in the given directory")
                }
                return c
            }
            guard let c = try CredentialContext.load(from: contextDirectory, requirePrivateFiles: false) else {
                fail(Exit.io, "contextUnavailable", "built-in test context missing (run: swift run mdoc-vectors)")
            }
            return c
        } catch {
            fail(Exit.io, error)
        }
    }

    /// The engine configuration of `--config` (the C ABI's configuration JSON, inline or `@FILE`, read
    /// by the facade's one reader) with the shorthand options applied over it: `--clock`, `--missing`,
    /// `--protocol`. The trust members narrow the context's stored policy.
    static func configuration(_ o: Options, over context: CredentialContext) -> DigitalCredentialsEngine.Configuration {
        var document = ConfigurationDocument()
        if let text = o.value("--config") {
            let json = text.hasPrefix("@") ? Input.read(String(text.dropFirst()), limit: 1 << 20) : Array(text.utf8)
            do { document = try ConfigurationDocument(json: json) } catch {
                fail(Exit.usage, "invalidConfiguration", "\(error.detail) (--config)")
            }
            // The C ABI's key members: the CLI takes --context and MDOC_PKCS11_MODULE_DIRS instead.
            for (member, given) in [
                ("keyDirectory", document.keyDirectory != nil),
                ("pkcs11ModuleDirectories", document.moduleDirectories != nil),
            ] where given {
                fail(
                    Exit.usage, "invalidConfiguration",
                    ConfigurationError(.notApplicable, member).detail
                        + " (--config: use --context and MDOC_PKCS11_MODULE_DIRS)")
            }
        }
        var configuration: DigitalCredentialsEngine.Configuration
        do { configuration = try document.configuration(over: context) } catch {
            fail(Exit.usage, "invalidConfiguration", "\(error.detail) (--config)")
        }
        if let text = o.value("--clock") {
            let clock = parseClock(text)
            configuration.clock = { clock }
            configuration.clockFixedForTesting = true
        }
        if let missing = o.value("--missing") {
            switch missing {
            case "omit": configuration.annexC.missingElements = .omit
            case "report": configuration.annexC.missingElements = .report
            default: fail(Exit.usage, "usage", "--missing must be omit or report")
            }
        }
        if let dir = o.value("--zk-dir") {
            guard dir.hasPrefix("/") else { fail(Exit.usage, "usage", "--zk-dir must be an absolute path") }
            configuration.zeroKnowledge = document.zeroKnowledge(directory: dir)
        }
        switch o.value("--protocol") {
        case nil, "auto": break
        case "annexc": configuration.protocols = [.annexC]
        case "openid4vp": configuration.protocols = [.openID4VP]
        default: fail(Exit.usage, "usage", "--protocol must be auto, annexc or openid4vp")
        }
        return configuration
    }

    static func certificate(_ name: String) -> Certificate {
        guard let d = FileManager.default.contents(atPath: testVectors.appendingPathComponent("pki/\(name).der").path),
            let c = try? Certificate(der: Array(d))
        else {
            fail(Exit.io, "io", "built-in test certificate \(name) missing")
        }
        return c
    }

    static func signer(_ name: String) -> SoftwareSigner {
        guard
            let d = FileManager.default.contents(
                atPath: testVectors.appendingPathComponent("pki/\(name).key.pem").path),
            let s = try? SoftwareSigner(encodedPrivateKey: Array(d))
        else { fail(Exit.io, "io", "built-in test key \(name) missing") }
        return s
    }
}

func parseClock(_ s: String?) -> Date {
    guard let s else { return Date() }
    guard let d = MdocDate.parseDateTime(s) else {
        fail(Exit.usage, "usage", "--clock must be an RFC 3339 date-time like 2026-06-01T00:00:00Z")
    }
    return d
}

/// Writes bytes to standard output.
func writeStdout<C: Collection<UInt8>>(_ bytes: C) {
    writeAll(1, Array(bytes))
}

/// This process's peak resident set in KiB (`VmHWM` of /proc/self/status: the high-water mark of
/// this program's own address space, not inherited from the parent), or nil where unavailable.
func peakMemoryKiB() -> Int? {
    let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buf = [UInt8](repeating: 0, count: 16384)
    var n = 0
    while n < buf.count {
        let r = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress! + n, $0.count - n) }
        if r < 0 && errno == EINTR { continue }
        if r <= 0 { break }
        n += r
    }
    for line in String(decoding: buf[0..<n], as: UTF8.self).split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
    }
    return nil
}

/// " peak memory N KiB" for a `--report` line, or "" where unavailable.
func peakMemoryNote() -> String { peakMemoryKiB().map { "; peak memory \($0) KiB" } ?? "" }

/// Writes a line to standard error.
func writeStderr(_ s: String) {
    writeAll(2, Array(s.utf8))
}

/// Writes every byte to a file descriptor, retrying short writes. False when a write fails.
@discardableResult
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { buf in
        var off = 0
        while off < buf.count {
            let n = Glibc.write(fd, buf.baseAddress! + off, buf.count - off)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            off += n
        }
        return true
    }
}

/// A decimal with a fixed number of fractional digits (no Foundation formatting).
func fixed(_ x: Double, _ decimals: Int) -> String {
    let scale = (0..<decimals).reduce(1.0) { a, _ in a * 10 }
    let v = (x * scale).rounded()
    let whole = Int(v / scale)
    if decimals == 0 { return String(whole) }
    let frac = String(Int(abs(v).truncatingRemainder(dividingBy: scale)))
    return "\(v < 0 && whole == 0 ? "-" : "")\(whole).\(String(repeating: "0", count: decimals - frac.count))\(frac)"
}

/// Left-aligned padding to `width` characters.
func padded(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}

/// Writes a command's output: `-` (or no path) is standard output; an existing character device or
/// pipe (`/dev/null`, a named pipe) is written in place, never replaced; anything else is a regular
/// file replaced all or nothing, 0600 from its first byte (`CredentialContext.replaceFile`). A path
/// that is a symbolic link is refused (it is not followed, and replacing it would surprise whoever
/// made it), as is a directory or socket. Exits with `Exit.io` on any failure, the destination as it was.
///
/// Binary output is not written to a terminal by default (it would scramble it): with no path and a
/// terminal on standard output, the command stops with a usage error saying how to get it; `--out -`
/// asks for it there anyway.
func writeOutput<B: Collection<UInt8>>(_ data: B, to path: String?, what: String = "output") {
    let bytes = Array(data)
    guard let path, path != "-" else {
        if path == nil, isatty(1) == 1, !isText(bytes) {
            fail(
                Exit.usage, "usage",
                "the \(what) is binary (\(bytes.count) bytes) and standard output is a terminal: pass --out FILE, redirect it, or --out - to write it here anyway"
            )
        }
        writeStdout(bytes)
        return
    }
    var st = stat()
    if lstat(path, &st) == 0 {
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            break
        case S_IFCHR, S_IFIFO:
            let fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { fail(Exit.io, "io", "cannot open the \(what) device or pipe") }
            // Examined again through the descriptor: a path swapped for a regular file since the lstat
            // would otherwise be overwritten in place, not replaced whole.
            var opened = stat()
            guard fstat(fd, &opened) == 0, opened.st_mode & S_IFMT == st.st_mode & S_IFMT else {
                close(fd)
                fail(Exit.io, "io", "the \(what) path changed while it was opened")
            }
            let written = writeAll(fd, bytes)
            guard close(fd) == 0, written else { fail(Exit.io, "io", "cannot write the \(what) device or pipe") }
            return
        case S_IFLNK:
            fail(
                Exit.io, "io", "the \(what) path is a symbolic link, which is not followed (use - for standard output)")
        default:
            fail(Exit.io, "io", "the \(what) path is not a regular file, a device or a pipe")
        }
    }
    do {
        try CredentialContext.replaceFile(bytes, atPath: path)
    } catch {
        fail(Exit.io, "io", "cannot write the \(what) file")
    }
}

/// Lowercase hex (MdocCBOR's one encoder).
func hex<C: Collection<UInt8>>(_ b: C) -> String { hexString(b) }

/// Text from a request or a certificate made safe for a terminal line: control characters (C0, DEL,
/// C1), backslashes and Unicode line/paragraph separators and bidirectional controls are escaped as
/// `\u{…}`, so such text can never start a line of its own, move the cursor or forge another line.
func safe(_ s: String) -> String {
    var out = ""
    out.reserveCapacity(s.utf8.count)
    for u in s.unicodeScalars {
        let v = u.value
        if v < 0x20 || v == 0x7f || (v >= 0x80 && v < 0xa0) || v == 0x5c || v == 0x2028 || v == 0x2029
            || (v >= 0x202a && v <= 0x202e) || (v >= 0x2066 && v <= 0x2069) || v == 0x200e || v == 0x200f
        {
            out += "\\u{\(String(v, radix: 16))}"
        } else {
            out.unicodeScalars.append(u)
        }
    }
    return out
}

/// A JSON string literal.
func jsonString(_ s: String) -> String { CBORDiagnostic.quoted(s) }

/// Whether `bytes` are text a terminal shows as such: UTF-8 without control characters other than tab,
/// line feed and carriage return.
func isText(_ bytes: [UInt8]) -> Bool {
    guard String(validating: bytes, as: UTF8.self) != nil else { return false }
    return !bytes.contains { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D || $0 == 0x7F }
}

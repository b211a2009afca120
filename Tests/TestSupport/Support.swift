import Foundation
import Testing

/// Whether missing test prerequisites (third-party vectors, the CLI binary, the interop Python) fail
/// the tests that need them instead of skipping them: when `CI` or `MDOC_REQUIRE_SHARED_VECTORS` is set.
public enum Prerequisites {
    static let environment = ProcessInfo.processInfo.environment
    /// True under CI or `MDOC_REQUIRE_SHARED_VECTORS`.
    public static let required: Bool = ["CI", "MDOC_REQUIRE_SHARED_VECTORS"].contains {
        !(environment[$0] ?? "").isEmpty
    }
}

/// Locates the third-party vectors: `$MDOC_SHARED_VECTORS`, else `../shared/vectors` beside the repo.
public enum SharedVectors {
    /// The path given in `MDOC_SHARED_VECTORS`, if any (a wrong one is not silently ignored).
    static let configured: String? = Prerequisites.environment["MDOC_SHARED_VECTORS"].flatMap { $0.isEmpty ? nil : $0 }

    public static let root: URL? = {
        if let configured {
            let u = URL(fileURLWithPath: configured)
            return FileManager.default.fileExists(atPath: u.path) ? u : nil
        }
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let u = repo.deletingLastPathComponent().appendingPathComponent("shared/vectors")
        return FileManager.default.fileExists(atPath: u.path) ? u : nil
    }()

    /// For `.enabled(if:)`: run when the vectors are there, and also when they are required or a path
    /// was configured explicitly (the test then fails on the missing vector instead of being skipped).
    public static var runnable: Bool { root != nil || Prerequisites.required || configured != nil }

    /// Why a vector test is skipped.
    public static let skipNote: Comment =
        "third-party vectors absent: place them at ../shared/vectors or set MDOC_SHARED_VECTORS"

    public static func data(_ path: String) throws -> Data {
        guard let root else { throw VectorMissing(path: path) }
        return try Data(contentsOf: root.appendingPathComponent(path))
    }

    public static func hexFile(_ path: String) throws -> [UInt8] {
        let text = String(decoding: try data(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return try Hex.decode(text)
    }

    public static func json(_ path: String) throws -> Any {
        try JSONSerialization.jsonObject(with: try data(path))
    }

    public struct VectorMissing: Error { let path: String }
}

/// Hex helpers for tests.
public enum Hex {
    public struct Bad: Error {}
    public static func decode(_ s: String) throws -> [UInt8] {
        let chars = Array(s.utf8.filter { $0 != 0x20 && $0 != 0x0a })
        guard chars.count % 2 == 0 else { throw Bad() }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        func v(_ c: UInt8) throws -> UInt8 {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: throw Bad()
            }
        }
        var i = 0
        while i < chars.count {
            out.append(try v(chars[i]) << 4 | v(chars[i + 1]))
            i += 2
        }
        return out
    }

    public static func encode<C: Collection<UInt8>>(_ b: C) -> String { b.map { String(format: "%02x", $0) }.joined() }
}

/// `h("a1 01 26")`: annotated hex in tests.
public func h(_ s: String) -> [UInt8] { try! Hex.decode(s) }

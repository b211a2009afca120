import Foundation

/// Locates the third-party vectors: `$MDOC_SHARED_VECTORS`, else `../shared/vectors` beside the repo.
public enum SharedVectors {
    public static let root: URL? = {
        if let env = ProcessInfo.processInfo.environment["MDOC_SHARED_VECTORS"], !env.isEmpty {
            let u = URL(fileURLWithPath: env)
            return FileManager.default.fileExists(atPath: u.path) ? u : nil
        }
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let u = repo.deletingLastPathComponent().appendingPathComponent("shared/vectors")
        return FileManager.default.fileExists(atPath: u.path) ? u : nil
    }()

    public static var available: Bool {
        if root == nil {
            print("NOTICE: third-party vectors not found (set MDOC_SHARED_VECTORS or place them at ../shared/vectors); vector tests are skipped")
        }
        return root != nil
    }

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
        while i < chars.count { out.append(try v(chars[i]) << 4 | v(chars[i + 1])); i += 2 }
        return out
    }

    public static func encode<C: Collection<UInt8>>(_ b: C) -> String { b.map { String(format: "%02x", $0) }.joined() }
}

/// `h("a1 01 26")`: annotated hex in tests.
public func h(_ s: String) -> [UInt8] { try! Hex.decode(s) }

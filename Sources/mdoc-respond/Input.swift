import Foundation

/// Reads a file or standard input (`-`), bounded in size.
enum Input {
    static let maxBytes = 64 << 20

    static func read(_ path: String) -> [UInt8] {
        let data: Data?
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            data = FileManager.default.contents(atPath: path)
        }
        guard let data else { fail(Exit.io, "io", "cannot read input file") }
        guard data.count <= maxBytes else { fail(Exit.io, "io", "input larger than \(maxBytes) bytes") }
        return Array(data)
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
        while i < stripped.count { out.append(v(stripped[i]) << 4 | v(stripped[i + 1])); i += 2 }
        return out
    }
}

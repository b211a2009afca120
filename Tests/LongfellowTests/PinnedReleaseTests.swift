import Foundation
import Presentment
import Testing

@testable import Longfellow

/// What the Longfellow module pins, held equal to what scripts/zk-setup.sh installs: a fresh
/// installation must give the engine exactly the circuits and library it loads (a table the script
/// read differently once left every fresh machine without proofs).
@Suite("Longfellow: the pinned release and circuit table")
struct PinnedReleaseTests {
    static let setup = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../../scripts/zk-setup.sh"
    ).standardized.path

    static func run(_ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [setup] + arguments
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self)
    }

    @Test("zk-setup.sh installs exactly the engine's circuit table (hash and SHA-256 per circuit)")
    func circuitTable() throws {
        let installed = try Self.run(["--table"]).split(separator: "\n").map(String.init)
        let pinned = LongfellowCircuit.table.map { "\($0.circuitHash) \($0.fileSHA256)" }
        #expect(installed.sorted() == pinned.sorted())
        #expect(!pinned.isEmpty && Set(LongfellowCircuit.table.map(\.circuitHash)).count == pinned.count)
    }

    @Test("The library digest the engine pins is the one zk-setup.sh installs")
    func libraryDigest() throws {
        let script = try String(contentsOfFile: Self.setup, encoding: .utf8)
        #expect(script.contains("lib_sha=" + LongfellowInstallation.pinnedLibrarySHA256 + "\n"))
    }

    @Test("Every pinned circuit is of the one system the engine proves with, and is found by its spec")
    func circuitSpecs() {
        for c in LongfellowCircuit.table {
            #expect(c.spec.system == LongfellowCircuit.system)
            #expect(LongfellowCircuit.table.filter { $0.spec == c.spec }.count == 1)
        }
    }
}

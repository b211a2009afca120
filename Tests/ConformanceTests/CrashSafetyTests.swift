import Foundation
import Testing
import TestSupport
@testable import AnnexC
@testable import Presentment
import MdocCBOR

/// Crash safety of the credential context: writers (the CLI, in child processes) are killed with
/// SIGKILL at random moments; every load must then see a complete snapshot — the old or the new one —
/// with mode 0600 — including a reader loading continuously while the writers run; temporary files
/// of killed writers are removed by the next write.
@Suite("Conformance: context crash safety")
struct CrashSafetyTests {
    @Test(
        "SIGKILL during context rewrites never leaves a partial snapshot",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func killDuringWrites() throws {
        let binary = try #require(ConformanceTests.cliBinary, "the CLI binary is required here")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let vectors = ConformanceTests.vectors
        func run(_ args: [String]) throws -> Process {
            let p = Process()
            p.executableURL = binary
            p.arguments = args
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        let setup = [
            ["context", "init", "--context", dir.path],
            [
                "context", "import", "--context", dir.path, "--issuer-signed",
                vectors.appendingPathComponent("credentials/pid.issuer-signed.cbor").path,
                "--device-key", vectors.appendingPathComponent("context/keys/pid.pem").path, "--id", "pid",
            ],
        ]
        for a in setup {
            let p = try run(a)
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
        }
        // A concurrent reader: loads the snapshot in a loop while writers are started and killed.
        final class ReaderState: @unchecked Sendable {
            let lock = NSLock()
            var stop = false, loads = 0, bad = [String]()
        }
        let reader = ReaderState()
        let readerDone = DispatchSemaphore(value: 0)
        let readerDir = dir
        Thread.detachNewThread {
            while true {
                reader.lock.lock()
                let stop = reader.stop
                reader.lock.unlock()
                if stop { break }
                var problem: String?
                do {
                    if let ctx = try CredentialContext.load(from: readerDir) {
                        if ctx.credentials.count != 1 { problem = "loaded \(ctx.credentials.count) credentials" }
                    } else {
                        problem = "snapshot missing"
                    }
                } catch {
                    problem = "\(error)"
                }
                reader.lock.lock()
                reader.loads += 1
                if let problem, reader.bad.count < 5 { reader.bad.append(problem) }
                reader.lock.unlock()
            }
            readerDone.signal()
        }
        var rng = SystemRandomNumberGenerator()
        var kills = 0
        var completed = 0
        var cancelledSeen = 0
        var activeSeen = 0
        var leftovers = 0
        var maxLeftovers = 0
        func temporaries() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: dir.path).filter {
                $0.hasPrefix(".context.cbor.") && $0.hasSuffix(".tmp")
            }
        }
        // Until the run has proved what it claims (writes completed, writers killed mid-write leaving a
        // temporary, both the old and the new snapshot seen), within a bound.
        var i = 0
        while i < 2000
            && !(i >= 200 && completed >= 5 && kills >= 5 && leftovers >= 1 && cancelledSeen >= 1 && activeSeen >= 1)
        {
            defer { i += 1 }
            let p = try run(["context", i % 2 == 0 ? "cancel" : "reinstate", "pid", "--context", dir.path])
            usleep(UInt32.random(in: 0...40_000, using: &rng))
            if p.isRunning {
                kill(p.processIdentifier, SIGKILL)
                kills += 1
            } else {
                completed += 1
            }
            p.waitUntilExit()
            // A writer killed between creating and renaming its temporary file leaves it behind; the
            // next write must remove it (so at most one is ever present here).
            let t = try temporaries().count
            leftovers += t
            maxLeftovers = max(maxLeftovers, t)
            // Whatever happened, the snapshot on disk is complete and private.
            let ctx = try #require(try CredentialContext.load(from: dir))
            #expect(ctx.credentials.count == 1)
            if ctx.credentials[0].isCancelled { cancelledSeen += 1 } else { activeSeen += 1 }
            let mode =
                (try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("context.cbor").path)[
                    .posixPermissions] as! NSNumber).intValue
            #expect(mode & 0o777 == 0o600)
        }
        reader.lock.lock()
        reader.stop = true
        reader.lock.unlock()
        readerDone.wait()
        #expect(reader.bad.isEmpty, "\(reader.bad)")
        #expect(reader.loads > 0)
        // Killed writers may leave temporary files; the next write removes every one of them.
        #expect(maxLeftovers <= 1)
        let last = try run(["context", "reinstate", "pid", "--context", dir.path])
        last.waitUntilExit()
        #expect(last.terminationStatus == 0)
        let remaining = try temporaries()
        #expect(remaining.isEmpty, "stale temporaries remain: \(remaining)")
        print(
            "crash safety: \(i) rewrites, \(kills) killed mid-way, \(completed) completed; every load complete (cancelled \(cancelledSeen), active \(activeSeen)); "
                + "\(reader.loads) concurrent loads all complete; \(leftovers) temporaries left by killed writers, each removed by the next write"
        )
        #expect(kills >= 5, "no writer was killed mid-way")
        #expect(completed >= 5, "no write completed")
        #expect(leftovers >= 1, "no kill left a temporary behind, so its removal was not tested")
        #expect(cancelledSeen >= 1 && activeSeen >= 1, "the old and the new snapshot were not both seen")
    }
}

import Foundation
import Testing
import TestSupport
@testable import AnnexC
@_spi(Testing) @testable import Presentment
import MdocCBOR
#if canImport(Glibc)
    import Glibc
#endif

/// The context CLI from several processes at once: no update is lost, every printed success is on
/// disk, key material is never readable by others at any moment (umask 000, writers killed at random),
/// and the next writer removes what killed writers left.
@Suite("Conformance: context writers in several processes")
struct ContextConcurrencyTests {
    static let vectors = ConformanceTests.vectors

    /// Starts the CLI with umask 000 (the most permissive): every file it creates must still be 0600.
    static func start(_ binary: URL, _ args: [String], stdout: Pipe? = nil) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "umask 000; exec \"$0\" \"$@\"", binary.path] + args
        p.standardOutput = stdout ?? FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// A fresh private working directory (the caller removes it).
    static func workDirectory() throws -> URL {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-concurrent-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return work
    }

    /// Writes `n` distinct self-signed reader roots (DER) into `dir` and returns their paths.
    static func roots(_ n: Int, in dir: URL) throws -> [String] {
        try (0..<n).map { i in
            let k = try SoftwareSigner.generate()
            let c = try Certificate.issue(
                subject: .init(commonName: "Concurrent Root \(i)"), publicKey: k.publicKey, issuer: nil, issuerKey: k,
                serial: UInt64(i + 1),
                notBefore: Date() - 86400, notAfter: Date() + 86400, profile: .readerRoot)
            let path = dir.appendingPathComponent("root-\(i).der").path
            #expect(FileManager.default.createFile(atPath: path, contents: Data(c.der)))
            return path
        }
    }

    @Test(
        "Concurrent imports, cancels, trust additions and policy changes from separate processes: every success is reflected, no update is lost",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func concurrentProcesses() throws {
        let binary = try #require(ConformanceTests.cliBinary, "the CLI binary is required here")
        let work = try Self.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let dir = work.appendingPathComponent("ctx").path
        let creds = ["mdl", "pid", "photoid"].map {
            (
                Self.vectors.appendingPathComponent("credentials/\($0).issuer-signed.cbor").path,
                Self.vectors.appendingPathComponent("context/keys/\($0).pem").path
            )
        }
        func run(_ args: [String]) throws -> (Int32, String) {
            let out = Pipe()
            let p = try Self.start(binary, args, stdout: out)
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            return (p.terminationStatus, text)
        }
        #expect(try run(["context", "init", "--context", dir]).0 == 0)
        for k in 1...4 {
            #expect(
                try run([
                    "context", "import", "--context", dir, "--issuer-signed", creds[0].0, "--device-key", creds[0].1,
                    "--id", "base-\(k)",
                ]).0 == 0)
        }
        let rootFiles = try Self.roots(2 * 5, in: work)
        let rounds = 5
        var processes = 0
        var successes = 0
        var lost = 0
        for round in 1...rounds {
            var jobs: [(args: [String], expect: String)] = []
            for k in 0..<4 {
                let (is_, key) = creds[k % creds.count]
                jobs.append(
                    (
                        ["context", "import", "--context", dir, "--issuer-signed", is_, "--device-key", key],
                        "imported credential-"
                    ))
            }
            for k in 1...4 {
                jobs.append(
                    (
                        [
                            round % 2 == 1 ? "context" : "context", round % 2 == 1 ? "cancel" : "reinstate",
                            "base-\(k)", "--context", dir,
                        ],
                        round % 2 == 1 ? "cancelled" : "reinstated"
                    ))
            }
            for k in 0..<2 {
                jobs.append(
                    (
                        ["context", "trust", "add", rootFiles[2 * (round - 1) + k], "--context", dir],
                        "trust anchor added"
                    ))
            }
            jobs.append(
                (
                    [
                        "context", "policy",
                        round % 2 == 1 ? "--require-trusted-reader" : "--no-require-trusted-reader", "--context", dir,
                    ], "policy updated"
                ))
            // All started before any is waited for.
            let pipes = jobs.map { _ in Pipe() }
            let started = try zip(jobs, pipes).map { try Self.start(binary, $0.0.args, stdout: $0.1) }
            var printed = [String]()
            for (p, pipe) in zip(started, pipes) {
                printed.append(String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
                p.waitUntilExit()
                #expect(p.terminationStatus == 0, "round \(round): exit \(p.terminationStatus)")
            }
            processes += jobs.count
            for (job, text) in zip(jobs, printed) {
                #expect(text.hasPrefix(job.expect), "round \(round): \(job.args[1]) printed \(text)")
                if text.hasPrefix(job.expect) { successes += 1 }
            }
            // Every success printed is on disk.
            let ctx = try #require(try CredentialContext.load(from: URL(fileURLWithPath: dir)))
            let importedIDs = printed.compactMap {
                $0.hasPrefix("imported ") ? String($0.dropFirst(9).prefix { $0 != "\n" }) : nil
            }
            let ids = Set(ctx.credentials.map(\.id))
            let missing = importedIDs.filter { !ids.contains($0) }
            lost += missing.count
            #expect(missing.isEmpty, "round \(round): imports printed but missing: \(missing)")
            #expect(
                Set(importedIDs).count == importedIDs.count,
                "round \(round): a default id handed out twice: \(importedIDs)")
            #expect(ctx.credentials.count == 4 + 4 * round)
            let cancelled = ctx.credentials.filter { $0.id.hasPrefix("base-") && $0.isCancelled }.count
            if cancelled != (round % 2 == 1 ? 4 : 0) { lost += 1 }
            #expect(cancelled == (round % 2 == 1 ? 4 : 0), "round \(round): cancellations lost")
            if ctx.readerTrust.trustAnchors.count != 2 * round { lost += 1 }
            #expect(ctx.readerTrust.trustAnchors.count == 2 * round, "round \(round): trust anchors lost")
            #expect(ctx.readerTrust.requireTrustedReader == (round % 2 == 1))
            // Every credential's key resolves (none deleted by a racing writer).
            for c in ctx.credentials {
                #expect((try? c.signer()) != nil, "round \(round): \(c.id)'s key does not resolve")
            }
        }
        #expect(lost == 0)
        print(
            "context concurrency: \(rounds) rounds, \(processes) writer processes (11 at once), \(successes) successes printed, \(lost) updates lost"
        )
    }

    @Test(
        "respond never fails while an unrelated credential is imported and removed over and over",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func respondDuringRemovals() throws {
        let binary = try #require(ConformanceTests.cliBinary, "the CLI binary is required here")
        let work = try Self.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let dir = work.appendingPathComponent("ctx").path
        func cred(_ n: String) -> [String] {
            [
                "--issuer-signed", Self.vectors.appendingPathComponent("credentials/\(n).issuer-signed.cbor").path,
                "--device-key", Self.vectors.appendingPathComponent("context/keys/\(n).pem").path,
            ]
        }
        for args in [
            ["context", "init", "--context", dir],
            ["context", "import", "--context", dir, "--id", "mdl"] + cred("mdl"),
        ] {
            let p = try Self.start(binary, args)
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
        }
        let c = try #require(try ConformanceTests.manifest().first { $0.id == "mdl-dataObject-v1.0-none" })
        let request = Self.vectors.appendingPathComponent(c.file).path
        final class Flag: @unchecked Sendable {
            let lock = NSLock()
            var stop = false
            var churns = 0
        }
        let flag = Flag()
        let done = DispatchSemaphore(value: 0)
        let pidArgs = cred("pid")
        Thread.detachNewThread {
            var k = 0
            while true {
                flag.lock.lock()
                let stop = flag.stop
                flag.lock.unlock()
                if stop { break }
                k += 1
                for args in [
                    ["context", "import", "--context", dir, "--id", "pid\(k)"] + pidArgs,
                    ["context", "remove", "pid\(k)", "--context", dir],
                ] {
                    if let p = try? Self.start(binary, args) { p.waitUntilExit() }
                }
                flag.lock.lock()
                flag.churns += 1
                flag.lock.unlock()
            }
            done.signal()
        }
        // At least 40 answers, and on until four import/remove cycles have run alongside them (a loaded
        // machine may schedule the churning thread late), within a bound.
        var failures = [String]()
        var answers = 0
        while answers < 40 || (flag.lock.withLock { flag.churns } <= 3 && answers < 400) {
            answers += 1
            guard
                let r = try ConformanceTests.runCLI([
                    "respond", "--request", request, "--origin", c.origin, "--context", dir, "--clock",
                    "2027-03-01T12:00:00Z",
                ])
            else { break }
            if r.status != 0 { failures.append(r.err) }
        }
        flag.lock.lock()
        flag.stop = true
        flag.lock.unlock()
        done.wait()
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(flag.churns > 3)
        print(
            "respond during removals: \(answers) answers, \(failures.count) failures, while \(flag.churns) import/remove cycles of another credential ran"
        )
    }

    @Test(
        "Key files are never readable by others while imports run (umask 000, writers SIGKILLed); the next writer leaves no temporary and no unreferenced key",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func keyExposure() throws {
        let binary = try #require(ConformanceTests.cliBinary, "the CLI binary is required here")
        let work = try Self.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let dir = work.appendingPathComponent("ctx")
        let init_ = try Self.start(binary, ["context", "init", "--context", dir.path])
        init_.waitUntilExit()
        #expect(init_.terminationStatus == 0)
        // A poller: every regular file in the context and key directories, at every moment, is 0600.
        final class Poll: @unchecked Sendable {
            let lock = NSLock()
            var stop = false, scans = 0, filesSeen = 0, exposed = [String]()
        }
        let poll = Poll()
        let done = DispatchSemaphore(value: 0)
        let keysPath = dir.appendingPathComponent("keys").path
        let dirPath = dir.path
        Thread.detachNewThread {
            while true {
                poll.lock.lock()
                let stop = poll.stop
                poll.lock.unlock()
                if stop { break }
                for d in [dirPath, keysPath] {
                    guard let names = try? FileManager.default.contentsOfDirectory(atPath: d) else { continue }
                    for n in names {
                        var st = stat()
                        guard lstat(d + "/" + n, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
                        poll.lock.lock()
                        poll.filesSeen += 1
                        if st.st_mode & 0o077 != 0, poll.exposed.count < 5 {
                            poll.exposed.append("\(n) mode \(String(st.st_mode & 0o777, radix: 8))")
                        }
                        poll.lock.unlock()
                    }
                }
                poll.lock.lock()
                poll.scans += 1
                poll.lock.unlock()
            }
            done.signal()
        }
        let is_ = Self.vectors.appendingPathComponent("credentials/pid.issuer-signed.cbor").path
        let key = Self.vectors.appendingPathComponent("context/keys/pid.pem").path
        var kills = 0
        var completed = 0
        var rng = SystemRandomNumberGenerator()
        for i in 0..<40 {
            let p = try Self.start(
                binary, ["context", "import", "--context", dir.path, "--issuer-signed", is_, "--device-key", key])
            if i % 3 == 0 {
                usleep(UInt32.random(in: 0...30_000, using: &rng))
                if p.isRunning {
                    kill(p.processIdentifier, SIGKILL)
                    kills += 1
                }
            }
            p.waitUntilExit()
            if p.terminationStatus == 0 && p.terminationReason == .exit { completed += 1 }
        }
        poll.lock.lock()
        poll.stop = true
        poll.lock.unlock()
        done.wait()
        #expect(poll.exposed.isEmpty, "key material readable by others: \(poll.exposed)")
        #expect(poll.scans > 50)
        // The next writer removes every temporary and every key no snapshot references.
        let last = try Self.start(binary, ["context", "policy", "--any", "--context", dir.path])
        last.waitUntilExit()
        #expect(last.terminationStatus == 0)
        let ctx = try #require(try CredentialContext.load(from: dir))
        let keyFiles = try FileManager.default.contentsOfDirectory(atPath: keysPath).sorted()
        let referenced = ctx.credentials.map { String($0.deviceKeyReference.dropFirst(5)) }.sorted()
        #expect(keyFiles == referenced, "key files \(keyFiles.count) vs referenced \(referenced.count)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
        // Every completed import is on disk; a writer killed after its rename may be too.
        #expect(
            ctx.credentials.count >= completed && ctx.credentials.count <= completed + kills,
            "\(ctx.credentials.count) on disk, \(completed) completed")
        for c in ctx.credentials { #expect((try? c.signer()) != nil) }
        print(
            "key exposure: 40 imports under umask 000 (\(kills) killed, \(completed) completed), \(poll.scans) directory scans saw \(poll.filesSeen) files, "
                + "none readable by others; \(keyFiles.count) key files left, all referenced")
    }
}

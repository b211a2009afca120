import Foundation
import Longfellow
import WebEncoding
import Testing
import TestSupport
import TestWorld
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import HPKE
import MdocCBOR
import OpenID4VPReader
#if canImport(Glibc)
    import Glibc
#endif

/// The CLI binary: exit codes, verifiable answers, the first run and the CLI's conventions (the rest
/// in CLIConsentTests, CLIFileTests and CLIConfigTests).
extension ConformanceTests {
    @Test(
        "A sample of requests through the CLI binary: exit codes and a verifiable response",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cli() throws {
        let cases = try Self.manifest()
        let iaca = try Self.iaca()
        var n = 0
        for id in [
            "mdl-dataObject-v1.0-readerAuth", "mdl-digitalRequestList-v1.1-readerAuthAll",
            "multi-document-v1.1-use-cases", "untrusted-reader", "origin-with-path", "hostile-not-json",
        ] {
            let c = try #require(cases.first { $0.id == id })
            let (status, data, errText) = try #require(
                try Self.runCLI([
                    "respond", "--request", Self.vectors.appendingPathComponent(c.file).path, "--origin", c.origin,
                    "--clock", "2027-03-01T12:00:00Z",
                ]))
            if c.expected.outcome == "ok" {
                #expect(status == 0, "\(id): \(errText)")
                let v = try AnnexCReader.openResponse(
                    data, for: try Self.builtRequest(c), issuerRoots: [iaca], at: Self.clock)
                #expect(v.documents.count == c.expected.disclosed?.count)
            } else {
                #expect(status == 1, "\(id)")
                #expect(errText.contains("error[\(c.expected.error ?? "")]"), "\(id): \(errText)")
                #expect(data.isEmpty, "\(id): no partial output")
            }
            n += 1
        }
        print("CLI conformance sample: \(n) requests through the binary")
    }

    @Test(
        "CLI: the demo runs both protocols end to end, each alone on request, and refuses an unknown protocol",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliDemo() throws {
        let (status, data, errText) = try #require(try Self.runCLI(["demo"]))
        let out = String(decoding: data, as: UTF8.self)
        #expect(status == 0, "\(errText)")
        #expect(out.contains("ISO/IEC 18013-7 Annex C") && out.contains("OpenID4VP over the Digital Credentials API"))
        #expect(out.contains("openid4vp-v1-signed, response mode dc_api.jwt"))
        // The claim set falls back to age_over_21 (the credential holds no age_over_25); nothing else comes back.
        let oid4vp = try #require(out.components(separatedBy: "OpenID4VP over the Digital Credentials API").last)
        let disclosed = oid4vp.split(separator: "\n").filter { $0.hasPrefix("    org.iso.18013.5.1/") }
        #expect(
            disclosed.map { $0.split(separator: " ")[0] } == [
                "org.iso.18013.5.1/family_name", "org.iso.18013.5.1/age_over_21",
            ])
        let annexOnly = try #require(try Self.runCLI(["demo", "--protocol", "annexc"]))
        #expect(annexOnly.status == 0 && !String(decoding: annexOnly.out, as: UTF8.self).contains("OpenID4VP"))
        let unsigned = try #require(try Self.runCLI(["demo", "--protocol", "openid4vp", "--no-reader-auth"]))
        let unsignedText = String(decoding: unsigned.out, as: UTF8.self)
        #expect(
            unsigned.status == 0 && unsignedText.contains("openid4vp-v1-unsigned") && !unsignedText.contains("Annex C"))
        let bad = try #require(try Self.runCLI(["demo", "--protocol", "bogus"]))
        #expect(bad.status == 2 && bad.out.isEmpty && bad.err.contains("error[usage]"))
    }

    @Test(
        "CLI: context trust add stores a purpose (relying-party by default), refuses a certificate that cannot anchor, and list shows it",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliTrustAnchorPurpose() throws {
        let world = try TestWorld()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-anchor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try #require(try Self.runCLI(["context", "init", "--context", dir.path])).status == 0)
        let root = dir.appendingPathComponent("root.der")
        let leaf = dir.appendingPathComponent("leaf.der")
        try Data(world.readerRoot.der).write(to: root)
        try Data(world.readerCert.der).write(to: leaf)
        let refused = try #require(try Self.runCLI(["context", "trust", "add", leaf.path, "--context", dir.path]))
        #expect(refused.status != 0 && refused.err.contains("error[contextCorrupt]"), "\(refused.err)")
        let added = try #require(try Self.runCLI(["context", "trust", "add", root.path, "--context", dir.path]))
        #expect(added.status == 0 && String(decoding: added.out, as: UTF8.self).contains("(relying-party)"))
        let reader = try #require(
            try Self.runCLI(["context", "trust", "add", root.path, "--purpose", "mdoc-reader", "--context", dir.path]))
        #expect(reader.status == 0)
        let list = try #require(try Self.runCLI(["context", "list", "--context", dir.path]))
        #expect(String(decoding: list.out, as: UTF8.self).contains("anchor\tmdoc-reader\t"))
        let bad = try #require(
            try Self.runCLI(["context", "trust", "add", root.path, "--purpose", "reader", "--context", dir.path]))
        #expect(bad.status == 2)
    }

    @Test(
        "CLI: context init --test-data makes a private, writable copy of the test context that answers, and refuses an existing context",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliInitTestData() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-init-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let ctx = dir.appendingPathComponent("ctx").path
        let made = try #require(try Self.runCLI(["context", "init", "--test-data", "--context", ctx]))
        #expect(made.status == 0, "\(made.err)")
        var st = stat()
        #expect(stat(ctx, &st) == 0 && st.st_mode & 0o777 == 0o700)
        #expect(stat(ctx + "/keys/mdl.pem", &st) == 0 && st.st_mode & 0o777 == 0o600)
        // The copy loads with the private-file checks on, holds the built-in credentials, and answers.
        let copy = try #require(try CredentialContext.load(from: URL(fileURLWithPath: ctx)))
        let builtIn = try #require(
            try CredentialContext.load(
                from: Self.vectors.appendingPathComponent("context"), requirePrivateFiles: false))
        #expect(copy.credentials.map(\.id) == builtIn.credentials.map(\.id))
        #expect(copy.credentials.map(\.isCancelled) == builtIn.credentials.map(\.isCancelled))
        let c = try #require(try Self.manifest().first { $0.id == "mdl-dataObject-v1.0-none" })
        let answered = try #require(
            try Self.runCLI([
                "respond", "--request", Self.vectors.appendingPathComponent(c.file).path, "--origin", c.origin,
                "--context", ctx, "--out", dir.appendingPathComponent("out").path,
            ]))
        #expect(answered.status == 0, "\(answered.err)")
        let again = try #require(try Self.runCLI(["context", "init", "--test-data", "--context", ctx]))
        #expect(again.status != 0 && again.err.contains("contextExists"))
    }

    @Test(
        "CLI: inspect exits non-zero where respond would refuse, and says why (text and --json)",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliInspectAgreesWithRespond() throws {
        let cases = try Self.manifest()
        for (id, refused) in [("mdl-dataObject-v1.0-none", false), ("unknown-doctype", true)] {
            let c = try #require(cases.first { $0.id == id })
            let args = ["--request", Self.vectors.appendingPathComponent(c.file).path, "--origin", c.origin]
            let respond = try #require(try Self.runCLI(["respond"] + args + ["--out", "/dev/null"]))
            let text = try #require(try Self.runCLI(["inspect"] + args))
            let json = try #require(try Self.runCLI(["inspect", "--json"] + args))
            #expect(
                (respond.status != 0) == refused && (text.status != 0) == refused && json.status == text.status, "\(id)"
            )
            let root = try JSONSerialization.jsonObject(with: json.out) as? [String: Any]
            let would = root?["respondWouldRefuse"] as? [String: Any]
            #expect((would?["rule"] as? String == "selection.noUsableCredential") == refused, "\(id)")
            #expect(String(decoding: text.out, as: UTF8.self).contains("respond would refuse:") == refused, "\(id)")
        }
    }

    @Test(
        "CLI: binary output is not written to a terminal unless asked for (--out -); JSON output is",
        .enabled(
            if: ConformanceTests.cliRunnable && FileManager.default.isExecutableFile(atPath: "/usr/bin/script"),
            "the CLI binary and util-linux's script (a pseudo-terminal) are needed"))
    func cliBinaryToTerminal() throws {
        let binary = try #require(Self.cliBinary)
        let c = try #require(try Self.manifest().first { $0.id == "mdl-dataObject-v1.0-none" })
        let file = Self.vectors.appendingPathComponent(c.file).path
        /// The CLI run on a pseudo-terminal (util-linux script): its exit status and what the terminal showed.
        func onTerminal(_ args: [String]) throws -> (status: Int32, shown: String) {
            let command = ([binary.path] + args).map { "'" + $0 + "'" }.joined(separator: " ")
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            p.arguments = ["-qec", command, "/dev/null"]
            var environment = ProcessInfo.processInfo.environment
            environment["MDOC_RESPOND_TESTVECTORS"] = Self.vectors.path
            environment["MDOC_ZK_DIR"] = "/nonexistent/mdoc-zk"
            p.environment = environment
            let out = Pipe()
            p.standardOutput = out
            p.standardInput = FileHandle.nullDevice
            try p.run()
            let shown = out.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            return (p.terminationStatus, String(decoding: shown, as: UTF8.self))
        }
        let base = ["respond", "--request", file, "--origin", c.origin]
        let refused = try onTerminal(base)
        #expect(refused.status == 2 && refused.shown.contains("error[usage]") && refused.shown.contains("--out -"))
        let forced = try onTerminal(base + ["--out", "-"])
        #expect(forced.status == 0 && forced.shown.utf8.count > 1000)
        let json = try onTerminal(base + ["--format", "json"])
        #expect(json.status == 0 && json.shown.contains("\"response\""))
    }

    @Test(
        "CLI: --option=value is the same as --option value; a flag given a value is refused",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliOptionEquals() throws {
        let c = try #require(try Self.manifest().first { $0.id == "mdl-dataObject-v1.0-none" })
        let file = Self.vectors.appendingPathComponent(c.file).path
        let spaced = try #require(
            try Self.runCLI(["inspect", "--request", file, "--origin", c.origin, "--json"]))
        let joined = try #require(
            try Self.runCLI(["inspect", "--request=\(file)", "--origin=\(c.origin)", "--json"]))
        #expect(spaced.status == 0 && joined.status == 0, "\(spaced.err) \(joined.err)")
        #expect(spaced.out == joined.out)
        let flag = try #require(try Self.runCLI(["inspect", "--request", file, "--origin", c.origin, "--json=yes"]))
        #expect(flag.status == 2 && flag.err.contains("error[usage]"))
    }

    @Test(
        "CLI: an input file that cannot be read is named, with the system's reason",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliNamesUnreadableInput() throws {
        let missing = "/nonexistent/mdoc-input-\(UUID().uuidString).json"
        let r = try #require(
            try Self.runCLI(["respond", "--request", missing, "--origin", "https://verifier.example"]))
        #expect(r.status == 3 && r.err.contains("cannot open \(missing): No such file or directory"), "\(r.err)")
        let dir = try #require(try Self.runCLI(["inspect", FileManager.default.temporaryDirectory.path]))
        #expect(dir.status == 3 && dir.err.contains("is a directory"), "\(dir.err)")
    }

    @Test(
        "CLI: --version prints the repository's VERSION",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliVersion() throws {
        let version = try String(contentsOf: Self.repo.appendingPathComponent("VERSION"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let r = try #require(try Self.runCLI(["--version"]))
        #expect(r.status == 0 && String(decoding: r.out, as: UTF8.self) == "mdoc-respond \(version)\n")
    }

    @Test(
        "CLI: no context is read from a path compiled in at build time: without --context or test data it says to pass one",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliNoCompiledInContext() throws {
        let request = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-req-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: request) }
        try Data("{}".utf8).write(to: request)
        for args in [["demo"], ["respond", "--request", request.path, "--origin", "https://verifier.example"]] {
            let r = try #require(try Self.runCLI(args, builtInData: false))
            #expect(r.status == 2 && r.out.isEmpty, "\(args)")
            #expect(r.err.contains("error[contextUnavailable]") && r.err.contains("--context"), "\(args): \(r.err)")
        }
    }

    static func runCLI(
        _ arguments: [String], zkDirectory: String = "/nonexistent/mdoc-zk", input: CLIInput? = nil,
        builtInData: Bool = true
    ) throws -> (status: Int32, out: Data, err: String)? {
        guard let binary = cliBinary else { return nil }
        let p = Process()
        p.executableURL = binary
        p.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["MDOC_ZK_DIR"] = zkDirectory
        // The built-in test data: this checkout's, unless the caller named another (or none).
        if !builtInData {
            environment["MDOC_RESPOND_TESTVECTORS"] = nil
        } else if environment["MDOC_RESPOND_TESTVECTORS"] == nil {
            environment["MDOC_RESPOND_TESTVECTORS"] = repo.appendingPathComponent("TestVectors").path
        }
        p.environment = environment
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        let inputPipe = Pipe()
        switch input {
        case .file(let url): p.standardInput = try FileHandle(forReadingFrom: url)
        case .pipe: p.standardInput = inputPipe
        case nil: break
        }
        try p.run()
        if case .pipe(let bytes) = input {
            // The CLI may refuse and close its end before reading everything: a failed write is its answer.
            signal(SIGPIPE, SIG_IGN)
            try? inputPipe.fileHandleForWriting.write(contentsOf: bytes)
            try? inputPipe.fileHandleForWriting.close()
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, data, errText)
    }
}

/// Whether the Longfellow prover is installed where `LongfellowInstallation.default` looks (under CI
/// it must be: the tests then fail instead of being skipped).
enum ZeroKnowledgeInstalled {
    static var runnable: Bool { LongfellowInstallation.default.hasLibrary || Prerequisites.required }
}

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

/// The CLI binary: trust anchors, output files and terminals, request input, and that nothing secret leaks.
extension ConformanceTests {
    @Test(
        "CLI: context trust add stores an anchor's exact DER once (adding it again changes nothing), remove takes out that one only, list counts them; a loaded snapshot leaves them unparsed",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliTrustAnchors() throws {
        let work = try ContextConcurrencyTests.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let dir = work.appendingPathComponent("ctx")
        let roots = try ContextConcurrencyTests.roots(2, in: work)
        let ders = try roots.map { Array(try Data(contentsOf: URL(fileURLWithPath: $0))) }
        func context(_ args: [String]) throws -> (status: Int32, out: String) {
            let r = try #require(try Self.runCLI(["context"] + args + ["--context", dir.path]))
            return (r.status, String(decoding: r.out, as: UTF8.self))
        }
        #expect(try context(["init"]).status == 0)
        for root in [roots[0], roots[0], roots[1]] { #expect(try context(["trust", "add", root]).status == 0) }
        #expect(try context(["list"]).out.contains("reader trust: 2 anchor(s)"))
        let stored = try #require(try CredentialContext.load(from: dir))
        #expect(stored.readerTrust.anchors.der == ders)
        #expect(!stored.readerTrust.anchors.isParsed)
        #expect(try context(["trust", "remove", roots[0]]).status == 0)
        #expect(try CredentialContext.load(from: dir)?.readerTrust.anchors.der == [ders[1]])
        #expect(try context(["list"]).out.contains("reader trust: 1 anchor(s)"))
    }

    @Test(
        "CLI: --out writes a new or existing file all at once and 0600, writes a device in place (never replacing it), refuses a symbolic link, and a refusal leaves the file as it was",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliOutputFiles() throws {
        let ok = try Self.manifestCase("mdl-dataObject-v1.0-readerAuth")
        let refused = try Self.manifestCase("hostile-not-json")
        let iaca = try Self.iaca()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-cli-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func respond(_ c: Case, out: String) throws -> (status: Int32, out: Data, err: String) {
            try #require(
                try Self.runCLI([
                    "respond", "--request", Self.vectors.appendingPathComponent(c.file).path, "--origin", c.origin,
                    "--clock", "2027-03-01T12:00:00Z", "--out", out,
                ]))
        }
        func mode(_ path: String) -> (kind: mode_t, permissions: mode_t)? {
            var st = stat()
            guard lstat(path, &st) == 0 else { return nil }
            return (st.st_mode & S_IFMT, st.st_mode & 0o777)
        }
        // A new file, then the same path again over an existing world-readable file.
        let file = dir.appendingPathComponent("response.json").path
        for round in 0..<2 {
            let r = try respond(ok, out: file)
            #expect(r.status == 0 && r.out.isEmpty, "\(r.err)")
            #expect(mode(file)?.kind == S_IFREG && mode(file)?.permissions == 0o600, "round \(round)")
            let v = try AnnexCReader.openResponse(
                Data(contentsOf: URL(fileURLWithPath: file)), for: try Self.builtRequest(ok), issuerRoots: [iaca],
                at: Self.clock)
            #expect(v.documents.count == ok.expected.disclosed?.count)
            chmod(file, 0o644)
        }
        // A refused request writes nothing: the file keeps its bytes.
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        let r = try respond(refused, out: file)
        #expect(r.status == 1 && r.err.contains("error[\(refused.expected.error ?? "")]"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        // No temporary is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["response.json"])
        // A character device is written in place: /dev/null stays the device (a rename over it, as an
        // atomic file write does, would replace it with a regular file when run as root).
        #expect(mode("/dev/null")?.kind == S_IFCHR)
        let toNull = try respond(ok, out: "/dev/null")
        #expect(toNull.status == 0, "\(toNull.err)")
        #expect(mode("/dev/null")?.kind == S_IFCHR)
        // A symbolic link is neither followed nor replaced.
        let link = dir.appendingPathComponent("link.json").path
        #expect(symlink(file, link) == 0)
        let viaLink = try respond(ok, out: link)
        #expect(viaLink.status == 3 && viaLink.err.contains("error[io]"))
        #expect(mode(link)?.kind == S_IFLNK)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        // A missing directory: an I/O failure, nothing created.
        let missing = try respond(ok, out: dir.appendingPathComponent("no/such/response.json").path)
        #expect(missing.status == 3 && missing.err.contains("error[io]"))
    }

    @Test(
        "CLI: a request read from a file, from a file as standard input and from a pipe (in chunks) is answered alike; exactly maxRequestBytes is read whole and one byte more is refused (limitExceeded, framing.tooLarge) with no output",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliRequestInput() throws {
        let ok = try Self.manifestCase("mdl-dataObject-v1.0-readerAuth")
        let iaca = try Self.iaca()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-cli-in-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // The request padded with trailing JSON whitespace to 40,000 bytes: more than two 16 KiB chunks.
        var request = try Data(contentsOf: Self.vectors.appendingPathComponent(ok.file))
        let size = 40_000
        request.append(Data(repeating: 0x20, count: size - request.count))
        let file = dir.appendingPathComponent("request.json")
        try request.write(to: file)
        enum Source: CaseIterable { case path, fileAsStandardInput, pipe }
        func respond(_ source: Source, limit: Int) throws -> (status: Int32, out: Data, err: String) {
            let input: CLIInput? =
                switch source {
                case .path: nil
                case .fileAsStandardInput: .file(file)
                case .pipe: .pipe(request)
                }
            let arguments = [
                "respond", "--request", source == .path ? file.path : "-", "--origin", ok.origin, "--clock",
                "2027-03-01T12:00:00Z", "--config", "{\"limits\":{\"maxRequestBytes\":\(limit)}}",
            ]
            let result = try #require(try Self.runCLI(arguments, input: input))
            return result
        }
        for source in Source.allCases {
            let answered = try respond(source, limit: size)
            #expect(answered.status == 0, "\(source): \(answered.err)")
            let v = try AnnexCReader.openResponse(
                answered.out, for: try Self.builtRequest(ok), issuerRoots: [iaca], at: Self.clock)
            #expect(v.documents.count == ok.expected.disclosed?.count, "\(source)")
            let refused = try respond(source, limit: size - 1)
            #expect(refused.status == 1, "\(source)")
            #expect(
                refused.err.contains("error[limitExceeded]") && refused.err.contains("framing.tooLarge"), "\(source)")
            #expect(refused.out.isEmpty, "\(source): no partial output")
        }
        // A sparse file claiming a terabyte: sized by the limit, not by the claim, and refused.
        let sparse = dir.appendingPathComponent("sparse.json")
        #expect(FileManager.default.createFile(atPath: sparse.path, contents: nil))
        let handle = try FileHandle(forWritingTo: sparse)
        try handle.truncate(atOffset: 1 << 40)
        try handle.close()
        let huge = try #require(
            try Self.runCLI([
                "respond", "--request", sparse.path, "--origin", ok.origin, "--clock", "2027-03-01T12:00:00Z",
            ]))
        #expect(huge.status == 1)
        #expect(huge.err.contains("error[limitExceeded]") && huge.err.contains("framing.tooLarge"))
        #expect(huge.out.isEmpty)
    }

    @Test(
        "CLI: refusals, reports and listings print no request bytes, origins, element values or keys",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliLeaksNothing() throws {
        let dir = Self.vectors.appendingPathComponent("context")
        let context = try #require(try CredentialContext.load(from: dir, requirePrivateFiles: false))
        // Every text value of 5+ characters the built-in credentials hold, and the device keys' PEM bodies.
        var values = Set<String>()
        for c in context.credentials {
            for e in try c.elements { if let v = c.element(e)?.stringValue, v.count >= 5 { values.insert(v) } }
        }
        var keyWindows = [String]()
        for f in try FileManager.default.contentsOfDirectory(
            at: dir.appendingPathComponent("keys"), includingPropertiesForKeys: nil) where f.pathExtension == "pem"
        {
            let body = try String(contentsOf: f, encoding: .utf8).split(separator: "\n").filter {
                !$0.hasPrefix("-----")
            }.joined()
            keyWindows += stride(from: 0, to: max(0, body.count - 16), by: 16).map {
                String(Array(body)[$0..<($0 + 16)])
            }
        }
        #expect(values.count >= 10 && keyWindows.count >= 4)
        let c = try Self.manifestCase("mdl-dataObject-v1.0-readerAuth")
        let file = Self.vectors.appendingPathComponent(c.file).path
        let requestText = try String(contentsOf: URL(fileURLWithPath: file), encoding: .utf8)
        let requestWindows = [c.deviceRequest, c.encryptionInfo].flatMap { s in
            stride(from: 0, to: s.count - 12, by: 6).map { String(Array(s)[$0..<($0 + 12)]) }
        }
        #expect(requestText.contains(c.deviceRequest))
        func scan(_ label: String, _ text: String, extra: [String] = []) {
            let leaked = (Array(values) + keyWindows + requestWindows + extra).filter { text.contains($0) }
            #expect(leaked.isEmpty, "\(label) printed \(leaked.prefix(3))")
        }
        let clock = ["--clock", "2027-03-01T12:00:00Z"]
        // A successful answer prints nothing on stderr; --report prints a summary without values.
        let ok = try #require(try Self.runCLI(["respond", "--request", file, "--origin", c.origin] + clock))
        #expect(ok.status == 0 && ok.err.isEmpty, "respond: \(ok.err)")
        let report = try #require(
            try Self.runCLI(["respond", "--report", "--request", file, "--origin", c.origin] + clock))
        #expect(report.status == 0 && !report.err.isEmpty)
        // The observer's stage durations: parse's read, check and plan; respond's plan, build and seal.
        #expect(report.err.contains("(read ") && report.err.contains(", plan ") && report.err.contains(", seal "))
        scan("respond --report", report.err)
        // Refusals from a marker origin: the wrong origin for the reader's signature, a path, userinfo.
        for origin in [
            "https://leaky-cli-marker.example", "https://leaky-cli-marker.example/secret-path",
            "https://user:pw@leaky-cli-marker.example",
        ] {
            let r = try #require(try Self.runCLI(["respond", "--request", file, "--origin", origin] + clock))
            #expect(r.status == 1 && r.out.isEmpty && r.err.contains("error["), "\(origin): \(r.err)")
            scan("refusal", r.err, extra: ["leaky-cli-marker", "secret-path", "user:pw"])
        }
        // A request file that is not a request at all: its bytes are not echoed.
        let garbage = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mdoc-secrets-\(UUID().uuidString).json")
        try Data("{\"deviceRequest\":\"GARBAGEMARKERzzzz!!\",\"encryptionInfo\":\"\(c.encryptionInfo)\"}".utf8).write(
            to: garbage)
        defer { try? FileManager.default.removeItem(at: garbage) }
        let g = try #require(try Self.runCLI(["respond", "--request", garbage.path, "--origin", c.origin] + clock))
        #expect(g.status == 1 && g.out.isEmpty)
        scan("garbage refusal", g.err, extra: ["GARBAGEMARKER"])
        // Listing the context shows ids, docTypes, counts and dates: never values or keys. (A private
        // copy: a git checkout does not keep the published context's 0600 modes, which `--context` requires.)
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mdoc-secrets-ctx-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: dir, to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        for f in [copy.appendingPathComponent("context.cbor")]
            + (try FileManager.default.contentsOfDirectory(
                at: copy.appendingPathComponent("keys"), includingPropertiesForKeys: nil))
        {
            chmod(f.path, 0o600)
        }
        for args in [
            ["context", "list", "--context", copy.path], ["context", "list", "--json", "--context", copy.path],
        ] {
            let l = try #require(try Self.runCLI(args))
            #expect(l.status == 0 && String(decoding: l.out, as: UTF8.self).contains("mdl"), "\(args): \(l.err)")
            scan(args.joined(separator: " "), String(decoding: l.out, as: UTF8.self) + l.err)
        }
        // The same outputs from a context whose device keys live in a SoftHSM2 token: nor do they show
        // the token's PIN or where it is kept.
        var outputs = 7
        if TokenContext.runnable {
            let (tokenContext, token) = try TokenContext.builtInWithToken(vectors: Self.vectors)
            let tokenDir = try Self.privateDirectory("secrets-token")
            defer { try? FileManager.default.removeItem(at: tokenDir) }
            try tokenContext.write(to: tokenDir)
            let pin = try String(contentsOfFile: token.pinFile, encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let pinSecrets = [pin, token.pinFile]
            let withContext = ["--context", tokenDir.path] + clock
            let tokenReport = try #require(
                try Self.runCLI(["respond", "--report", "--request", file, "--origin", c.origin] + withContext))
            #expect(tokenReport.status == 0, "\(tokenReport.err)")
            scan("respond --report (token keys)", tokenReport.err, extra: pinSecrets)
            let r = try #require(
                try Self.runCLI(
                    ["respond", "--request", file, "--origin", "https://leaky-cli-marker.example"] + withContext))
            #expect(r.status == 1 && r.out.isEmpty)
            scan("refusal (token keys)", r.err, extra: pinSecrets + ["leaky-cli-marker"])
            for args in [["context", "list"], ["context", "list", "--json"]] {
                let l = try #require(try Self.runCLI(args + ["--context", tokenDir.path]))
                let text = String(decoding: l.out, as: UTF8.self) + l.err
                #expect(l.status == 0 && text.contains("pkcs11:token="), "\(args): \(l.err)")
                scan(args.joined(separator: " ") + " (token keys)", text, extra: pinSecrets)
            }
            outputs += 4
        }
        print(
            "CLI secrets: \(values.count) element values, \(keyWindows.count) key windows and \(requestWindows.count) request windows absent from \(outputs) outputs"
        )
    }
}

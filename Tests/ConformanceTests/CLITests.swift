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

/// The CLI binary: exit codes, verifiable answers, substitutes and approvals, escaping, secrets, the
/// hostile catalogue and worst-case memory.
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

    @Test(
        "CLI: inspect shows each substitution (text and --json); respond --approve of the requested elements releases no substitute",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliSubstitutes() throws {
        let ns = "org.iso.18013.5.1"
        let doc = AnnexCReader.DocumentRequest(
            docType: "org.iso.18013.5.1.mDL",
            elements: [
                .init(ElementID(ns, "age_over_25"), intentToRetain: false),
                .init(ElementID(ns, "family_name"), intentToRetain: false),
            ],
            alternatives: [.init(ElementID(ns, "age_over_25"), [[ElementID(ns, "birth_date")]])])
        let req = try AnnexCReader.makeRequest(
            documents: [doc], origin: try Origin("https://verifier.example"), framing: .dataObject, version: .v1_1)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-subst-\(UUID().uuidString).json")
        try req.rawRequest.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let base = ["--request", file.path, "--origin", "https://verifier.example", "--clock", "2027-03-01T12:00:00Z"]
        let text = try #require(try Self.runCLI(["inspect"] + base))
        let out = String(decoding: text.out, as: UTF8.self)
        #expect(text.status == 0 && out.contains("substitutes \(ns)/age_over_25 -> [\(ns)/birth_date]"), "\(out)")
        let json = try #require(try Self.runCLI(["inspect", "--json"] + base))
        let parsed = try JSONSerialization.jsonObject(with: json.out) as? [String: Any]
        let candidate = ((parsed?["documents"] as? [[String: Any]])?.first?["candidates"] as? [[String: Any]])?.first
        let subs = candidate?["substitutions"] as? [[String: Any]]
        #expect(
            subs?.first?["requested"] as? String == "\(ns)/age_over_25"
                && subs?.first?["replacement"] as? [String] == ["\(ns)/birth_date"],
            "\(String(decoding: json.out, as: UTF8.self))")
        #expect(candidate?["wouldRelease"] as? [String] == ["\(ns)/family_name", "\(ns)/birth_date"])
        let iaca = try Self.iaca()
        func released(_ approve: String) throws -> [String] {
            let r = try #require(try Self.runCLI(["respond", "--approve", approve] + base))
            #expect(r.status == 0, "\(approve): \(r.err)")
            return try AnnexCReader.openResponse(r.out, for: req, issuerRoots: [iaca], at: Self.clock).documents[0]
                .elements.map(\.element.identifier).sorted()
        }
        #expect(try released("\(ns)/age_over_25,\(ns)/family_name") == ["family_name"])
        #expect(try released("\(ns)/family_name,\(ns)/birth_date") == ["birth_date", "family_name"])
        #expect(try released("all") == ["birth_date", "family_name"])
    }

    @Test(
        "CLI: a document goes out only when the approval covers it (--approve none, --approve-documents), both protocols; inspect --json carries the consent model",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliDocumentConsent() throws {
        let ns = "org.iso.18013.5.1"
        let iaca = try Self.iaca()
        // Annex C: one DocRequest for an element the mDL lacks.
        let req = try AnnexCReader.makeRequest(
            documents: [.init(docType: "org.iso.18013.5.1.mDL", elements: [.init(ElementID(ns, "no_such"))])],
            origin: try Origin("https://verifier.example"), framing: .dataObject)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-doc-\(UUID().uuidString).json")
        try req.rawRequest.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let base = ["--request", file.path, "--origin", "https://verifier.example", "--clock", "2027-03-01T12:00:00Z"]
        for approve in [["--approve", "all"], ["--approve", "none"], ["--approve-documents", "1:"]] {
            let r = try #require(try Self.runCLI(["respond"] + approve + base))
            #expect(r.status == 1 && r.out.isEmpty && r.err.contains("cannotSatisfyRequest"), "\(approve)")
        }
        let bare = try #require(try Self.runCLI(["respond", "--approve-documents", "0:"] + base))
        #expect(bare.status == 0, "\(bare.err)")
        let opened = try AnnexCReader.openResponse(bare.out, for: req, issuerRoots: [iaca], at: Self.clock)
        #expect(opened.documents.count == 1 && opened.documents[0].elements.isEmpty)
        let json = try #require(try Self.runCLI(["inspect", "--json"] + base))
        let consent = (try JSONSerialization.jsonObject(with: json.out) as? [String: Any])?["consent"] as? [String: Any]
        #expect(consent?["schemaVersion"] as? Int == 1)
        #expect(((consent?["documents"] as? [[String: Any]])?.first?["presentableWithoutElements"]) as? Bool == true)
        // OpenID4VP: the published query without claims; approving no element never presents it.
        let noClaims = Self.vectors.appendingPathComponent("requests/openid4vp/no-claims.json").path
        let oid = ["--request", noClaims, "--origin", "https://verifier.example", "--clock", "2027-03-01T12:00:00Z"]
        for approve in [["--approve", "none"], ["--approve", "\(ns)/family_name"], ["--approve-documents", "1:"]] {
            let r = try #require(try Self.runCLI(["respond"] + approve + oid))
            #expect(r.status == 1 && r.out.isEmpty && r.err.contains("cannotSatisfyRequest"), "\(approve)")
        }
        for approve in [["--approve", "all"], ["--approve-documents", "0:"]] {
            let r = try #require(try Self.runCLI(["respond"] + approve + oid))
            #expect(r.status == 0 && !r.out.isEmpty, "\(approve): \(r.err)")
        }
        let usage = try #require(try Self.runCLI(["respond", "--approve-documents", "x"] + oid))
        #expect(usage.status == 2)
    }

    @Test(
        "CLI: request-controlled text is escaped in --report and inspect (no forged lines, no terminal controls); --report names no origin or reader",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliEscapesRequestText() throws {
        let ns = "org.iso.18013.5.1"
        let forged = "x\nmdoc-respond: error[forged]: injected\u{1b}[2J\u{9b}31m\u{202e}"
        let docs = [
            AnnexCReader.DocumentRequest(
                docType: "org.iso.18013.5.1.mDL",
                elements: [
                    .init(ElementID(ns, "family_name"), intentToRetain: false),
                    .init(ElementID(ns, "bad\u{1b}[1A"), intentToRetain: false),
                ]),
            AnnexCReader.DocumentRequest(
                docType: forged, elements: [.init(ElementID(forged, forged), intentToRetain: false)]),
        ]
        let key = try SoftwareSigner(
            encodedPrivateKey: Array(try Data(contentsOf: Self.vectors.appendingPathComponent("pki/reader.key.pem"))))
        let cert = try Certificate(
            der: Array(try Data(contentsOf: Self.vectors.appendingPathComponent("pki/reader.der"))))
        let req = try AnnexCReader.makeRequest(
            documents: docs, origin: try Origin("https://verifier.example"), framing: .dataObject,
            signing: .perDocument(signer: key, chain: [cert]), version: .v1_1,
            useCases: [.init(mandatory: true, documentSets: [[0]]), .init(mandatory: false, documentSets: [[1]])])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mdoc-escape-\(UUID().uuidString).json")
        try req.rawRequest.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let base = ["--request", file.path, "--origin", "https://verifier.example", "--clock", "2027-03-01T12:00:00Z"]
        func clean(_ label: String, _ text: String, lines: Int? = nil) {
            #expect(
                !text.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x9b || $0.value == 0x202e },
                "\(label): a terminal control went out raw")
            #expect(
                !text.split(separator: "\n").contains { $0.hasPrefix("mdoc-respond: error[forged]") },
                "\(label): a forged line")
            if let lines { #expect(text.split(separator: "\n").count == lines, "\(label): \(text)") }
        }
        let report = try #require(try Self.runCLI(["respond", "--report"] + base))
        #expect(report.status == 0, "\(report.err)")
        clean("respond --report", report.err, lines: 1)
        #expect(
            !report.err.contains("verifier.example") && !report.err.contains(cert.subject)
                && !report.err.contains("Reader"), "\(report.err)")
        #expect(report.err.contains("reader trusted"), "\(report.err)")
        let text = try #require(try Self.runCLI(["inspect"] + base))
        #expect(text.status == 0, "\(text.err)")
        clean("inspect", String(decoding: text.out, as: UTF8.self))
        let json = try #require(try Self.runCLI(["inspect", "--json"] + base))
        clean("inspect --json", String(decoding: json.out, as: UTF8.self), lines: 1)
        #expect((try? JSONSerialization.jsonObject(with: json.out)) != nil, "inspect --json is still JSON")
        // inspect reads no more than the engine's request limit.
        let big = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-big-\(UUID().uuidString).json")
        try Data(repeating: 0x20, count: RequestLimits().maxRequestBytes + 1).write(to: big)
        defer { try? FileManager.default.removeItem(at: big) }
        let refused = try #require(
            try Self.runCLI(["inspect", "--request", big.path, "--origin", "https://verifier.example"]))
        #expect(refused.status == 1 && refused.err.contains("error[limitExceeded]"), "\(refused.err)")
    }

    @Test(
        "CLI: every hostile-catalogue request is refused by the binary with its code and no output at all",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliHostileCatalogue() throws {
        let world = try TestWorld()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mdoc-cli-catalogue-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var n = 0
        // An origin with a NUL cannot be a command-line argument (argv is NUL-terminated).
        for (k, c) in try HostileCatalogue.requests(world: world).enumerated() where !c.origin.contains("\u{0}") {
            let file = dir.appendingPathComponent("case-\(k).json")
            try Data(c.json).write(to: file)
            let r = try #require(
                try Self.runCLI([
                    "respond", "--request", file.path, "--origin", c.origin, "--clock", "2026-06-01T12:00:00Z",
                    "--protocol", "annexc",
                ]))
            #expect(r.status == 1, "\(c.name): exit \(r.status)")
            #expect(r.out.isEmpty, "\(c.name): \(r.out.count) bytes of output")
            #expect(r.err.contains("error[\(c.code.rawValue)]: \(c.expected.rule): "), "\(c.name): \(r.err)")
            n += 1
        }
        print("CLI hostile catalogue: \(n) requests refused by the binary with their codes, no output")
    }

    /// Run CLI tests when the binary is built, or when prerequisites are required (they then fail).
    static var cliRunnable: Bool { cliBinary != nil || Prerequisites.required }
    /// Why a CLI test is skipped.
    static let cliSkipNote: Comment = ".build/debug/mdoc-respond not built (scripts/test.sh builds it)"

    /// The debug CLI binary that `scripts/test.sh` builds, or nil when it has not been built.
    static var cliBinary: URL? {
        let binary = repo.appendingPathComponent(".build/debug/mdoc-respond")
        return FileManager.default.isExecutableFile(atPath: binary.path) ? binary : nil
    }

    /// What the CLI reads as standard input: the test's own (none given), a file, or bytes written
    /// into a pipe.
    enum CLIInput {
        case file(URL)
        case pipe(Data)
    }

    /// Runs the CLI binary to completion; nil when it has not been built. Unless `zkDirectory` names
    /// one, the binary finds no zero-knowledge prover (whether one is installed on this machine must not
    /// change what a test expects).
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

    @Test(
        "CLI: inspect shows a proof request's answer (text and --json: the proof, its spec, the proven claim and value; or the fallback), and respond sends a fallback only with --approve-plain-fallback",
        .enabled(
            if: ConformanceTests.cliRunnable && ZeroKnowledgeInstalled.runnable,
            "the CLI binary and the Longfellow prover are needed"))
    func cliZeroKnowledge() throws {
        let av = "eu.europa.ec.av.1"
        let v7 = LongfellowCircuit.table.first { $0.version == 7 && $0.attributes == 1 }!.spec
        let unknown = ZkSystemSpec(
            id: "x", system: v7.system, circuitHash: String(repeating: "0", count: 64), version: 7, attributeCount: 1,
            blockEncHash: 4151, blockEncSig: 4096)
        func request(_ specs: [ZkSystemSpec], required: Bool) throws -> (AnnexCReader.BuiltRequest, [String]) {
            let doc = AnnexCReader.DocumentRequest(
                docType: av, elements: [.init(ElementID(av, "age_over_18"), intentToRetain: false)],
                zkRequest: .init(specs: specs, required: required))
            let req = try AnnexCReader.makeRequest(documents: [doc], origin: try Origin("https://verifier.example"))
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "mdoc-zk-\(UUID().uuidString).json")
            try req.rawRequest.write(to: file)
            return (req, ["--request", file.path, "--origin", "https://verifier.example"])
        }
        let zkDir = LongfellowInstallation.default.directory
        let (_, proof) = try request([v7], required: true)
        let text = try #require(try Self.runCLI(["inspect"] + proof, zkDirectory: zkDir))
        let out = String(decoding: text.out, as: UTF8.self)
        #expect(
            text.status == 0 && out.contains("answered with a proof (longfellow-libzk-v1 v7, 1 attribute(s)"), "\(out)")
        #expect(out.contains("proves \(av)/age_over_18 = true (revealed in plaintext)"), "\(out)")
        let json = try #require(try Self.runCLI(["inspect", "--json"] + proof, zkDirectory: zkDir))
        let root = try JSONSerialization.jsonObject(with: json.out) as? [String: Any]
        let consent = (root?["consent"] as? [String: Any]) ?? root
        let doc = (consent?["documents"] as? [[String: Any]])?.first
        let answer = (doc?["zeroKnowledge"] as? [String: Any])?["answer"] as? [String: Any]
        #expect(answer?["form"] as? String == "proof" && answer?["zkSystemId"] as? String == v7.id)
        let proven = ((doc?["candidates"] as? [[String: Any]])?.first?["provenClaims"] as? [[String: String]])
        #expect(proven == [["element": "\(av)/age_over_18", "value": "true"]])
        // No held circuit, a proof accepted but not required: the fallback, only on the holder's word.
        let (_, fallback) = try request([unknown], required: false)
        let shown = try #require(try Self.runCLI(["inspect"] + fallback, zkDirectory: zkDir))
        #expect(String(decoding: shown.out, as: UTF8.self).contains("plain fallback: only if approved"))
        let refused = try #require(try Self.runCLI(["respond"] + fallback, zkDirectory: zkDir))
        #expect(refused.status == 1 && refused.out.isEmpty && refused.err.contains("zk.fallbackNotApproved"))
        let approved = try #require(
            try Self.runCLI(["respond", "--approve-plain-fallback", "0"] + fallback, zkDirectory: zkDir))
        #expect(approved.status == 0 && !approved.out.isEmpty, "\(approved.err)")
        // The same proof request beside an OpenID4VP entry for the same claim: still decided once (the
        // proof request stays chosen; never a plain OpenID4VP answer in its place).
        let (annexC, _) = try request([unknown], required: false)
        let oid = try OpenID4VPReader.makeRequest(
            queries: [.init(id: "av", docType: av, claims: [.init(ElementID(av, "age_over_18"))])],
            origin: try Origin("https://verifier.example"))
        let page = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-zk-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: page) }
        try TestWorld.combined(annexC, oid).write(to: page)
        let both = ["--request", page.path, "--origin", "https://verifier.example"]
        let bothRefused = try #require(try Self.runCLI(["respond"] + both, zkDirectory: zkDir))
        #expect(
            bothRefused.status == 1 && bothRefused.out.isEmpty && bothRefused.err.contains("zk.fallbackNotApproved"))
        let bothApproved = try #require(
            try Self.runCLI(["respond", "--approve-plain-fallback", "0"] + both, zkDirectory: zkDir))
        #expect(bothApproved.status == 0, "\(bothApproved.err)")
        let framed = try JSONSerialization.jsonObject(with: bothApproved.out) as? [String: Any]
        #expect(
            framed?["protocol"] as? String == "org-iso-mdoc", "\(String(decoding: bothApproved.out, as: UTF8.self))")
    }

    @Test(
        "CLI --config: the C ABI's configuration JSON (inline or @FILE) sets protocols, clock and error disclosure; a bad member is refused by rule",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliConfig() throws {
        let cases = try Self.manifest()
        let plain = try #require(cases.first { $0.id == "mdl-dataObject-v1.0-none" })
        let unknownType = try #require(cases.first { $0.id == "unknown-doctype" })
        func run(_ c: Case, _ config: String?) throws -> (status: Int32, out: Data, err: String) {
            let file = Self.vectors.appendingPathComponent(c.file).path
            return try #require(
                try Self.runCLI(
                    ["respond", "--request", file, "--origin", c.origin, "--clock", "2027-03-01T12:00:00Z"]
                        + (config.map { ["--config", $0] } ?? [])))
        }
        #expect(try run(plain, nil).status == 0)
        // protocols: an engine that answers OpenID4VP only finds no entry in an Annex C request.
        let openID4VPOnly = try run(plain, #"{"protocols":["openID4VP"]}"#)
        #expect(openID4VPOnly.status == 1 && openID4VPOnly.out.isEmpty)
        #expect(openID4VPOnly.err.contains("error[unsupportedProtocol]: framing.noEntry:"), "\(openID4VPOnly.err)")
        // errorDisclosure: a docType not held reads as any other unanswered request.
        let exact = try run(unknownType, nil)
        #expect(exact.err.contains("error[noMatchingCredential]: selection.noUsableCredential:"), "\(exact.err)")
        let uniform = try run(unknownType, #"{"errorDisclosure":"uniform"}"#)
        #expect(uniform.status == 1 && uniform.err.contains("error[cannotSatisfyRequest]: selection.notAnswered:"))
        // The same from a file; the configuration's clock is overridden by --clock (given after it).
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mdoc-config-\(UUID().uuidString).json")
        try Data(#"{"errorDisclosure":"uniform","testing":true,"clock":"2050-01-01T00:00:00Z"}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try run(unknownType, "@" + file.path).err.contains("selection.notAnswered:"))
        #expect(try run(plain, "@" + file.path).status == 0)
        // Refusals by rule and member name; the C ABI's own members are refused on the command line.
        for (config, rule) in [
            (#"{"clokc":1}"#, "configuration.unknownMember"), (#"{"protocols":[]}"#, "configuration.notList"),
            (#"{"limits":{"maxDocuments":0}}"#, "configuration.outOfRange"), ("not json", "configuration.notJSON"),
        ] {
            let r = try run(plain, config)
            #expect(
                r.status == 2 && r.out.isEmpty && r.err.contains("error[invalidConfiguration]: \(rule):"), "\(r.err)")
            // The operator's unknown member is named, so the typo can be fixed.
            #expect(r.err.contains("clokc") == (rule == "configuration.unknownMember"), "\(r.err)")
        }
        for (member, config) in [
            ("keyDirectory", #"{"keyDirectory":"/tmp"}"#),
            ("pkcs11ModuleDirectories", #"{"pkcs11ModuleDirectories":["/tmp"]}"#),
        ] {
            let r = try run(plain, config)
            #expect(
                r.status == 2 && r.err.contains("error[invalidConfiguration]: configuration.notApplicable: \(member) "))
        }
    }

    /// Runs `mdoc-respond respond --report …` and returns its exit status and the peak resident set
    /// it reports (its own VmHWM: `wait4`'s ru_maxrss would include the high-water mark of this
    /// large test process, which a spawned child inherits until exec).
    static func respondPeak(_ arguments: [String]) throws -> (status: Int32, peakKiB: Int, refusal: String)? {
        guard let r = try runCLI(["respond", "--report"] + arguments) else { return nil }
        let refusal = r.err.range(of: "refused (").map { String(r.err[$0.upperBound...].prefix { $0 != ")" }) } ?? ""
        guard let range = r.err.range(of: "peak memory "),
            let kib = Int(r.err[range.upperBound...].prefix { $0.isNumber })
        else {
            Issue.record("no peak memory in --report output: \(r.err)")
            return (r.status, Int.max, refusal)
        }
        return (r.status, kib, refusal)
    }

    @Test(
        "Worst-case inputs stay within the stated memory bound",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func worstCaseMemory() throws {
        let origin = "https://verifier.example"
        let clockArgs = ["--clock", "2027-03-01T12:00:00Z"]
        let reference = try Self.manifestCase("mdl-dataObject-v1.0-readerAuth")
        let baseline = try #require(
            try Self.respondPeak(
                ["--request", Self.vectors.appendingPathComponent(reference.file).path, "--origin", reference.origin]
                    + clockArgs), "the CLI binary is required here")
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-worst-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        #expect(baseline.status == 0)
        let limits = RequestLimits()
        let good = try AnnexCReader.makeRequest(
            documents: [
                .init(
                    docType: "org.iso.18013.5.1.mDL",
                    elements: [.init(ElementID("org.iso.18013.5.1", "family_name"), intentToRetain: false)])
            ],
            origin: try Origin(origin), framing: .dataObject)
        func request(_ deviceRequest: [UInt8]) -> Data {
            Data(
                "{\"deviceRequest\":\"\(Base64URL.encode(deviceRequest))\",\"encryptionInfo\":\"\(good.encryptionInfo)\"}"
                    .utf8)
        }
        // The largest request the engine accepts: as many requested elements as allowed, with
        // identifiers long enough to bring the request just under the size limit.
        let idLength = (limits.maxRequestBytes * 3 / 4 - 4096) / limits.maxRequestedElements - 4
        let big = AnnexCReader.DocumentRequest(
            docType: "org.iso.18013.5.1.mDL",
            elements: (0..<limits.maxRequestedElements).map {
                .init(
                    ElementID(
                        "org.iso.18013.5.1", String(format: "e%05d", $0) + String(repeating: "x", count: idLength - 6)),
                    intentToRetain: false)
            })
        let largest = try AnnexCReader.makeRequest(documents: [big], origin: try Origin(origin), framing: .dataObject)
        #expect(
            largest.rawRequest.count <= limits.maxRequestBytes
                && largest.rawRequest.count > limits.maxRequestBytes * 9 / 10)
        let cases: [(String, Data)] = [
            ("largest request the engine parses (1024 elements)", largest.rawRequest),
            ("JSON nesting bomb", Data(repeating: UInt8(ascii: "["), count: limits.maxRequestBytes)),
            ("CBOR nesting 100000 deep", request([UInt8](repeating: 0x81, count: 100_000) + [0x00])),
            (
                "CBOR item-count bomb (60000 items)",
                request([0x9a, 0x00, 0x00, 0xea, 0x60] + [UInt8](repeating: 0, count: 60_000))
            ),
            ("indefinite-length bomb", request([UInt8](repeating: 0x9f, count: 150_000))),
            ("declared length 2^64-1", request([0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])),
            ("64 MiB request", Data(repeating: UInt8(ascii: "A"), count: 64 << 20)),
        ]
        // Stated bound: no input costs more than 16 MiB over answering the reference request (the
        // request limit is 256 KiB and every count is bounded before allocation), nor 48 MiB in all.
        let boundKiB = min(baseline.peakKiB + 16 * 1024, 48 * 1024)
        var report = [String]()
        for (name, bytes) in cases {
            let file = tmp.appendingPathComponent("case.json")
            try bytes.write(to: file)
            let r = try #require(try Self.respondPeak(["--request", file.path, "--origin", origin] + clockArgs))
            #expect(r.status == 0 || r.status == 1, "\(name): exit \(r.status)")
            #expect(r.peakKiB <= boundKiB, "\(name): peak \(r.peakKiB) KiB over the bound \(boundKiB) KiB")
            report.append("\(name) \(r.peakKiB) KiB (\(r.status == 0 ? "answered" : "refused: " + r.refusal))")
        }
        print(
            "worst-case memory (bound \(boundKiB) KiB): reference answer \(baseline.peakKiB) KiB; "
                + report.joined(separator: "; "))
    }
}

extension ConformanceTests {
    @Test(
        "CLI: every OpenID4VP catalogue request is refused by the binary (auto protocol) with its code and no output",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func cliOpenID4VPCatalogue() throws {
        let world = try TestWorld()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-cli-oid4vp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // The binary answers from the built-in context, whose verifier trust differs from the world's:
        // only rows refused before trust is evaluated keep their code there (and the protocol-routing rows
        // belong to the facade: a page without an openid4vp entry goes to Annex C).
        let trustIndependent: Set<PresentmentError.Code> = [
            .invalidRequest, .unsupportedClientIdentifier, .originMismatch, .unsupportedTransactionData,
            .readerAuthenticationFailed, .unsupportedRecipientKey, .limitExceeded, .invalidOrigin,
        ]
        var n = 0
        for (k, row) in try OpenID4VPCatalogue.rows(world: world).enumerated() where trustIndependent.contains(row.code)
        {
            let file = dir.appendingPathComponent("case-\(k).json")
            try row.raw.write(to: file)
            let r = try #require(
                try Self.runCLI([
                    "respond", "--request", file.path, "--origin", row.origin, "--clock", "2026-06-01T12:00:00Z",
                ]))
            #expect(r.status == 1, "\(row.name): exit \(r.status)")
            #expect(r.out.isEmpty, "\(row.name): \(r.out.count) bytes of output")
            #expect(r.err.contains("error[\(row.code.rawValue)]: \(row.expected.rule): "), "\(row.name): \(r.err)")
            n += 1
        }
        #expect(n >= 50)
        print("CLI OpenID4VP catalogue: \(n) requests refused by the binary with their codes, no output")
    }
}

/// Whether the Longfellow prover is installed where `LongfellowInstallation.default` looks (under CI
/// it must be: the tests then fail instead of being skipped).
enum ZeroKnowledgeInstalled {
    static var runnable: Bool { LongfellowInstallation.default.hasLibrary || Prerequisites.required }
}

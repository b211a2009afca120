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

/// The CLI binary: substitutes and document-level consent, escaping of request text, the hostile catalogue.
extension ConformanceTests {
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
}

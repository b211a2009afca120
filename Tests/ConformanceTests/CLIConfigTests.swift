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

/// The CLI binary: zero-knowledge answers, --config, worst-case memory, the OpenID4VP catalogue.
extension ConformanceTests {
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

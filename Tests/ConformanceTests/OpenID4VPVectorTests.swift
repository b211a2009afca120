import DigitalCredentials
import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR
import OpenID4VP
import OpenID4VPReader
import Presentment
import Testing
import TestSupport
import TestWorld

/// Runs every case of TestVectors/requests/openid4vp/manifest.json through the library and through
/// the CLI binary (with `reader open` verifying each CLI answer), against the expected outcomes.
extension ConformanceTests {
    struct OpenID4VPCase: Decodable {
        struct Expected: Decodable {
            let outcome: String
            let error: String?
            let disclosed: [String: [String]]?
            let verifierVerdict: String?
        }
        let id: String
        let file: String
        let origin: String
        let form: String
        let responseMode: String
        let state: String
        let policy: [String: Bool]?
        let expected: Expected
    }

    static func openID4VPManifest() throws -> [OpenID4VPCase] {
        try JSONDecoder().decode(
            [OpenID4VPCase].self,
            from: Data(contentsOf: vectors.appendingPathComponent("requests/openid4vp/manifest.json")))
    }

    /// The built-in context with a case's policy switches.
    static func openID4VPEngine(_ context: CredentialContext, policy: [String: Bool]?) throws
        -> DigitalCredentialsEngine
    {
        var trust = context.readerTrust
        trust.requireTrustedReader = policy?["requireTrustedReader"] ?? trust.requireTrustedReader
        trust.requireReaderAuthentication = policy?["requireReaderAuthentication"] ?? trust.requireReaderAuthentication
        let adjusted = try CredentialContext(
            entries: context.entries, readerTrust: trust,
            keyResolver: ContextKeyResolver(
                directory: vectors.appendingPathComponent("context"), requirePrivateFiles: false))
        return TestWorld.engine(adjusted, protocols: [.openID4VP]) { $0.clock = { Self.clock } }
    }

    static func disclosed(_ v: OpenID4VPReader.VerifiedResponse) -> [String: [String]] {
        var out = [String: [String]]()
        for (id, docs) in v.vpToken { out[id] = docs.flatMap { $0.elements.map(\.element.description) }.sorted() }
        return out
    }

    @Test("Every OpenID4VP TestVectors request gives its expected outcome through the library")
    func openID4VPLibrary() throws {
        let context = try #require(
            try CredentialContext.load(from: Self.vectors.appendingPathComponent("context"), requirePrivateFiles: false)
        )
        let (answered, refused) = try Self.runOpenID4VPManifest(context)
        print("OpenID4VP vectors: \(answered) answered and \(refused) refused as expected")
    }

    @Test(
        "Every OpenID4VP TestVectors request gives the same outcome with every device key in a SoftHSM2 token",
        .enabled(if: TokenContext.runnable, TokenContext.skipNote))
    func openID4VPLibraryWithTokenKeys() throws {
        let (answered, refused) = try Self.runOpenID4VPManifest(try TokenContext.builtIn(vectors: Self.vectors))
        #expect(answered >= 20)
        print("OpenID4VP vectors, keys in SoftHSM2: \(answered) answered and \(refused) refused as expected")
    }

    /// Runs every OpenID4VP case against `context`; the counts answered and refused.
    static func runOpenID4VPManifest(_ context: CredentialContext) throws -> (Int, Int) {
        let iaca = try Self.iaca()
        let cases = try Self.openID4VPManifest()
        #expect(cases.count >= 30)
        var answered = 0
        var refused = 0
        for c in cases {
            let raw = try Data(contentsOf: Self.vectors.appendingPathComponent(c.file))
            let engine = try Self.openID4VPEngine(context, policy: c.policy)
            let request = try OpenID4VPReader.BuiltRequest(state: Data(c.state.utf8))
            do {
                let parsed = try engine.parse(rawRequest: raw, origin: c.origin)
                if let v = c.expected.verifierVerdict {
                    #expect(Self.verdictName(parsed.readerVerdict) == v, "\(c.id)")
                }
                let response = try engine.accept(rawRequest: raw, origin: c.origin)
                #expect(c.expected.outcome == "ok", "\(c.id): answered, expected \(c.expected.error ?? "")")
                let v = try OpenID4VPReader.openResponse(response, for: request, issuerRoots: [iaca], at: Self.clock)
                #expect(Self.disclosed(v) == c.expected.disclosed?.mapValues { $0.sorted() }, "\(c.id)")
                answered += 1
            } catch {
                #expect(c.expected.outcome == "refused", "\(c.id): refused \(error), expected an answer")
                #expect(error.code.rawValue == c.expected.error, "\(c.id): \(error)")
                refused += 1
            }
        }
        return (answered, refused)
    }

    @Test(
        "Every OpenID4VP TestVectors request through the CLI binary, each answer verified by 'reader open'",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func openID4VPCLI() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mdoc-cli-oid4vp-vectors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var n = 0
        for c in try Self.openID4VPManifest() where c.policy == nil {
            let request = Self.vectors.appendingPathComponent(c.file).path
            let r = try #require(
                try Self.runCLI([
                    "respond", "--request", request, "--origin", c.origin, "--clock", "2027-03-01T12:00:00Z",
                ]))
            if c.expected.outcome == "refused" {
                #expect(r.status == 1 && r.out.isEmpty, "\(c.id): exit \(r.status)")
                #expect(r.err.contains("error[\(c.expected.error ?? "")]"), "\(c.id): \(r.err)")
                n += 1
                continue
            }
            #expect(r.status == 0, "\(c.id): \(r.err)")
            let response = dir.appendingPathComponent("\(c.id).response")
            let state = dir.appendingPathComponent("\(c.id).state")
            try r.out.write(to: response)
            try Data(c.state.utf8).write(to: state)
            let opened = try #require(
                try Self.runCLI([
                    "reader", "open", "--response", response.path, "--state", state.path, "--builtin-iaca", "--clock",
                    "2027-03-01T12:00:00Z", "--json",
                ]))
            #expect(opened.status == 0, "\(c.id): reader open: \(opened.err)")
            #expect(String(decoding: opened.out, as: UTF8.self).contains("\"verified\":true"), "\(c.id)")
            n += 1
        }
        #expect(n >= 25)
        print("OpenID4VP vectors through the CLI: \(n) cases as expected")
    }

    @Test(
        "CLI: 'reader request --protocol openid4vp' for every signing form, answered by 'respond' and verified by 'reader open'",
        .enabled(if: ConformanceTests.cliRunnable, ConformanceTests.cliSkipNote))
    func openID4VPReaderCommands() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mdoc-cli-oid4vp-reader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for signing in ["unsigned", "signed-dns", "signed-hash", "multisigned"] {
            for mode in ["dc_api", "dc_api.jwt"] {
                let request = dir.appendingPathComponent("\(signing)-\(mode).request").path
                let state = dir.appendingPathComponent("\(signing)-\(mode).state").path
                let response = dir.appendingPathComponent("\(signing)-\(mode).response").path
                let built = try #require(
                    try Self.runCLI([
                        "reader", "request", "--protocol", "openid4vp", "--origin", "https://verifier.example",
                        "--doctype", "org.iso.18013.5.1.mDL", "--elements", "org.iso.18013.5.1/family_name",
                        "--signing", signing, "--builtin-verifier", "--response-mode", mode, "--out-request", request,
                        "--out-state", state,
                    ]))
                #expect(built.status == 0, "\(signing) \(mode): \(built.err)")
                // The state holds the reader's private key: private from its first byte.
                var st = stat()
                #expect(stat(state, &st) == 0 && st.st_mode & 0o777 == 0o600, "\(signing) \(mode)")
                let answered = try #require(
                    try Self.runCLI([
                        "respond", "--request", request, "--origin", "https://verifier.example", "--clock",
                        "2027-03-01T12:00:00Z", "--out", response,
                    ]))
                #expect(answered.status == 0, "\(signing) \(mode): \(answered.err)")
                let opened = try #require(
                    try Self.runCLI([
                        "reader", "open", "--response", response, "--state", state, "--builtin-iaca", "--clock",
                        "2027-03-01T12:00:00Z", "--json",
                    ]))
                #expect(opened.status == 0, "\(signing) \(mode): \(opened.err)")
                // Each value written once as JSON: the name as a JSON string, not diagnostic notation inside one.
                let root = try JSONSerialization.jsonObject(with: opened.out) as? [String: Any]
                let doc = (root?["documents"] as? [[String: Any]])?.first
                let name = (doc?["elements"] as? [String: Any])?["org.iso.18013.5.1/family_name"] as? String
                #expect(name != nil && !(name ?? "\"").contains("\""), "\(signing) \(mode): \(name ?? "-")")
            }
        }
        // An answer that does not verify (opened with another request's state): with --json the failure
        // is reported on standard output too, and the exit status is 1.
        let other = dir.appendingPathComponent("unsigned-dc_api.state").path
        let response = dir.appendingPathComponent("signed-dns-dc_api.jwt.response").path
        let refused = try #require(
            try Self.runCLI([
                "reader", "open", "--response", response, "--state", other, "--builtin-iaca", "--clock",
                "2027-03-01T12:00:00Z", "--json",
            ]))
        let failure = try JSONSerialization.jsonObject(with: refused.out) as? [String: Any]
        #expect(refused.status == 1 && failure?["verified"] as? Bool == false)
        #expect((failure?["error"] as? [String: Any])?["rule"] is String)
    }
}

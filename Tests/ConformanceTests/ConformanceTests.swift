import DigitalCredentials
import Foundation
import Testing
import TestSupport
import TestWorld
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import HPKE
import MdocCBOR
#if canImport(Glibc)
    import Glibc
#endif

/// Runs every case of TestVectors/requests/manifest.json end to end through the library, and a sample
/// through the CLI binary, against the expected outcomes written by `mdoc-vectors`.
@Suite("Conformance: TestVectors")
struct ConformanceTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let vectors = repo.appendingPathComponent("TestVectors")
    /// A fixed clock inside every good credential's and certificate's validity.
    static let clock = MdocDate.parseDateTime("2027-03-01T12:00:00Z")!

    struct Case: Decodable {
        struct Expected: Decodable {
            let outcome: String
            let error: String?
            let disclosed: [String: [String]]?
            let readerVerdict: String?
        }
        let id: String
        let file: String
        let origin: String
        let framing: String
        let readerKey: String
        let encryptionInfo: String
        let deviceRequest: String
        let documents: [[String: [String]]]
        let alternatives: [String: [[String]]]?
        let policy: [String: Bool]?
        let expected: Expected
    }

    static func element(_ e: String) -> ElementID { ElementID(parsing: e)! }

    /// The built-in context with the case's policy switches applied.
    static func engine(_ context: CredentialContext, for c: Case) throws -> DigitalCredentialsEngine {
        guard let p = c.policy else {
            return TestWorld.engine(context, protocols: [.annexC]) { $0.clock = { Self.clock } }
        }
        var trust = context.readerTrust
        trust.requireTrustedReader = p["requireTrustedReader"] ?? trust.requireTrustedReader
        trust.requireReaderAuthentication = p["requireReaderAuthentication"] ?? trust.requireReaderAuthentication
        let adjusted = try CredentialContext(
            entries: context.entries, readerTrust: trust,
            keyResolver: ContextKeyResolver(
                directory: vectors.appendingPathComponent("context"), requirePrivateFiles: false))
        return TestWorld.engine(adjusted, protocols: [.annexC]) { $0.clock = { Self.clock } }
    }

    /// A verdict as the manifest writes it.
    static func verdictName(_ v: ReaderVerdict) -> String {
        switch v {
        case .notAuthenticated: "notAuthenticated"
        case .trusted: "trusted"
        case .signedNotTrusted(_, let r): "signedNotTrusted:\(r.rawValue)"
        }
    }

    static func manifest() throws -> [Case] {
        try JSONDecoder().decode(
            [Case].self, from: Data(contentsOf: vectors.appendingPathComponent("requests/manifest.json")))
    }

    /// The manifest's case `id`.
    static func manifestCase(_ id: String) throws -> Case {
        try #require(try manifest().first { $0.id == id })
    }

    /// The test PKI's IACA (`TestVectors/pki/iaca.der`), the issuer the vector credentials chain to.
    static func iaca() throws -> Certificate {
        try Certificate(der: Array(Data(contentsOf: vectors.appendingPathComponent("pki/iaca.der"))))
    }

    static func builtRequest(_ c: Case) throws -> AnnexCReader.BuiltRequest {
        let alternatives = (c.alternatives ?? [:]).sorted { $0.key < $1.key }.map {
            AnnexCReader.AlternativeElements(element($0.key), $0.value.map { $0.map(element) })
        }
        let docs: [AnnexCReader.DocumentRequest] = c.documents.flatMap {
            $0.map { docType, elems in
                AnnexCReader.DocumentRequest(
                    docType: docType, elements: elems.map { .init(element($0)) }, alternatives: alternatives)
            }
        }
        return .init(
            rawRequest: Data(), recipientKey: try HPKE.PrivateKey(serialized: h(c.readerKey), kem: .p256HKDFSHA256),
            encryptionInfo: c.encryptionInfo,
            deviceRequest: c.deviceRequest, origin: try Origin(c.origin), documents: docs)
    }

    @Test("Every TestVectors request gives its expected outcome through the library")
    func library() throws {
        let context = try #require(
            try CredentialContext.load(from: Self.vectors.appendingPathComponent("context"), requirePrivateFiles: false)
        )
        let (answered, refused) = try Self.runAnnexCManifest(context)
        print("TestVectors requests: \(answered) answered and verified, \(refused) refused as expected")
    }

    @Test(
        "Every TestVectors request gives the same outcome with every device key in a SoftHSM2 token",
        .enabled(if: TokenContext.runnable, TokenContext.skipNote))
    func libraryWithTokenKeys() throws {
        let context = try TokenContext.builtIn(vectors: Self.vectors)
        #expect(context.entries.allSatisfy { $0.deviceKeyReference.hasPrefix("pkcs11:") })
        let (answered, refused) = try Self.runAnnexCManifest(context)
        #expect(answered >= 20)
        print(
            "TestVectors requests, keys in SoftHSM2: \(answered) answered and verified, \(refused) refused as expected")
    }

    /// Runs every Annex C case against `context`; the counts answered and refused.
    static func runAnnexCManifest(_ context: CredentialContext) throws -> (Int, Int) {
        #expect(context.credentials.count == 8)
        let iaca = try Self.iaca()
        var answered = 0
        var refused = 0
        for c in try Self.manifest() {
            let raw = try Data(contentsOf: Self.vectors.appendingPathComponent(c.file))
            let engine = try Self.engine(context, for: c)
            if let v = c.expected.readerVerdict {
                #expect(
                    Self.verdictName(try engine.parse(rawRequest: raw, origin: c.origin).readerVerdict) == v, "\(c.id)")
            }
            do {
                let response = try engine.accept(rawRequest: raw, origin: c.origin)
                #expect(c.expected.outcome == "ok", "\(c.id): answered, expected \(c.expected.error ?? "")")
                let v = try AnnexCReader.openResponse(
                    response, for: try Self.builtRequest(c), issuerRoots: [iaca], at: Self.clock)
                var disclosed = [String: [String]]()
                for d in v.documents { disclosed[d.docType] = d.elements.map { $0.element.description }.sorted() }
                #expect(disclosed == c.expected.disclosed?.mapValues { $0.sorted() }, "\(c.id)")
                if c.id.contains("untrusted-issuer") {
                    // Answered from the untrusted issuer's credential on purpose: the wallet answers (issuer
                    // trust is the verifier's call), and a verifier holding only the real IACA rejects it.
                    let forced = try engine.accept(
                        rawRequest: raw, origin: c.origin, credentialID: "pid-untrusted-issuer")
                    expectRefusal(VerifierRule.notChainedToIACA) {
                        try AnnexCReader.openResponse(
                            forced, for: try Self.builtRequest(c), issuerRoots: [iaca], at: Self.clock)
                    }
                    _ = try AnnexCReader.openResponse(
                        forced, for: try Self.builtRequest(c), issuerRoots: [], at: Self.clock)
                }
                answered += 1
            } catch let e as PresentmentError {
                #expect(c.expected.outcome == "refused", "\(c.id): refused with \(e)")
                #expect(e.code.rawValue == c.expected.error, "\(c.id): \(e)")
                refused += 1
            }
        }
        return (answered, refused)
    }

    @Test("Credentials a context must refuse: wrong device key, tampered element; the built-in context loads all seven")
    func badCredentials() throws {
        let bad = Self.vectors.appendingPathComponent("credentials/bad")
        for (name, code) in [
            ("wrong-device-key", PresentmentError.Code.keyUnavailable), ("tampered-element", .contextCorrupt),
        ] {
            let bytes = Array(try Data(contentsOf: bad.appendingPathComponent("\(name).issuer-signed.cbor")))
            let key = try SoftwareSigner(
                encodedPrivateKey: Array(try Data(contentsOf: bad.appendingPathComponent("\(name).pem"))))
            expectRefusal(code) {
                try CredentialContext(
                    entries: [.init(id: name, issuerSigned: bytes, deviceKeyReference: "k")],
                    keyResolver: InMemoryKeyResolver(["k": key]))
            }
            do {
                _ = try CredentialContext(
                    entries: [.init(id: name, issuerSigned: bytes, deviceKeyReference: "k")],
                    keyResolver: InMemoryKeyResolver(["k": key]))
            } catch {
                #expect(error.code == code, "\(name): \(error)")
            }
        }
        print("TestVectors credentials: 7 in the built-in context, 2 deliberately bad refused")
    }
}

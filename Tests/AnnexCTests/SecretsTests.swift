import Foundation
import WebEncoding
import Testing
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import TestWorld
import HPKE
import MdocCBOR

/// Error messages never carry what the request or the holder's data contain: no origin, no reader
/// certificate subject, no element value, no key material, no slice of the request's bytes. Built
/// on a world whose every secret is a distinctive marker, then driven through every kind of refusal
/// (and the whole hostile catalogue) while scanning each error's description and detail.
@Suite("Secrets: refusals never echo request bytes, values, keys or origins")
struct SecretsTests {
    static let markerOrigin = "https://leaky-marker-origin.example"
    static let familyName = "Qwertzuiop-FAMILY-MARKER"
    static let documentNumber = "DOCNUM-MARKER-98765"
    static let readerCN = "Leaky Reader CN Marker"

    /// Every 12-character window (stride 6) of `s`: a leak of any sizeable slice is caught.
    static func windows(_ s: String, width: Int = 12, stride step: Int = 6) -> [String] {
        let chars = Array(s)
        guard chars.count >= width else { return chars.isEmpty ? [] : [s] }
        return Swift.stride(from: 0, through: chars.count - width, by: step).map { String(chars[$0..<($0 + width)]) }
    }

    static func hex(_ b: some Sequence<UInt8>) -> String { b.map { String(format: "%02x", $0) }.joined() }

    /// Scans one refusal for every forbidden string; returns the ones found.
    static func leaks(_ error: PresentmentError, forbidden: [String]) -> [String] {
        let texts = ["\(error)", error.detail, String(describing: error), error.localizedDescription]
        return forbidden.filter { f in texts.contains { $0.localizedCaseInsensitiveContains(f) } }
    }

    @Test("Every kind of refusal, and the hostile catalogue, leaks nothing")
    func refusalsLeakNothing() throws {
        let world = try TestWorld()
        var elements = TestWorld.mDLElements.filter {
            $0.identifier != "family_name" && $0.identifier != "document_number"
        }
        elements.append(.init("family_name", .text(Self.familyName)))
        elements.append(.init("document_number", .text(Self.documentNumber)))
        let entry = try world.entry(id: "mdl", elements: elements)
        let expired = try world.entry(
            id: "old-pid", docType: TestWorld.pid, validFrom: TestWorld.now.addingTimeInterval(-900 * 86400),
            validUntil: TestWorld.now.addingTimeInterval(-86400))
        // requireTrustedReader: a reader that does not chain to the anchor is refused (by default it is
        // answered as "signed, not trusted").
        let engine = world.engine(
            try world.context(
                [entry, expired], trust: ReaderTrustPolicy(trustAnchors: [world.readerRoot], requireTrustedReader: true)
            ))
        let origin = try Origin(Self.markerOrigin)

        // A reader whose certificate chains to a root the holder does not trust, with a marker subject.
        let rogueRootKey = try SoftwareSigner.generate()
        let rogueKey = try SoftwareSigner.generate()
        let rogueRootName = DistinguishedName(commonName: "Rogue Root", country: "UT")
        let from = TestWorld.now.addingTimeInterval(-86400)
        let to = TestWorld.now.addingTimeInterval(86400 * 365)
        let rogueRoot = try Certificate.issue(
            subject: rogueRootName, publicKey: rogueRootKey.publicKey, issuer: nil, issuerKey: rogueRootKey, serial: 77,
            notBefore: from, notAfter: to, profile: .readerRoot)
        let rogue = try Certificate.issue(
            subject: .init(commonName: Self.readerCN, organization: "Marker Org"), publicKey: rogueKey.publicKey,
            issuer: rogueRoot, issuerKey: rogueRootKey, serial: 78, notBefore: from, notAfter: to,
            profile: .readerAuthentication)

        let ask = TestWorld.ask(["family_name", "document_number", "portrait"])
        var scenarios:
            [(
                name: String, request: AnnexCReader.BuiltRequest, origin: String, raw: Data?,
                code: PresentmentError.Code
            )] =
                []
        func add(
            _ name: String, _ docs: [AnnexCReader.DocumentRequest], signing: AnnexCReader.Signing = .none,
            requestOrigin: Origin? = nil,
            answerOrigin: String = Self.markerOrigin, version: AnnexCReader.Version = .v1_0,
            mutate: ((AnnexCReader.BuiltRequest) -> Data)? = nil,
            _ code: PresentmentError.Code
        ) throws {
            let r = try AnnexCReader.makeRequest(
                documents: docs, origin: requestOrigin ?? origin, framing: .dataObject, signing: signing,
                version: version)
            scenarios.append((name, r, answerOrigin, mutate?(r), code))
        }
        try add("unknown docType", [TestWorld.ask("org.example.unknown", ["x"])], .noMatchingCredential)
        try add("only an expired credential", [TestWorld.ask(TestWorld.pid, ["family_name"])], .noMatchingCredential)
        try add(
            "untrusted reader with a marker subject", [ask], signing: .perDocument(signer: rogueKey, chain: [rogue]),
            .untrustedReader)
        try add(
            "readerAuth bound to another origin", [ask], signing: world.perDocumentSigning,
            requestOrigin: try Origin("https://other-marker.example"),
            .readerAuthenticationFailed)
        try add("origin with a path", [ask], answerOrigin: Self.markerOrigin + "/secret-path", .invalidOrigin)
        try add(
            "truncated DeviceRequest", [ask],
            mutate: { r in
                let dr = Base64URL.decode(r.deviceRequest)!
                return Data(
                    "{\"deviceRequest\":\"\(Base64URL.encode(dr.prefix(dr.count - 7)))\",\"encryptionInfo\":\"\(r.encryptionInfo)\"}"
                        .utf8)
            }, .invalidDeviceRequest)
        try add(
            "encryptionInfo with a flipped key byte", [ask],
            mutate: { r in
                var ei = Base64URL.decode(r.encryptionInfo)!
                ei[ei.count - 3] ^= 0x55
                return Data(
                    "{\"deviceRequest\":\"\(r.deviceRequest)\",\"encryptionInfo\":\"\(Base64URL.encode(ei))\"}".utf8)
            }, .unsupportedRecipientKey)
        var small = ask
        small.maximumResponseSize = 100
        try add("maximumResponseSize exceeded", [small], version: .v1_1, .responseTooLarge)

        var forbiddenBase = [
            Self.familyName, Self.documentNumber, Self.readerCN, "Marker Org", "leaky-marker", "other-marker",
            "secret-path",
        ]
        let deviceKeyPEM = try world.deviceKeys["keys/mdl.pem"]!.pkcs8PEM()
        let pemBody = deviceKeyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        forbiddenBase += Self.windows(pemBody, width: 16, stride: 16)
        forbiddenBase += Self.windows(Self.hex(TestWorld.portrait.prefix(16)))

        var checked = 0
        var found = [String]()
        for s in scenarios {
            let raw = s.raw ?? s.request.rawRequest
            let forbidden =
                forbiddenBase + Self.windows(s.request.deviceRequest) + Self.windows(s.request.encryptionInfo)
                + [Self.hex(s.request.recipientKey.publicKey.serialized.prefix(12))]
            do {
                _ = try engine.accept(rawRequest: raw, origin: s.origin)
                found.append("\(s.name): accepted")
            } catch {
                #expect(error.code == s.code, "\(s.name): \(error)")
                let l = Self.leaks(error, forbidden: forbidden)
                if !l.isEmpty { found.append("\(s.name): \(l.prefix(3))") }
                checked += 1
            }
            // The two-phase API refuses the same way at consent time (parse) or respond time.
            if s.code == .responseTooLarge, let parsed = try? engine.parse(rawRequest: raw, origin: s.origin) {
                do {
                    _ = try engine.respond(to: parsed, consented: ConsentedRequest(documents: [TestWorld.mDL: []]))
                } catch {
                    #expect(error.code == .consentMismatch)
                    let l = Self.leaks(error, forbidden: forbidden)
                    if !l.isEmpty { found.append("consent mismatch: \(l.prefix(3))") }
                    checked += 1
                }
            }
        }
        // The hostile catalogue: every refusal, scanned for the request's own bytes and origin.
        let hostileEngine = world.engine(try world.context([try world.entry(id: "mdl2")], trust: world.trusted))
        for c in try HostileCatalogueTests.catalogue(world: world) {
            let text = String(decoding: c.json.prefix(4096), as: UTF8.self)
            // Windows of the request's long quoted strings (its base64 members; member names such as
            // "deviceRequest" are structure names that messages may cite), skipping JSON punctuation.
            let strings = text.split(separator: "\"").map(String.init).filter {
                $0.count >= 16 && !$0.contains("{") && !$0.contains(":")
            }
            let forbidden = strings.prefix(4).flatMap { Self.windows($0) } + (c.origin.count > 8 ? [c.origin] : [])
            do { _ = try hostileEngine.accept(rawRequest: Data(c.json), origin: c.origin) } catch {
                let l = Self.leaks(error, forbidden: forbidden)
                if !l.isEmpty { found.append("catalogue \(c.name): \(l.prefix(3))") }
                checked += 1
            }
        }
        #expect(found.isEmpty, "\(found)")
        #expect(checked >= 110)
        print(
            "secrets: \(checked) refusals scanned for origins, reader subjects, element values, key material and request bytes; \(found.count) leaks"
        )
    }

    @Test("A successful presentment's public summaries carry no element values")
    func summariesCarryNoValues() throws {
        let world = try TestWorld()
        var elements = TestWorld.mDLElements.filter { $0.identifier != "family_name" }
        elements.append(.init("family_name", .text(Self.familyName)))
        let engine = world.engine(
            try world.context([try world.entry(id: "mdl", elements: elements)], trust: world.trusted))
        let r = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name", "portrait"])], origin: TestWorld.origin,
            signing: world.perDocumentSigning)
        let parsed = try engine.parse(rawRequest: r.rawRequest, origin: "https://verifier.example")
        // What a consent UI reads: documents, element ids, verdict, candidates. Values only on request.
        let summary = "\(parsed.documents) \(parsed.readerVerdict) \(parsed.documents.map(\.candidates))"
        #expect(!summary.contains(Self.familyName))
        #expect(!summary.contains(Self.hex(TestWorld.portrait.prefix(8))))
        // Asked for: the credential hands out the value for display.
        let credential = try #require(engine.context.credentials.first)
        #expect(credential.element(ElementID(TestWorld.mDLNS, "family_name"))?.stringValue == Self.familyName)
    }
}

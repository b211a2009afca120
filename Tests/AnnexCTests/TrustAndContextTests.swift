import Foundation
import Testing
import TestSupport
@testable import AnnexC
import HPKE
import MdocCBOR

@Suite("Annex C: reader trust")
struct ReaderTrustTests {
    static func request(_ world: TestWorld, signing: AnnexCReader.Signing, version: String = "1.0") throws -> AnnexCReader.BuiltRequest {
        try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin, signing: signing, version: version)
    }

    @Test("Trusted reader; authority policy .only with the right and a wrong SKI; .only([]) behaves like .any")
    func authorities() throws {
        let world = try TestWorld()
        let entry = try world.entry(id: "mdl")
        let req = try Self.request(world, signing: world.perDocumentSigning)
        let ski = try #require(world.readerRoot.subjectKeyIdentifier)
        for (policy, ok) in [(AuthorityPolicy.any, true), (.only([ski]), true), (.only([]), true), (.only([[1, 2, 3]]), false)] {
            let engine = world.engine(try world.context([entry], trust: ReaderTrustPolicy(trustAnchors: [world.readerRoot], authorities: policy)))
            if ok {
                guard case .trusted = try engine.parse(rawRequest: req.rawRequest, origin: "https://verifier.example").readerVerdict else { Issue.record("not trusted"); continue }
            } else {
                #expect(throws: AnnexCError.self) { try engine.parse(rawRequest: req.rawRequest, origin: "https://verifier.example") }
                do { _ = try engine.parse(rawRequest: req.rawRequest, origin: "https://verifier.example") } catch {
                    #expect(error.code == .untrustedReader && error.detail.contains("allowed authorities"))
                }
            }
        }
    }

    @Test("Untrusted root, wrong EKU, expired certificate, bad signature, wrong origin, require-reader-auth")
    func refusals() throws {
        let world = try TestWorld()
        let entry = try world.entry(id: "mdl")
        let trusted = world.engine(try world.context([entry], trust: world.trusted))
        func code(_ engine: AnnexCEngine, _ req: AnnexCReader.BuiltRequest, origin: String = "https://verifier.example") -> (AnnexCError.Code, String)? {
            do { _ = try engine.parse(rawRequest: req.rawRequest, origin: origin); return nil } catch { return (error.code, error.detail) }
        }
        // A reader certificate from another root.
        let otherRootKey = try SoftwareSigner.generate()
        let otherRoot = try Certificate.issue(subject: .init(commonName: "Other Root"), publicKey: otherRootKey.publicKey, issuer: nil, issuerKey: otherRootKey,
                                              serial: 1, notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400, profile: .readerRoot)
        let k = try SoftwareSigner.generate()
        let foreign = try Certificate.issue(subject: .init(commonName: "Foreign Reader"), publicKey: k.publicKey, issuer: (.init(commonName: "Other Root"), otherRoot),
                                            issuerKey: otherRootKey, serial: 2, notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400, profile: .readerAuthentication)
        #expect(code(trusted, try Self.request(world, signing: .perDocument(signer: k, chain: [foreign])))?.0 == .untrustedReader)
        // Right root, wrong EKU (document signer profile).
        let wrongEKU = try Certificate.issue(subject: .init(commonName: "Not A Reader"), publicKey: k.publicKey, issuer: (.init(commonName: "Test Reader Root", country: "UT"), world.readerRoot),
                                             issuerKey: world.readerRootKey, serial: 3, notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400, profile: .documentSigner)
        let eku = code(trusted, try Self.request(world, signing: .perDocument(signer: k, chain: [wrongEKU])))
        #expect(eku?.0 == .untrustedReader && eku?.1.contains("EKU") == true)
        // Expired reader certificate.
        let expired = try Certificate.issue(subject: .init(commonName: "Old Reader"), publicKey: k.publicKey, issuer: (.init(commonName: "Test Reader Root", country: "UT"), world.readerRoot),
                                            issuerKey: world.readerRootKey, serial: 4, notBefore: TestWorld.now - 9 * 86400, notAfter: TestWorld.now - 86400, profile: .readerAuthentication)
        let exp = code(trusted, try Self.request(world, signing: .perDocument(signer: k, chain: [expired])))
        #expect(exp?.0 == .untrustedReader && exp?.1.contains("expired") == true)
        // Signature by a key that is not the certificate's.
        let wrongKey = try SoftwareSigner.generate()
        #expect(code(trusted, try Self.request(world, signing: .perDocument(signer: wrongKey, chain: [world.readerCert])))?.0 == .readerAuthenticationFailed)
        // An invalid signature refuses even without anchors.
        let open = world.engine(try world.context([entry]))
        #expect(code(open, try Self.request(world, signing: .perDocument(signer: wrongKey, chain: [world.readerCert])))?.0 == .readerAuthenticationFailed)
        // A request signed for one origin, presented for another.
        #expect(code(trusted, try Self.request(world, signing: world.perDocumentSigning), origin: "https://evil.example")?.0 == .readerAuthenticationFailed)
        // readerAuthAll in a 1.1 request verifies; a corrupted one does not.
        let all = try Self.request(world, signing: world.allSigning, version: "1.1")
        guard case .trusted = try trusted.parse(rawRequest: all.rawRequest, origin: "https://verifier.example").readerVerdict else { Issue.record("readerAuthAll not trusted"); return }
        // Required reader authentication.
        let strict = world.engine(try world.context([entry], trust: ReaderTrustPolicy(trustAnchors: [world.readerRoot], requireReaderAuthentication: true)))
        #expect(code(strict, try Self.request(world, signing: .none))?.0 == .readerAuthenticationRequired)
        let strictNoAnchors = world.engine(try world.context([entry], trust: ReaderTrustPolicy(requireReaderAuthentication: true)))
        #expect(code(strictNoAnchors, try Self.request(world, signing: world.perDocumentSigning))?.0 == .untrustedReader)
        // Messages never contain the origin.
        #expect(code(trusted, try Self.request(world, signing: world.perDocumentSigning), origin: "https://evil.example")?.1.contains("evil") == false)
    }

    @Test("The explanation records origin, transcript, reader checks and selection")
    func explanation() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")], trust: world.trusted))
        let req = try Self.request(world, signing: world.perDocumentSigning)
        let e = engine.explain(rawRequest: req.rawRequest, origin: "https://verifier.example:443/")
        #expect(e.origin == "https://verifier.example")
        #expect(e.sessionTranscript?.count == 44)
        #expect(e.readerChecks.count == 1 && e.readerChecks[0].verified)
        #expect(e.selection.first?.contains("mdl can release 1") == true)
        #expect(e.error == nil)
        let bad = engine.explain(rawRequest: req.rawRequest, origin: "https://other.example")
        #expect(bad.error?.code == .readerAuthenticationFailed)
    }
}

@Suite("Annex C: credential context")
struct CredentialContextTests {
    static func tempDir() throws -> URL {
        let u = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-ctx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: u, withIntermediateDirectories: true)
        return u
    }

    static func writeKey(_ signer: SoftwareSigner, to dir: URL, name: String, mode: Int = 0o600) throws {
        let keys = dir.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        let path = keys.appendingPathComponent(name).path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(try signer.pkcs8PEM().utf8), attributes: [.posixPermissions: mode]))
    }

    @Test("Write and load round trip through files: 0600, atomic, registration metadata, key files resolved")
    func roundTrip() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try CredentialContext.load(from: dir) == nil)
        let e1 = try world.entry(id: "mdl"), e2 = try world.entry(id: "pid", docType: TestWorld.pid, cancelled: true)
        try Self.writeKey(world.deviceKeys["keys/mdl.pem"]!, to: dir, name: "mdl.pem")
        try Self.writeKey(world.deviceKeys["keys/pid.pem"]!, to: dir, name: "pid.pem")
        let ctx = try CredentialContext(entries: [e1, e2], readerTrust: ReaderTrustPolicy(trustAnchors: [world.readerRoot], authorities: .only([[9, 9]]), requireReaderAuthentication: true),
                                        keyResolver: FileKeyResolver(directory: dir))
        try ctx.write(to: dir)
        let attrs = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("context.cbor").path)
        #expect((attrs[.posixPermissions] as! NSNumber).intValue & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
        let loaded = try #require(try CredentialContext.load(from: dir))
        #expect(loaded.credentials.map(\.id) == ["mdl", "pid"])
        #expect(loaded.credentials[1].isCancelled)
        #expect(loaded.readerTrust.requireReaderAuthentication)
        #expect(loaded.readerTrust.authorities == .only([[9, 9]]))
        #expect(loaded.readerTrust.trustAnchors.map(\.der) == [world.readerRoot.der])
        #expect(loaded.encoded() == ctx.encoded())
        #expect(loaded.registrations.map(\.docType) == [TestWorld.mDL, TestWorld.pid])
        #expect(loaded.registrations[0].invalidationDate == loaded.credentials[0].validUntil)
        #expect(loaded.credentials[0].element(ElementID(TestWorld.mDLNS, "family_name"))?.stringValue == "Mustermann")
        // A file-backed engine answers.
        let engine = AnnexCEngine(context: loaded, configuration: .init(clock: { TestWorld.now }))
        let req = try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin, signing: world.perDocumentSigning)
        #expect(throws: AnnexCError.self) { try engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example") }  // authority [9,9] refuses
        // Rewriting replaces the file whole.
        let again = try CredentialContext(entries: [e1], keyResolver: FileKeyResolver(directory: dir))
        try again.write(to: dir)
        #expect(try CredentialContext.load(from: dir)?.credentials.count == 1)
    }

    @Test("Corrupt, truncated, wrong-version, insecure and mismatched snapshots are refused with typed errors")
    func refusals() throws {
        let world = try TestWorld()
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let e1 = try world.entry(id: "mdl")
        try Self.writeKey(world.deviceKeys["keys/mdl.pem"]!, to: dir, name: "mdl.pem")
        let ctx = try CredentialContext(entries: [e1], keyResolver: FileKeyResolver(directory: dir))
        let good = ctx.encoded()
        let file = dir.appendingPathComponent("context.cbor").path
        func load(_ bytes: [UInt8], mode: Int = 0o600) -> AnnexCError.Code? {
            _ = FileManager.default.createFile(atPath: file, contents: Data(bytes), attributes: [.posixPermissions: mode])
            chmod(file, mode_t(mode))
            do { _ = try CredentialContext.load(from: dir); return nil } catch { return error.code }
        }
        #expect(load(good) == nil)
        #expect(load(Array(good.prefix(good.count / 2))) == .contextCorrupt)
        var flipped = good; flipped[good.count / 2] ^= 0xff
        #expect(load(flipped) != nil)
        #expect(load([]) == .contextCorrupt)
        #expect(load(CBORValue.map([.init(.text("format"), .text("mdoc-respond-context")), .init(.text("version"), .unsigned(2))]).encoded()) == .contextCorrupt)
        #expect(load(good, mode: 0o644) == .contextInsecure)
        // A device key that does not match the MSO.
        try Self.writeKey(try SoftwareSigner.generate(), to: dir, name: "mdl.pem")
        #expect(load(good) == .keyUnavailable)
        // A world-readable key file.
        try Self.writeKey(world.deviceKeys["keys/mdl.pem"]!, to: dir, name: "mdl.pem", mode: 0o644)
        chmod(dir.appendingPathComponent("keys/mdl.pem").path, 0o644)
        #expect(load(good) == .keyUnavailable)
        // Key references must stay inside the context directory.
        #expect(throws: AnnexCError.self) { try FileKeyResolver(directory: dir).signer(for: "../etc/key.pem") }
        #expect(throws: AnnexCError.self) { try FileKeyResolver(directory: dir).signer(for: "/etc/key.pem") }
        // Validation before writing: an MSO docType mismatch and duplicate ids.
        #expect(throws: AnnexCError.self) {
            try CredentialContext(entries: [.init(id: "x", docTypes: ["other"], issuerSigned: e1.issuerSigned, deviceKeyReference: e1.deviceKeyReference)], keyResolver: world.resolver)
        }
        #expect(throws: AnnexCError.self) { try CredentialContext(entries: [e1, e1], keyResolver: world.resolver) }
        #expect(throws: AnnexCError.self) {
            try CredentialContext(entries: [.init(id: "x", issuerSigned: [0xa0], deviceKeyReference: e1.deviceKeyReference)], keyResolver: world.resolver)
        }
    }
}

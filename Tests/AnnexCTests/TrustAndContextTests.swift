import DigitalCredentials
import Foundation
import Testing
import TestSupport
@testable import AnnexC
@testable import AnnexCReader
@testable import Presentment
import TestWorld
import HPKE
import MdocCBOR

@Suite("Annex C: reader trust")
struct ReaderTrustTests {
    static func request(_ world: TestWorld, signing: AnnexCReader.Signing, version: AnnexCReader.Version = .v1_0) throws
        -> AnnexCReader.BuiltRequest
    {
        try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin, signing: signing, version: version)
    }

    @Test("Trusted reader; authority policy .only with the right and a wrong SKI; .only([]) behaves like .any")
    func authorities() throws {
        let world = try TestWorld()
        let entry = try world.entry(id: "mdl")
        let req = try Self.request(world, signing: world.perDocumentSigning)
        let ski = try #require(world.readerRoot.subjectKeyIdentifier)
        for (policy, ok) in [
            (AuthorityPolicy.any, true), (.only([ski]), true), (.only([]), true), (.only([[1, 2, 3]]), false),
        ] {
            let engine = world.engine(
                try world.context(
                    [entry], trust: ReaderTrustPolicy(trustAnchors: [world.readerRoot], authorities: policy)))
            if ok {
                guard
                    case .trusted = try engine.parse(rawRequest: req.rawRequest, origin: "https://verifier.example")
                        .readerVerdict
                else {
                    Issue.record("not trusted")
                    continue
                }
            } else {
                expectRefusal(TrustRule.authorityNotAllowed, at: "docRequests[0].readerAuth") {
                    try engine.parse(rawRequest: req.rawRequest, origin: "https://verifier.example")
                }
            }
        }
    }

    /// A reader certificate under the test reader root (or `root`) with the given profile and validity.
    static func readerCert(
        _ world: TestWorld, _ key: SoftwareSigner, name: String, profile: CertificateProfile = .readerAuthentication,
        root: (name: DistinguishedName, cert: Certificate, key: SoftwareSigner)? = nil,
        from: Date = TestWorld.now - 86400, to: Date = TestWorld.now + 86400
    ) throws -> Certificate {
        let issuer =
            root ?? (
                DistinguishedName(commonName: "Test Reader Root", country: "UT"), world.readerRoot, world.readerRootKey
            )
        return try Certificate.issue(
            subject: .init(commonName: name), publicKey: key.publicKey, issuer: issuer.cert, issuerKey: issuer.key,
            serial: UInt64.random(in: 100...UInt64(Int64.max)), notBefore: from, notAfter: to, profile: profile)
    }

    @Test(
        "A reader with a valid signature that is not trusted is answered as 'signed, not trusted' and why; requireTrustedReader refuses it",
        arguments: UntrustedReason.allCases.filter { $0 != .authorityNotAllowed })
    func signedNotTrusted(_ reason: UntrustedReason) throws {
        let world = try TestWorld()
        let entry = try world.entry(id: "mdl")
        let k = try SoftwareSigner.generate()
        var anchors = [world.readerRoot]
        let cert: Certificate
        switch reason {
        case .noTrustAnchors:
            anchors = []
            cert = world.readerCert
        case .selfSigned:
            cert = try Certificate.issue(
                subject: .init(commonName: "Demo Verifier"), publicKey: k.publicKey, issuer: nil, issuerKey: k,
                serial: 7,
                notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400, profile: .readerAuthentication)
        case .notChainedToAnchor:
            let otherKey = try SoftwareSigner.generate()
            let otherName = DistinguishedName(commonName: "Other Root")
            let other = try Certificate.issue(
                subject: otherName, publicKey: otherKey.publicKey, issuer: nil, issuerKey: otherKey, serial: 1,
                notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400, profile: .readerRoot)
            cert = try Self.readerCert(world, k, name: "Foreign Reader", root: (otherName, other, otherKey))
        case .outsideValidity:
            cert = try Self.readerCert(
                world, k, name: "Old Reader", from: TestWorld.now - 9 * 86400, to: TestWorld.now - 86400)
        case .isCertificateAuthority:
            cert = try Self.readerCert(
                world, k, name: "CA Reader",
                profile: .custom(
                    isCA: true, keyUsage: "critical,digitalSignature,keyCertSign",
                    extendedKeyUsage: MdocKeyUsage.readerAuthentication))
        case .lacksDigitalSignatureKeyUsage:
            cert = try Self.readerCert(
                world, k, name: "No KU Reader",
                profile: .custom(isCA: false, keyUsage: nil, extendedKeyUsage: MdocKeyUsage.readerAuthentication))
        case .lacksReaderExtendedKeyUsage:
            cert = try Self.readerCert(world, k, name: "Not A Reader", profile: .documentSigner)
        case .authorityNotAllowed:
            return  // a lone signer outside the allow-list is refused (the multisigned tests show the verdict)
        }
        let signer = reason == .noTrustAnchors ? world.readerKey : k
        let req = try Self.request(world, signing: .perDocument(signer: signer, chain: [cert]))
        let open = world.engine(try world.context([entry], trust: ReaderTrustPolicy(trustAnchors: anchors)))
        let parsed = try open.parse(rawRequest: req.rawRequest, origin: "https://verifier.example")
        guard case .signedNotTrusted(let subject, let why) = parsed.readerVerdict else {
            Issue.record("\(reason): \(parsed.readerVerdict)")
            return
        }
        #expect(why == reason)
        #expect(subject == cert.subject)
        #expect(parsed.documents[0].readerVerdict == parsed.readerVerdict)
        _ = try AnnexCReader.openResponse(
            try open.accept(rawRequest: req.rawRequest, origin: "https://verifier.example"), for: req,
            issuerRoots: [world.iaca], at: TestWorld.now)
        // The explanation reports the signature check and the trust outcome.
        let x = open.explain(rawRequest: req.rawRequest, origin: "https://verifier.example")
        #expect(
            x.trace.signatures.count == 1 && x.trace.signatures[0].signature.verdict == parsed.readerVerdict
                && x.trace.signatures[0].refusal == nil)
        // Refusing such readers is an explicit switch; so is requiring reader authentication.
        for strict in [
            ReaderTrustPolicy(trustAnchors: anchors, requireTrustedReader: true),
            ReaderTrustPolicy(trustAnchors: anchors, requireReaderAuthentication: true),
        ] {
            let engine = world.engine(try world.context([entry], trust: strict))
            let thrown = refusal { try engine.accept(rawRequest: req.rawRequest, origin: "https://verifier.example") }
            #expect(thrown?.is(TrustRule.readerNotTrusted) == true && thrown?.location == "docRequests[0].readerAuth")
            #expect(thrown?.underlying(as: UntrustedReason.self) == reason)
            let refused = engine.explain(rawRequest: req.rawRequest, origin: "https://verifier.example")
            #expect(refused.error?.code == .untrustedReader)
            #expect(
                refused.trace.signatures.first?.signature.verdict == parsed.readerVerdict,
                "signature checked and reported before trust")
        }
    }

    @Test(
        "Bad signatures always refuse, before and whatever the trust policy; .only refuses other authorities; requireTrustedReader still answers unsigned requests"
    )
    func refusals() throws {
        let world = try TestWorld()
        let entry = try world.entry(id: "mdl")
        func code(
            _ engine: DigitalCredentialsEngine, _ req: AnnexCReader.BuiltRequest,
            origin: String = "https://verifier.example"
        )
            -> (PresentmentError.Code, String)?
        {
            do {
                _ = try engine.parse(rawRequest: req.rawRequest, origin: origin)
                return nil
            } catch { return (error.code, error.detail) }
        }
        let wrongKey = try SoftwareSigner.generate()
        for policy in [
            ReaderTrustPolicy(), world.trusted,
            ReaderTrustPolicy(trustAnchors: [world.readerRoot], requireTrustedReader: true),
        ] {
            let engine = world.engine(try world.context([entry], trust: policy))
            #expect(
                code(
                    engine, try Self.request(world, signing: .perDocument(signer: wrongKey, chain: [world.readerCert])))?
                    .0 == .readerAuthenticationFailed)
            #expect(
                code(
                    engine, try Self.request(world, signing: world.perDocumentSigning), origin: "https://evil.example")?
                    .0 == .readerAuthenticationFailed)
            #expect(
                code(
                    engine, try Self.request(world, signing: world.perDocumentSigning), origin: "https://evil.example")?
                    .1.contains("evil") == false)
            // A bad signature beside a good one, in either order.
            let two = try AnnexCReader.makeRequest(
                documents: [TestWorld.ask(["family_name"]), TestWorld.ask(["age_over_18"])], origin: TestWorld.origin,
                signing: .custom(
                    perDocument: [
                        .init(signer: world.readerKey, chain: [world.readerCert]),
                        .init(signer: wrongKey, chain: [world.readerCert]),
                    ], all: nil))
            #expect(code(engine, two)?.0 == .readerAuthenticationFailed)
        }
        // An explicit authority list refuses a reader of another authority even without trust anchors.
        let only = world.engine(try world.context([entry], trust: ReaderTrustPolicy(authorities: .only([[1, 2, 3]]))))
        #expect(code(only, try Self.request(world, signing: world.perDocumentSigning))?.0 == .untrustedReader)
        // requireTrustedReader does not require signatures.
        let trustedOnly = world.engine(
            try world.context(
                [entry], trust: ReaderTrustPolicy(trustAnchors: [world.readerRoot], requireTrustedReader: true)))
        #expect(
            try trustedOnly.parse(
                rawRequest: try Self.request(world, signing: .none).rawRequest, origin: "https://verifier.example"
            ).readerVerdict == .notAuthenticated)
        // readerAuthAll in a 1.1 request verifies.
        let all = try Self.request(world, signing: world.allSigning, version: .v1_1)
        guard
            case .trusted = try world.engine(try world.context([entry], trust: world.trusted)).parse(
                rawRequest: all.rawRequest, origin: "https://verifier.example"
            ).readerVerdict
        else {
            Issue.record("readerAuthAll not trusted")
            return
        }
        // Required reader authentication.
        let strict = world.engine(
            try world.context(
                [entry], trust: ReaderTrustPolicy(trustAnchors: [world.readerRoot], requireReaderAuthentication: true)))
        #expect(code(strict, try Self.request(world, signing: .none))?.0 == .readerAuthenticationRequired)
        let strictNoAnchors = world.engine(
            try world.context([entry], trust: ReaderTrustPolicy(requireReaderAuthentication: true)))
        #expect(
            code(strictNoAnchors, try Self.request(world, signing: world.perDocumentSigning))?.0 == .untrustedReader)
    }

    @Test(
        "One signature does not vouch for the whole request: a verdict per DocRequest; required authentication covers every DocRequest; different readers are reported"
    )
    func perDocumentVerdicts() throws {
        let world = try TestWorld()
        let entries = [try world.entry(id: "mdl"), try world.entry(id: "pid", docType: TestWorld.pid)]
        let docs = [TestWorld.ask(["family_name"]), TestWorld.ask(TestWorld.pid, ["age_over_18"])]
        let reader = AnnexCReader.ReaderIdentity(signer: world.readerKey, chain: [world.readerCert])
        // DocRequest 0 signed, DocRequest 1 not.
        let half = try AnnexCReader.makeRequest(
            documents: docs, origin: TestWorld.origin, signing: .custom(perDocument: [reader, nil], all: nil))
        let open = world.engine(try world.context(entries, trust: world.trusted))
        let parsed = try open.parse(rawRequest: half.rawRequest, origin: "https://verifier.example")
        guard case .trusted = parsed.documents[0].readerVerdict else {
            Issue.record("document 0: \(parsed.documents[0].readerVerdict)")
            return
        }
        #expect(parsed.documents[1].readerVerdict == .notAuthenticated)
        #expect(
            parsed.documents[0].readerAuthentication == ["docRequests[0].readerAuth"]
                && parsed.documents[1].readerAuthentication.isEmpty)
        #expect(parsed.readerVerdict == .notAuthenticated, "the one-line verdict is the weakest")
        for policy in [ReaderTrustPolicy(trustAnchors: [world.readerRoot], requireReaderAuthentication: true)] {
            let strict = world.engine(try world.context(entries, trust: policy))
            expectRefusal(TrustRule.documentNotCovered, at: "docRequests[1]") {
                try strict.accept(rawRequest: half.rawRequest, origin: "https://verifier.example")
            }
        }
        // readerAuthAll covers every DocRequest.
        let all = try AnnexCReader.makeRequest(
            documents: docs, origin: TestWorld.origin, signing: world.allSigning, version: .v1_1)
        let strict = world.engine(
            try world.context(
                entries, trust: ReaderTrustPolicy(trustAnchors: [world.readerRoot], requireReaderAuthentication: true)))
        let covered = try strict.parse(rawRequest: all.rawRequest, origin: "https://verifier.example")
        #expect(covered.documents.map(\.readerAuthentication) == [["readerAuthAll[0]"], ["readerAuthAll[0]"]])
        #expect(!covered.signedByDifferentReaders)
        // Two different trusted readers: each document shows its own; the model says they differ.
        let otherKey = try SoftwareSigner.generate()
        let other = try Self.readerCert(world, otherKey, name: "Second Reader")
        let twoReaders = try AnnexCReader.makeRequest(
            documents: docs, origin: TestWorld.origin,
            signing: .custom(perDocument: [reader, .init(signer: otherKey, chain: [other])], all: nil))
        let p2 = try open.parse(rawRequest: twoReaders.rawRequest, origin: "https://verifier.example")
        #expect(p2.documents.map(\.readerVerdict.subject) == [world.readerCert.subject, other.subject])
        #expect(p2.signedByDifferentReaders && p2.readers.map(\.subject) == [world.readerCert.subject, other.subject])
        let x = open.explain(rawRequest: twoReaders.rawRequest, origin: "https://verifier.example")
        #expect(x.request?.readers.count == 2 && x.request?.documents.map(\.readerVerdict).count == 2)
        // One trusted, one not: each document keeps its own verdict; requireTrustedReader refuses.
        let selfKey = try SoftwareSigner.generate()
        let selfSigned = try Certificate.issue(
            subject: .init(commonName: "Self Reader"), publicKey: selfKey.publicKey, issuer: nil, issuerKey: selfKey,
            serial: 9,
            notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400, profile: .readerAuthentication)
        let mixed = try AnnexCReader.makeRequest(
            documents: docs, origin: TestWorld.origin,
            signing: .custom(perDocument: [reader, .init(signer: selfKey, chain: [selfSigned])], all: nil))
        let p3 = try open.parse(rawRequest: mixed.rawRequest, origin: "https://verifier.example")
        #expect(p3.documents[1].readerVerdict == .signedNotTrusted(subject: selfSigned.subject, reason: .selfSigned))
        guard case .trusted = p3.documents[0].readerVerdict else {
            Issue.record("document 0 of mixed: \(p3.documents[0].readerVerdict)")
            return
        }
        let requireTrusted = world.engine(
            try world.context(
                entries, trust: ReaderTrustPolicy(trustAnchors: [world.readerRoot], requireTrustedReader: true)))
        let refused = refusal {
            try requireTrusted.accept(rawRequest: mixed.rawRequest, origin: "https://verifier.example")
        }
        #expect(refused?.is(TrustRule.readerNotTrusted) == true && refused?.location == "docRequests[1].readerAuth")
        #expect(refused?.underlying(as: UntrustedReason.self) == .selfSigned)
    }

    @Test("The explanation records origin, transcript, reader checks and selection")
    func explanation() throws {
        let world = try TestWorld()
        let engine = world.engine(try world.context([try world.entry(id: "mdl")], trust: world.trusted))
        let req = try Self.request(world, signing: world.perDocumentSigning)
        let e = engine.explain(rawRequest: req.rawRequest, origin: "https://verifier.example:443/")
        #expect(e.origin == "https://verifier.example")
        #expect(e.trace.structure("SessionTranscript")?.count == 44)
        #expect(e.trace.signatures.count == 1 && e.trace.signatures[0].refusal == nil)
        #expect(e.selection.first?.contains("mdl can release 1") == true)
        #expect(e.error == nil)
        let bad = engine.explain(rawRequest: req.rawRequest, origin: "https://other.example")
        #expect(bad.error?.code == .readerAuthenticationFailed)
    }
}

import AnnexC
import AnnexCReader
import DigitalCredentials
import Foundation
import MdocCBOR
import OpenID4VPReader
import Presentment
import Testing
import TestSupport
import TestWorld
import WebEncoding
import OpenID4VP

/// The third review's trust findings: a multisigned request is trusted through any signature the
/// policy trusts; one certificate gets one verdict in both protocols (the signer profile is the
/// holder's policy); the one entry point falls back to the next protocol only for selection reasons;
/// the origin is serialized once, also for `expected_origins`.
@Suite("Trust and dispatch: multisigned, one verdict per certificate, the fallback rule, one origin")
struct TrustAndDispatchTests {
    static let fn = ElementID(TestWorld.mDLNS, "family_name")
    static let query = OpenID4VPReader.CredentialQuery(id: "m", docType: TestWorld.mDL, claims: [.init(fn)])

    /// A signer of another trust framework: its own self-made root, a leaf with the reader profile.
    static func stranger() throws -> (OpenID4VPReader.Signer, Certificate) {
        let rootKey = try SoftwareSigner.generate()
        let rootName = DistinguishedName(commonName: "Other Framework Root")
        let root = try Certificate.issue(
            subject: rootName, publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey, serial: 1,
            notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400, profile: .readerRoot)
        let key = try SoftwareSigner.generate()
        let leaf = try Certificate.issue(
            subject: .init(commonName: "Other Framework Verifier"), publicKey: key.publicKey, issuer: root,
            issuerKey: rootKey, serial: 2, notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400,
            profile: .requestSigner(dnsNames: ["verifier.example"]))
        return (OpenID4VPReader.Signer(key: key, chain: [leaf], clientID: .sanDNS("verifier.example")), root)
    }

    static func engine(_ world: TestWorld, _ policy: ReaderTrustPolicy) throws -> DigitalCredentialsEngine {
        TestWorld.engine(try world.context([try world.entry(id: "mdl")], trust: policy), protocols: [.openID4VP])
    }

    @Test("Multisigned: trusted through any trusted signature; the other is reported, a bad one still refuses")
    func multisigned() throws {
        let world = try TestWorld()
        let ours = OpenID4VPReader.Signer(
            key: world.verifierKey, chain: [world.verifierCert], clientID: .sanDNS("verifier.example"))
        let (theirs, _) = try Self.stranger()
        let ski = try #require(world.readerRoot.subjectKeyIdentifier)
        for order in [[ours, theirs], [theirs, ours]] {
            let request = try OpenID4VPReader.makeRequest(
                queries: [Self.query], origin: TestWorld.origin,
                signing: .multisigned(order, placement: .topLevel),
                expectedOrigins: [TestWorld.origin.serialized])
            for policy in [
                ReaderTrustPolicy(trustAnchors: [world.readerRoot], requireTrustedReader: true),
                ReaderTrustPolicy(trustAnchors: [world.readerRoot], authorities: .only([ski])),
                ReaderTrustPolicy(
                    trustAnchors: [world.readerRoot], authorities: .only([ski]), requireReaderAuthentication: true),
            ] {
                let engine = try Self.engine(world, policy)
                let parsed = try engine.parse(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
                guard case .trusted = parsed.readerVerdict else {
                    Issue.record(Comment(rawValue: "\(parsed.readerVerdict)"))
                    continue
                }
                let verdicts = parsed.signatures.map { $0.verdict }
                #expect(verdicts.filter { if case .trusted = $0 { true } else { false } }.count == 1)
                #expect(
                    verdicts.contains {
                        if case .signedNotTrusted(_, let r) = $0 {
                            r == .notChainedToAnchor || r == .authorityNotAllowed
                        } else {
                            false
                        }
                    })
                _ = try OpenID4VPReader.openResponse(
                    engine.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized), for: request,
                    issuerRoots: [world.iaca], at: TestWorld.now)
            }
            // Nobody trusted: refused, as before.
            let strangers = try Self.engine(world, ReaderTrustPolicy(trustAnchors: [], requireTrustedReader: true))
            expectRefusal(.untrustedReader) {
                try strangers.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
            }
            let outside = try Self.engine(
                world, ReaderTrustPolicy(trustAnchors: [world.readerRoot], authorities: .only([[9, 9]])))
            expectRefusal(.untrustedReader) {
                try outside.accept(rawRequest: request.rawRequest, origin: TestWorld.origin.serialized)
            }
        }
    }

    @Test(
        "One certificate, one verdict: a signer without the reader EKU is untrusted in both protocols by default, trusted in both under the requestSigner profile"
    )
    func oneVerdictPerCertificate() throws {
        let world = try TestWorld()
        let key = try SoftwareSigner.generate()
        let cert = try Certificate.issue(
            subject: .init(commonName: "No EKU Verifier"), publicKey: key.publicKey, issuer: world.readerRoot,
            issuerKey: world.readerRootKey, serial: 77, notBefore: TestWorld.now - 86400,
            notAfter: TestWorld.now + 86400, profile: .requestSignerWithoutReaderEKU(dnsNames: ["verifier.example"]))
        let oid = try OpenID4VPReader.makeRequest(
            queries: [Self.query], origin: TestWorld.origin,
            signing: .signed(.init(key: key, chain: [cert], clientID: .sanDNS("verifier.example"))),
            expectedOrigins: [TestWorld.origin.serialized])
        let annexC = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin,
            signing: .perDocument(signer: key, chain: [cert]))
        for profile in SignerProfile.allCases {
            let policy = ReaderTrustPolicy(trustAnchors: [world.readerRoot], signerProfile: profile)
            let context = try world.context([try world.entry(id: "mdl")], trust: policy)
            let facade = TestWorld.engine(context)
            let verdicts = try [oid.rawRequest, annexC.rawRequest].map {
                try facade.parse(rawRequest: $0, origin: TestWorld.origin.serialized).readerVerdict
            }
            #expect(verdicts[0] == verdicts[1], "\(profile)")
            switch profile {
            case .mdocReader:
                #expect(verdicts[0] == .signedNotTrusted(subject: cert.subject, reason: .lacksReaderExtendedKeyUsage))
            case .requestSigner:
                guard case .trusted = verdicts[0] else {
                    Issue.record(Comment(rawValue: "\(verdicts[0])"))
                    continue
                }
            }
        }
        // The profile survives the snapshot (written only when not the default).
        let stored = try world.context(
            [], trust: ReaderTrustPolicy(trustAnchors: [world.readerRoot], signerProfile: .requestSigner))
        let reloaded = try CredentialContext(encoded: stored.encoded(), keyResolver: world.resolver)
        #expect(reloaded.readerTrust.signerProfile == .requestSigner)
    }

    @Test("A page offering both: only a selection reason passes to the next protocol; the choice is shown")
    func fallbackRule() throws {
        let world = try TestWorld()
        let context = try world.context([try world.entry(id: "mdl")], trust: world.trusted)
        let facade = TestWorld.engine(context)
        let oid = try OpenID4VPReader.makeRequest(queries: [Self.query], origin: TestWorld.origin)
        // A bad reader signature on the Annex C entry refuses the page; it is never answered over OpenID4VP.
        let wrongKey = try SoftwareSigner.generate()
        let badAnnexC = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin,
            signing: .perDocument(signer: wrongKey, chain: [world.readerCert]))
        let bad = try BothProtocolsTests.combined(badAnnexC, oid)
        expectRefusal(.readerAuthenticationFailed) {
            try facade.accept(rawRequest: bad, origin: TestWorld.origin.serialized)
        }
        expectRefusal(.readerAuthenticationFailed) {
            try facade.parse(rawRequest: bad, origin: TestWorld.origin.serialized)
        }
        // A docType the holder lacks is a selection reason: OpenID4VP answers, and the model says why.
        let photo = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask("org.iso.23220.photoid.1", ["family_name"], nameSpace: "org.iso.23220.1")],
            origin: TestWorld.origin)
        let page = try BothProtocolsTests.combined(photo, oid)
        let parsed = try facade.parse(rawRequest: page, origin: TestWorld.origin.serialized)
        #expect(
            parsed.protocolChoice
                == ProtocolChoice(
                    considered: ["org-iso-mdoc", "openid4vp-v1-unsigned"], reason: .preferredNotAnswerable))
        let first = try facade.parse(
            rawRequest: try BothProtocolsTests.combined(
                try AnnexCReader.makeRequest(documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin), oid
            ),
            origin: TestWorld.origin.serialized)
        #expect(first.protocolChoice?.reason == .preferred && first.protocolIdentifier == "org-iso-mdoc")
        // Nothing answerable: the preferred entry's model, with nothing releasable, not a refusal at parse.
        let photoOID = try OpenID4VPReader.makeRequest(
            queries: [
                .init(id: "p", docType: "org.iso.23220.photoid.1", claims: [.init(ElementID("org.iso.23220.1", "x"))])
            ],
            origin: TestWorld.origin)
        let none = try facade.parse(
            rawRequest: try BothProtocolsTests.combined(photo, photoOID), origin: TestWorld.origin.serialized)
        #expect(none.protocolChoice?.reason == .noneAnswerable && none.documents.allSatisfy(\.candidates.isEmpty))
        expectRefusal(.noMatchingCredential) { try facade.respond(to: none) }
    }

    @Test("A values probe that does not match is shown with why, and refused as a decline would be")
    func valueProbe() throws {
        let world = try TestWorld()
        let context = try world.context([try world.entry(id: "mdl")], trust: world.trusted)
        let facade = TestWorld.engine(context)
        let probe = try OpenID4VPReader.makeRequest(
            queries: [
                .init(
                    id: "m", docType: TestWorld.mDL,
                    claims: [.init(ElementID(TestWorld.mDLNS, "issuing_country"), values: [.text("DE")])])
            ],
            origin: TestWorld.origin)
        let parsed = try facade.parse(rawRequest: probe.rawRequest, origin: TestWorld.origin.serialized)
        #expect(parsed.documents[0].candidates.isEmpty)
        #expect(parsed.documents[0].excluded == [ExcludedCredential(credentialID: "mdl", reason: .valueNotAccepted)])
        #expect(parsed.documents[0].valueConstraints[ElementID(TestWorld.mDLNS, "issuing_country")] == [.text("DE")])
        let mismatch: PresentmentError.Code
        do {
            _ = try facade.respond(to: parsed)
            mismatch = .unsupportedProtocol
        } catch { mismatch = error.code }
        // The same request with a matching value, declined by the holder.
        let fair = try OpenID4VPReader.makeRequest(
            queries: [
                .init(
                    id: "m", docType: TestWorld.mDL,
                    claims: [.init(ElementID(TestWorld.mDLNS, "issuing_country"), values: [.text("UT")])])
            ],
            origin: TestWorld.origin)
        let p2 = try facade.parse(rawRequest: fair.rawRequest, origin: TestWorld.origin.serialized)
        let declined: PresentmentError.Code
        do {
            _ = try facade.respond(to: p2, approving: .elements([]))
            declined = .unsupportedProtocol
        } catch { declined = error.code }
        #expect(mismatch == declined && mismatch == .cannotSatisfyRequest)
        expectRefusal(declined) { try facade.accept(rawRequest: probe.rawRequest, origin: TestWorld.origin.serialized) }
    }

    @Test("The origin is serialized once: a trailing slash matches expected_origins; a path is refused")
    func oneOrigin() throws {
        let world = try TestWorld()
        let engine = try Self.engine(world, world.trusted)
        let request = try OpenID4VPReader.makeRequest(
            queries: [Self.query], origin: TestWorld.origin,
            signing: .signed(
                .init(key: world.verifierKey, chain: [world.verifierCert], clientID: .sanDNS("verifier.example"))),
            expectedOrigins: [TestWorld.origin.serialized])
        let answer = try engine.accept(rawRequest: request.rawRequest, origin: "https://verifier.example/")
        _ = try OpenID4VPReader.openResponse(answer, for: request, issuerRoots: [world.iaca], at: TestWorld.now)
        let parsed = try engine.parse(rawRequest: request.rawRequest, origin: "HTTPS://Verifier.Example:443/")
        #expect(parsed.origin.serialized == "https://verifier.example")
        for bad in [
            "https://verifier.example/login", "https://verifier.example/?q", "https://verifier.example/#f",
            "https://u@verifier.example",
        ] {
            expectRefusal(.invalidOrigin) { try engine.accept(rawRequest: request.rawRequest, origin: bad) }
        }
    }

    @Test(
        "A snapshot's trust anchors are parsed only when a signed request needs them; an anchor that is not a certificate refuses every signed request in both protocols (contextCorrupt) and no unsigned one, and is kept as stored"
    )
    func lazyAnchors() throws {
        let world = try TestWorld()
        let entry = try world.entry(id: "mdl")
        let origin = TestWorld.origin.serialized
        let annexCUnsigned = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin)
        let annexCSigned = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin, signing: world.perDocumentSigning)
        let oidUnsigned = try OpenID4VPReader.makeRequest(queries: [Self.query], origin: TestWorld.origin)
        let oidSigned = try OpenID4VPReader.makeRequest(
            queries: [Self.query], origin: TestWorld.origin,
            signing: .signed(
                .init(key: world.verifierKey, chain: [world.verifierCert], clientID: .sanDNS("verifier.example"))),
            expectedOrigins: [origin])
        func load(_ der: [[UInt8]]) throws -> CredentialContext {
            let policy = ReaderTrustPolicy(
                anchors: TrustAnchors(der: der), authorities: .any, requireReaderAuthentication: false,
                requireTrustedReader: false, signerProfile: .mdocReader)
            let snapshot = try CredentialContext(entries: [entry], readerTrust: policy, keyResolver: world.resolver)
                .encoded()
            return try CredentialContext(encoded: snapshot, keyResolver: world.resolver)
        }

        // A good anchor: not parsed by loading or by unsigned requests; parsed by the first signed one.
        let good = try load([world.readerRoot.der])
        let engine = TestWorld.engine(good)
        for raw in [annexCUnsigned.rawRequest, oidUnsigned.rawRequest] {
            _ = try engine.accept(rawRequest: raw, origin: origin)
        }
        #expect(!good.readerTrust.anchors.isParsed)
        guard case .trusted = try engine.parse(rawRequest: annexCSigned.rawRequest, origin: origin).readerVerdict
        else {
            Issue.record("the Annex C reader is not trusted")
            return
        }
        #expect(good.readerTrust.anchors.isParsed)
        #expect(good.readerTrust.trustAnchors.map(\.der) == [world.readerRoot.der])

        // Not a certificate (a DER INTEGER; then beside the good anchor): the snapshot loads, unsigned
        // requests are answered, every signed request is refused, the stored bytes are kept.
        let notCertificate: [UInt8] = [0x02, 0x01, 0x05]
        for der in [[notCertificate], [world.readerRoot.der, notCertificate]] {
            let corrupt = try load(der)
            let engine = TestWorld.engine(corrupt)
            for raw in [annexCUnsigned.rawRequest, oidUnsigned.rawRequest] {
                _ = try engine.accept(rawRequest: raw, origin: origin)
            }
            for raw in [annexCSigned.rawRequest, oidSigned.rawRequest] {
                expectRefusal(ContextRule.anchorNotCertificate) { try engine.parse(rawRequest: raw, origin: origin) }
                expectRefusal(ContextRule.anchorNotCertificate) { try engine.accept(rawRequest: raw, origin: origin) }
            }
            #expect(corrupt.readerTrust.trustAnchors.map(\.der) == der.filter { $0 != notCertificate })
            let again = try CredentialContext(encoded: corrupt.encoded(), keyResolver: world.resolver)
            #expect(again.readerTrust.anchors.der == der)
        }
    }
}

extension TrustAndDispatchTests {
    @Test("Multisigned with one bad signature of two: the bad one is dropped and shown by rule, never as an identity")
    func multisignedOneBad() throws {
        let world = try TestWorld()
        let raw = try OpenID4VPCatalogue.multisignedOneBadOfTwo(world: world)
        let engine = try Self.engine(world, ReaderTrustPolicy(trustAnchors: [world.readerRoot]))
        let origin = TestWorld.origin.serialized
        #expect(try !engine.accept(rawRequest: raw, origin: origin).isEmpty)
        let parsed = try engine.parse(rawRequest: raw, origin: origin)
        #expect(parsed.signatures.map(\.label) == ["signatures[0]"])
        let details = try #require(parsed.details.openID4VP)
        #expect(details.droppedSignatures.map(\.label) == ["signatures[1]"])
        #expect(details.droppedSignatures.first?.rule == PresentmentError.Rule(OpenID4VPRule.signatureInvalid))
        let json = try JSONValue.parse(Array(ConsentModelJSON.request(parsed).utf8))
        #expect(json["signers"]?.array?.count == 1)
        #expect(json["droppedSignatures"]?.array?.first?["rule"]?.string == "openID4VP.signatureInvalid")
        // Under a policy requiring a trusted reader, the verified signer carries the request.
        let strict = try Self.engine(
            world, ReaderTrustPolicy(trustAnchors: [world.readerRoot], requireTrustedReader: true))
        #expect(try !strict.accept(rawRequest: raw, origin: origin).isEmpty)
    }
}

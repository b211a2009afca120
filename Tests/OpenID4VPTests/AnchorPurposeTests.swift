import AnnexCReader
import DigitalCredentials
import Foundation
import MdocCBOR
import OpenID4VPReader
import Presentment
import Testing
import TestSupport
import TestWorld

/// Trust anchors that work or are refused, by purpose: the anchor is an input to path validation
/// (RFC 5280 §6.1: a CA without keyUsage anchors), a certificate that can never anchor is refused when
/// added, and the signer profile a chain is judged by follows the anchor it reaches (mdoc reader:
/// the ISO reader EKU required; relying party: not), with one verdict per certificate in both protocols.
@Suite("Trust anchors by purpose")
struct AnchorPurposeTests {
    static let fn = ElementID(TestWorld.mDLNS, "family_name")

    /// A root CA (`keyUsage` nil: none, as the conformance suite's verifier CA) and a leaf under it.
    static func chain(rootKeyUsage: String?, leafReaderEKU: Bool) throws -> (
        root: Certificate, leaf: Certificate, key: SoftwareSigner
    ) {
        let rootKey = try SoftwareSigner.generate()
        let root = try Certificate.issue(
            subject: DistinguishedName(commonName: "Verifier CA"), publicKey: rootKey.publicKey, issuer: nil,
            issuerKey: rootKey, serial: 1, notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400,
            profile: .custom(isCA: true, keyUsage: rootKeyUsage, extendedKeyUsage: nil))
        let key = try SoftwareSigner.generate()
        let leaf = try Certificate.issue(
            subject: .init(commonName: "Verifier"), publicKey: key.publicKey, issuer: root, issuerKey: rootKey,
            serial: 2, notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400,
            profile: leafReaderEKU
                ? .requestSigner(dnsNames: ["verifier.example"])
                : .requestSignerWithoutReaderEKU(dnsNames: ["verifier.example"]))
        return (root, leaf, key)
    }

    /// The verdicts of one signer in an OpenID4VP signed request and an Annex C readerAuth.
    static func verdicts(_ world: TestWorld, policy: ReaderTrustPolicy, leaf: Certificate, key: SoftwareSigner)
        throws -> [ReaderVerdict]
    {
        let oid = try OpenID4VPReader.makeRequest(
            queries: [.init(id: "m", docType: TestWorld.mDL, claims: [.init(fn)])], origin: TestWorld.origin,
            signing: .signed(.init(key: key, chain: [leaf], clientID: .sanDNS("verifier.example"))),
            expectedOrigins: [TestWorld.origin.serialized])
        let annexC = try AnnexCReader.makeRequest(
            documents: [TestWorld.ask(["family_name"])], origin: TestWorld.origin,
            signing: .perDocument(signer: key, chain: [leaf]))
        let context = try world.context([try world.entry(id: "mdl")], trust: policy)
        // Through a snapshot round trip: the purposes are stored with the anchors.
        let reloaded = try CredentialContext(encoded: context.encoded(), keyResolver: world.resolver)
        let engine = TestWorld.engine(reloaded)
        return try [oid.rawRequest, annexC.rawRequest].map {
            try engine.parse(rawRequest: $0, origin: TestWorld.origin.serialized).readerVerdict
        }
    }

    static func isTrusted(_ v: ReaderVerdict) -> Bool { if case .trusted = v { true } else { false } }

    @Test("A CA without keyUsage anchors a chain (the anchor is an input); its leaf is trusted in both protocols")
    func anchorWithoutKeyUsage() throws {
        let world = try TestWorld()
        let (root, leaf, key) = try Self.chain(rootKeyUsage: nil, leafReaderEKU: true)
        #expect(root.canAnchorChains && !root.allowsDigitalSignature)
        try Certificate.validatePath(leaf: leaf, anchors: [root], at: TestWorld.now)
        let v = try Self.verdicts(world, policy: ReaderTrustPolicy(trustAnchors: [root]), leaf: leaf, key: key)
        #expect(v.count == 2 && v.allSatisfy(Self.isTrusted), "\(v)")
        // Intermediates are still held to the profile: the same CA as an intermediate without keyUsage
        // is refused under strict checks.
        let topKey = try SoftwareSigner.generate()
        let top = try Certificate.issue(
            subject: DistinguishedName(commonName: "Top"), publicKey: topKey.publicKey, issuer: nil,
            issuerKey: topKey, serial: 9, notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400,
            profile: .readerRoot)
        let middleKey = try SoftwareSigner.generate()
        let middle = try Certificate.issue(
            subject: DistinguishedName(commonName: "Middle"), publicKey: middleKey.publicKey, issuer: top,
            issuerKey: topKey, serial: 10, notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400,
            profile: .custom(isCA: true, keyUsage: nil, extendedKeyUsage: nil))
        let leaf2 = try Certificate.issue(
            subject: .init(commonName: "Leaf"), publicKey: key.publicKey, issuer: middle, issuerKey: middleKey,
            serial: 11, notBefore: TestWorld.now - 86400, notAfter: TestWorld.now + 86400,
            profile: .requestSigner(dnsNames: ["verifier.example"]))
        #expect(throws: COSEError.self) {
            try Certificate.validatePath(leaf: leaf2, intermediates: [middle], anchors: [top], at: TestWorld.now)
        }
    }

    @Test("The signer profile follows the anchor's purpose: relying party needs no reader EKU, mdoc reader does")
    func purposeSetsTheProfile() throws {
        let world = try TestWorld()
        let (root, leaf, key) = try Self.chain(rootKeyUsage: "critical,keyCertSign,cRLSign", leafReaderEKU: false)
        var relyingParty = ReaderTrustPolicy()
        try relyingParty.addAnchor(root, purpose: .relyingParty)
        let trusted = try Self.verdicts(world, policy: relyingParty, leaf: leaf, key: key)
        #expect(trusted.allSatisfy(Self.isTrusted), "\(trusted)")
        var reader = ReaderTrustPolicy()
        try reader.addAnchor(root, purpose: .mdocReader)
        let untrusted = try Self.verdicts(world, policy: reader, leaf: leaf, key: key)
        #expect(
            untrusted
                == Array(
                    repeating: .signedNotTrusted(subject: leaf.subject, reason: .lacksReaderExtendedKeyUsage), count: 2)
        )
        // Both purposes held, each for a different CA: the chain is judged by the anchor it reaches.
        var both = ReaderTrustPolicy()
        try both.addAnchor(world.readerRoot, purpose: .mdocReader)
        try both.addAnchor(root, purpose: .relyingParty)
        #expect(try Self.verdicts(world, policy: both, leaf: leaf, key: key).allSatisfy(Self.isTrusted))
        // Re-adding sets the purpose; removing takes the anchor and its purpose out.
        try both.addAnchor(root, purpose: .mdocReader)
        #expect(both.anchorPurposes == [.mdocReader, .mdocReader] && both.trustAnchors.count == 2)
        #expect(both.removeAnchor(der: root.der) && both.anchorPurposes == [.mdocReader])
    }

    @Test("A certificate that can never anchor a chain is refused when added (context.anchorCannotAnchor)")
    func refusedAnchors() throws {
        let world = try TestWorld()
        let (_, leaf, _) = try Self.chain(rootKeyUsage: nil, leafReaderEKU: true)
        var policy = ReaderTrustPolicy()
        expectRefusal(ContextRule.anchorCannotAnchor) { try policy.addAnchor(leaf, purpose: .relyingParty) }
        let (noCertSign, _, _) = try Self.chain(rootKeyUsage: "critical,digitalSignature", leafReaderEKU: true)
        expectRefusal(ContextRule.anchorCannotAnchor) { try policy.addAnchor(noCertSign, purpose: .relyingParty) }
        try policy.addAnchor(world.readerRoot, purpose: .mdocReader)
        #expect(policy.trustAnchors.count == 1)
    }

    @Test("A snapshot's anchor purposes must be one known purpose (or null) per anchor")
    func storedPurposes() throws {
        let world = try TestWorld()
        var policy = ReaderTrustPolicy()
        try policy.addAnchor(world.readerRoot, purpose: .relyingParty)
        let encoded = try world.context([], trust: policy).encoded()
        let reloaded = try CredentialContext(encoded: encoded, keyResolver: world.resolver)
        #expect(reloaded.readerTrust.anchorPurposes == [.relyingParty])
        // Anchors without purposes write no member (older snapshots read as before).
        let plain = try world.context([], trust: ReaderTrustPolicy(trustAnchors: [world.readerRoot])).encoded()
        #expect(plain.firstRange(of: Array("anchorPurposes".utf8)) == nil)
        // A purpose this version does not know: refused as corrupt.
        var bad = encoded
        let name = Array("relyingParty".utf8)
        let at = try #require(bad.firstRange(of: name))
        bad.replaceSubrange(at, with: Array("relyingPartX".utf8))
        expectRefusal(ContextRule.anchorPurposesInvalid) {
            try CredentialContext(encoded: bad, keyResolver: world.resolver)
        }
    }
}

import Foundation
import Testing
import AnnexC
import DigitalCredentials
import AnnexCReader
import HPKE
import MdocCBOR
import Presentment

/// A complete test PKI and credential set, generated per test run.
public final class TestWorld: @unchecked Sendable {
    public static let now = MdocDate.parseDateTime("2026-06-01T12:00:00Z")!
    public static let mDL = "org.iso.18013.5.1.mDL"
    public static let mDLNS = "org.iso.18013.5.1"
    public static let pid = "eu.europa.ec.eudi.pid.1"
    public static let origin = try! Origin("https://verifier.example")

    public let iacaKey: SoftwareSigner
    public let iaca: Certificate
    public let issuer: MdocIssuer
    public let readerRootKey: SoftwareSigner
    public let readerRoot: Certificate
    public let readerKey: SoftwareSigner
    public let readerCert: Certificate
    /// An OpenID4VP request signer (HAIP profile, SAN `verifier.example`) under the reader root.
    public let verifierKey: SoftwareSigner
    public let verifierCert: Certificate
    public var deviceKeys: [String: SoftwareSigner] = [:]

    public init() throws {
        let from = Self.now.addingTimeInterval(-365 * 86400)
        let to = Self.now.addingTimeInterval(3 * 365 * 86400)
        iacaKey = try SoftwareSigner.generate()
        let iacaName = DistinguishedName(commonName: "Test IACA", country: "UT")
        iaca = try Certificate.issue(
            subject: iacaName, publicKey: iacaKey.publicKey, issuer: nil, issuerKey: iacaKey, serial: 1,
            notBefore: from, notAfter: to, profile: .iaca)
        let dsKey = try SoftwareSigner.generate()
        let ds = try Certificate.issue(
            subject: .init(commonName: "Test DS", country: "UT"), publicKey: dsKey.publicKey, issuer: iaca,
            issuerKey: iacaKey,
            serial: 2, notBefore: from, notAfter: to, profile: .documentSigner)
        issuer = MdocIssuer(signer: dsKey, certificateChain: [ds])
        readerRootKey = try SoftwareSigner.generate()
        let rootName = DistinguishedName(commonName: "Test Reader Root", country: "UT")
        readerRoot = try Certificate.issue(
            subject: rootName, publicKey: readerRootKey.publicKey, issuer: nil, issuerKey: readerRootKey, serial: 10,
            notBefore: from, notAfter: to, profile: .readerRoot)
        readerKey = try SoftwareSigner.generate()
        readerCert = try Certificate.issue(
            subject: .init(commonName: "Test Reader", organization: "Verifier Inc"), publicKey: readerKey.publicKey,
            issuer: readerRoot, issuerKey: readerRootKey, serial: 11, notBefore: from, notAfter: to,
            profile: .readerAuthentication)
        verifierKey = try SoftwareSigner.generate()
        verifierCert = try Certificate.issue(
            subject: .init(commonName: "Test Verifier", organization: "Verifier Inc"), publicKey: verifierKey.publicKey,
            issuer: readerRoot, issuerKey: readerRootKey, serial: 12, notBefore: from, notAfter: to,
            profile: .requestSigner(dnsNames: ["verifier.example"]))
    }

    public static let portrait = [UInt8](repeating: 0xd8, count: 8192)

    public static var mDLElements: [MdocIssuer.Element] {
        [
            .init("family_name", .text("Mustermann")), .init("given_name", .text("Erika")),
            .init("birth_date", .tagged(1004, .text("1971-09-01"))),
            .init("issue_date", .tagged(1004, .text("2024-01-01"))),
            .init("expiry_date", .tagged(1004, .text("2029-01-01"))), .init("issuing_country", .text("UT")),
            .init("issuing_authority", .text("Utopia DMV")), .init("document_number", .text("D1234567")),
            .init("portrait", .bytes(portrait)),
            .init("driving_privileges", .array([.map([.init(.text("vehicle_category_code"), .text("B"))])])),
            .init("age_over_18", .bool(true)), .init("age_over_21", .bool(true)),
        ]
    }

    public static var pidElements: [MdocIssuer.Element] {
        [
            .init("family_name", .text("Mustermann")), .init("given_name", .text("Erika")),
            .init("birth_date", .tagged(1004, .text("1971-09-01"))), .init("age_over_18", .bool(true)),
            .init("nationality", .array([.text("DE")])), .init("issuing_country", .text("DE")),
        ]
    }

    /// Issues a credential and registers its device key under `keys/<id>.pem`.
    public func entry(
        id: String, docType: String = mDL, nameSpace: String? = nil, elements: [MdocIssuer.Element]? = nil,
        moreNameSpaces: [(String, [MdocIssuer.Element])] = [],
        validFrom: Date = now.addingTimeInterval(-86400), validUntil: Date = now.addingTimeInterval(365 * 86400),
        cancelled: Bool = false
    ) throws -> CredentialContext.Entry {
        let device = try SoftwareSigner.generate()
        let ns = nameSpace ?? (docType == Self.pid ? Self.pid : Self.mDLNS)
        let elems = elements ?? (docType == Self.pid ? Self.pidElements : Self.mDLElements)
        let bytes = try issuer.issue(
            docType: docType, nameSpaces: [(ns, elems)] + moreNameSpaces, deviceKey: device.publicKey,
            signed: validFrom,
            validFrom: validFrom, validUntil: validUntil)
        deviceKeys["keys/\(id).pem"] = device
        return .init(id: id, issuerSigned: bytes, deviceKeyReference: "keys/\(id).pem", isCancelled: cancelled)
    }

    public var resolver: InMemoryKeyResolver { InMemoryKeyResolver(deviceKeys) }

    /// A snapshot with every credential's `verified` and `keyVerified` records removed (as written
    /// before records existed): each credential is then checked in full when the snapshot loads, and
    /// its key file when it first signs.
    public static func snapshotWithoutRecords(_ snapshot: [UInt8]) -> [UInt8] {
        var out = snapshot
        // Keys are in deterministic order: `verified` right after `docTypes`, so the credential map's
        // header (8 or 9 entries) is the nearest map head before it; `keyVerified` (when the writer
        // resolved a key file) after the dates, reached once the random bytes of `verified` are gone.
        for name in ["verified", "keyVerified"] {
            let key: [UInt8] = [0x60 + UInt8(name.utf8.count)] + Array(name.utf8) + [0x58, 0x20]
            while let r = out.firstRange(of: key) {
                out.removeSubrange(r.lowerBound..<r.upperBound + 32)
                if let h = out[..<r.lowerBound].lastIndex(where: { $0 == 0xa8 || $0 == 0xa9 }) { out[h] -= 1 }
            }
        }
        return out
    }

    public func context(_ entries: [CredentialContext.Entry], trust: ReaderTrustPolicy = ReaderTrustPolicy()) throws
        -> CredentialContext
    {
        try CredentialContext(entries: entries, readerTrust: trust, keyResolver: resolver)
    }

    /// An engine that answers Annex C entries only (the protocol most tests speak), at the world's clock.
    public func engine(
        _ context: CredentialContext, _ configure: (inout DigitalCredentialsEngine.Configuration) -> Void = { _ in }
    ) -> DigitalCredentialsEngine {
        Self.engine(context, protocols: [.annexC], configure)
    }

    /// An engine over `context` at the world's clock, answering `protocols`, with no zero-knowledge prover.
    public static func engine(
        _ context: CredentialContext, protocols: Set<PresentationProtocol> = Set(PresentationProtocol.allCases),
        _ configure: (inout DigitalCredentialsEngine.Configuration) -> Void = { _ in }
    ) -> DigitalCredentialsEngine {
        var c = DigitalCredentialsEngine.Configuration(protocols: protocols)
        c.clock = { TestWorld.now }
        // No prover unless a test asks for one (`ZeroKnowledgeSettings.longfellow(…)`): whether one is
        // installed on the machine must not change what other tests expect.
        c.zeroKnowledge = ZeroKnowledgeSettings()
        configure(&c)
        return DigitalCredentialsEngine(context: context, configuration: c)
    }

    public var trusted: ReaderTrustPolicy { ReaderTrustPolicy(trustAnchors: [readerRoot]) }
    public var perDocumentSigning: AnnexCReader.Signing { .perDocument(signer: readerKey, chain: [readerCert]) }
    public var allSigning: AnnexCReader.Signing { .all(signer: readerKey, chain: [readerCert]) }

    public static func ask(_ names: [String]) -> AnnexCReader.DocumentRequest { ask(mDL, names) }

    public static func ask(_ docType: String, _ names: [String], nameSpace: String? = nil)
        -> AnnexCReader.DocumentRequest
    {
        let ns = nameSpace ?? (docType == pid ? pid : mDLNS)
        return .init(
            docType: docType, elements: names.map { .init(ElementID(ns, $0), intentToRetain: $0 != "portrait") })
    }
}

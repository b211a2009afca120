import Foundation
import MdocCBOR
import DigitalCredentials

/// The benchmark credential world: an mDL (12 elements including an 8 KB portrait) issued under a
/// test IACA, its context with a reader root as trust anchor, a reader and an OpenID4VP verifier
/// certificate under that root. Built once.
@MainActor
struct BenchWorld {
    static let shared = BenchWorld()

    let now: Date
    let ns: String
    let elements: [MdocIssuer.Element]
    let context: CredentialContext
    /// The device key, as the context resolves it.
    let keys: InMemoryKeyResolver
    let root: Certificate
    let rootKey: SoftwareSigner
    let readerKey: SoftwareSigner
    let readerCert: Certificate
    let verifierKey: SoftwareSigner
    let verifierCert: Certificate
    /// The mDL's device key (the context resolves it in process; the PKCS#11 figures import it into a token).
    let deviceKey: SoftwareSigner

    init() {
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let day: TimeInterval = 86400
        let iacaKey = try! SoftwareSigner.generate()
        let dsKey = try! SoftwareSigner.generate()
        let device = try! SoftwareSigner.generate()
        let iacaName = DistinguishedName(commonName: "Bench IACA", country: "UT")
        let iaca = try! Certificate.issue(
            subject: iacaName, publicKey: iacaKey.publicKey, issuer: nil, issuerKey: iacaKey, serial: 1,
            notBefore: now - day, notAfter: now + 900 * day, profile: .iaca)
        let ds = try! Certificate.issue(
            subject: .init(commonName: "Bench DS"), publicKey: dsKey.publicKey, issuer: iaca, issuerKey: iacaKey,
            serial: 2,
            notBefore: now - day, notAfter: now + 900 * day, profile: .documentSigner)
        let ns = "org.iso.18013.5.1"
        let elements: [MdocIssuer.Element] = [
            .init("family_name", .text("Mustermann")), .init("given_name", .text("Erika")),
            .init("birth_date", .tagged(1004, .text("1971-09-01"))),
            .init("issue_date", .tagged(1004, .text("2024-01-01"))),
            .init("expiry_date", .tagged(1004, .text("2029-01-01"))), .init("issuing_country", .text("UT")),
            .init("issuing_authority", .text("Utopia DMV")), .init("document_number", .text("D1234567")),
            .init("portrait", .bytes([UInt8](repeating: 0xd8, count: 8192))),
            .init("driving_privileges", .array([.map([.init(.text("vehicle_category_code"), .text("B"))])])),
            .init("age_over_18", .bool(true)), .init("age_over_21", .bool(true)),
        ]
        let issued = try! MdocIssuer(signer: dsKey, certificateChain: [ds]).issue(
            docType: "org.iso.18013.5.1.mDL", nameSpaces: [(ns, elements)], deviceKey: device.publicKey,
            signed: now - day, validFrom: now - day, validUntil: now + 365 * day)
        let rootKey = try! SoftwareSigner.generate()
        let readerKey = try! SoftwareSigner.generate()
        let rootName = DistinguishedName(commonName: "Bench Reader Root")
        let root = try! Certificate.issue(
            subject: rootName, publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey, serial: 3,
            notBefore: now - day, notAfter: now + 900 * day, profile: .readerRoot)
        let readerCert = try! Certificate.issue(
            subject: .init(commonName: "Bench Reader"), publicKey: readerKey.publicKey, issuer: root,
            issuerKey: rootKey,
            serial: 4,
            notBefore: now - day, notAfter: now + 900 * day, profile: .readerAuthentication)
        let keys = InMemoryKeyResolver(["k": device])
        let context = try! CredentialContext(
            entries: [.init(id: "mdl", issuerSigned: issued, deviceKeyReference: "k")],
            readerTrust: ReaderTrustPolicy(trustAnchors: [root]), keyResolver: keys)
        self.keys = keys
        verifierKey = try! SoftwareSigner.generate()
        verifierCert = try! Certificate.issue(
            subject: .init(commonName: "Bench Verifier"), publicKey: verifierKey.publicKey, issuer: root,
            issuerKey: rootKey, serial: 5, notBefore: now - day, notAfter: now + 900 * day,
            profile: .requestSigner(dnsNames: ["verifier.example"]))
        self.deviceKey = device
        self.now = now
        self.ns = ns
        self.elements = elements
        self.context = context
        self.root = root
        self.rootKey = rootKey
        self.readerKey = readerKey
        self.readerCert = readerCert
    }
}

extension DigitalCredentialsEngine {
    /// An engine that answers Annex C entries only, at a fixed clock.
    static func annexC(_ context: CredentialContext, clock: @escaping @Sendable () -> Date) -> DigitalCredentialsEngine
    {
        var c = Configuration(protocols: [.annexC])
        c.clock = clock
        return DigitalCredentialsEngine(context: context, configuration: c)
    }

    /// An engine that answers OpenID4VP entries only, at a fixed clock.
    static func openID4VP(_ context: CredentialContext, clock: @escaping @Sendable () -> Date)
        -> DigitalCredentialsEngine
    {
        var c = Configuration(protocols: [.openID4VP], preference: .openID4VP)
        c.clock = clock
        return DigitalCredentialsEngine(context: context, configuration: c)
    }

    /// An engine with the default configuration (every protocol, `.answerable`), at a fixed clock.
    static func facade(_ context: CredentialContext, clock: @escaping @Sendable () -> Date) -> DigitalCredentialsEngine
    {
        var c = Configuration()
        c.clock = clock
        return DigitalCredentialsEngine(context: context, configuration: c)
    }

    /// The default-configuration engine over a context directory holding `context`'s snapshot (in a
    /// fresh temporary directory, its keys resolved in memory): every call checks the snapshot file
    /// for a new generation, as a long-lived wallet backend's engine does.
    static func facadeOverStore(
        _ context: CredentialContext, keys: InMemoryKeyResolver, clock: @escaping @Sendable () -> Date
    ) -> DigitalCredentialsEngine {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mdoc-bench-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try! FileManager.default.createDirectory(
            at: dir.appendingPathComponent("keys"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        chmod(dir.path, 0o700)
        try! context.write(to: dir)
        var c = Configuration()
        c.clock = clock
        return try! DigitalCredentialsEngine(contextDirectory: dir, keyResolver: keys, configuration: c)
    }
}

/// The figure of `engine.parse` on one request (the consent phase: checks, signatures, the plan).
func measureParse(_ name: String, _ engine: DigitalCredentialsEngine, _ raw: Data, _ origin: Origin) -> Figure {
    measure(name) { blackHole(try! engine.parse(rawRequest: raw, origin: origin.serialized)) }
}

package import CryptoCore
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An X.509 certificate as carried in `x5chain` (DER), with the accessors mdoc trust decisions need.
public struct Certificate: Sendable {
    let cert: X509Certificate
    let key: COSEKey?
    /// What trust decisions read (subject, validity, AKI, EKUs), extracted once at parse time and so
    /// once per distinct certificate, through the cache.
    let facts: CertificateFacts

    /// Parses DER; trailing bytes are rejected. Parsed certificates are cached process-wide (bounded),
    /// because OpenSSL 3.0 decodes a certificate's key through its slow generic decoder and readers
    /// send the same certificates request after request.
    public init(der: [UInt8]) throws(COSEError) {
        if let hit = CertificateCache.shared.lookup(der) {
            self = hit
            return
        }
        do { cert = try X509Certificate(der: der) } catch { throw .invalidCertificate }
        key = try? COSEKey(publicKey: cert.publicKey())
        facts = CertificateFacts(cert)
        CertificateCache.shared.store(self)
    }

    /// The exact DER bytes.
    public var der: [UInt8] { cert.der }
    /// Subject distinguished name (RFC 2253).
    public var subject: String { facts.subject }
    /// Issuer distinguished name (RFC 2253).
    public var issuer: String { cert.issuer }
    /// Start of validity (UTC); reader trust refuses a chain before this instant.
    public var notBefore: Date { facts.notBefore }
    /// End of validity (UTC); reader trust refuses a chain after this instant.
    public var notAfter: Date { facts.notAfter }
    /// The Subject Key Identifier extension value (RFC 5280 §4.2.1.2), nil when absent.
    public var subjectKeyIdentifier: [UInt8]? { cert.subjectKeyIdentifier }
    /// Authority Key Identifier (keyIdentifier field).
    public var authorityKeyIdentifier: [UInt8]? { facts.authorityKeyIdentifier }
    /// True when basicConstraints says CA.
    public var isCA: Bool { facts.isCA }
    /// True when the certificate can anchor a chain: a CA whose keyUsage, when present, allows keyCertSign.
    public var canAnchorChains: Bool {
        isCA && (cert.keyUsage.map { $0 & X509Certificate.keyUsageCertSign != 0 } ?? true)
    }
    /// True when the key usage extension is present and asserts digitalSignature (RFC 5280 §4.2.1.3).
    public var allowsDigitalSignature: Bool { facts.allowsDigitalSignature }
    /// True when the certificate is self-signed (issuer equals subject and it verifies under its own key).
    public var isSelfSigned: Bool { facts.isSelfSigned }

    /// The dNSName entries of the subjectAltName extension, in order (OpenID4VP `x509_san_dns`).
    public var dnsNames: [String] { cert.dnsNames }

    /// The subject public key, validated, for the JOSE layer.
    package func validatedPublicKey() throws(COSEError) -> PublicKey {
        guard let key else { throw .invalidKey("unsupported certificate key") }
        return key.validated.key
    }

    /// The subject public key as a COSE_Key (EC2 P-256/384/521 or OKP Ed25519).
    public func publicKey() throws(COSEError) -> COSEKey {
        guard let key else { throw .invalidKey("unsupported certificate key") }
        return key
    }

    /// True when the extended key usage extension lists `oid` (dotted notation).
    public func hasExtendedKeyUsage(_ oid: String) -> Bool { facts.extendedKeyUsages.contains(oid) }

    /// True when this certificate's signature verifies with `issuer`'s key.
    public func isSigned(by issuer: Certificate) -> Bool { cert.isSigned(by: issuer.cert) }

    /// Validates `leaf ← intermediates… ← anchor` at `time` (X.509 strict mode). Profile checks (EKU,
    /// key usage, AKI policy) are the caller's.
    public static func validatePath(
        leaf: Certificate, intermediates: [Certificate] = [], anchors: [Certificate], at time: Date
    ) throws(COSEError) {
        do {
            try X509Certificate.validatePath(
                leaf: leaf.cert, intermediates: intermediates.map(\.cert), anchors: anchors.map(\.cert),
                at: Int64(time.timeIntervalSince1970))
        } catch {
            if case .chainValidationFailed(let code) = error { throw .certificatePathInvalid(code: code) }
            throw .certificatePathInvalid(code: -1)
        }
    }
}

/// ISO/IEC 18013-5 extended key usage OIDs.
public enum MdocKeyUsage {
    /// Document signer (issuerAuth).
    public static let documentSigner = "1.0.18013.5.1.2"
    /// mdoc reader authentication.
    public static let readerAuthentication = "1.0.18013.5.1.6"
}

/// A distinguished name for certificates this library creates: country, organization and common
/// name, written in that order (RFC 5280 §4.1.2.4). The one name model: an issued certificate's issuer
/// name is its issuer certificate's subject, copied as encoded.
public struct DistinguishedName: Sendable, Hashable {
    /// commonName (OID 2.5.4.3), required; written as UTF8String.
    public var commonName: String
    /// C (two letters).
    public var country: String?
    /// organizationName (OID 2.5.4.10), omitted when nil.
    public var organization: String?
    /// Creates a name.
    public init(commonName: String, country: String? = nil, organization: String? = nil) {
        self.commonName = commonName
        self.country = country
        self.organization = organization
    }
    /// The (attribute, value) pairs, in encoding order.
    var attributes: [(attribute: String, value: String)] {
        var a = [(attribute: String, value: String)]()
        if let country { a.append(("C", country)) }
        if let organization { a.append(("O", organization)) }
        a.append(("CN", commonName))
        return a
    }
}

/// Certificate profiles of ISO/IEC 18013-5 Annex B.
public enum CertificateProfile: Sendable {
    /// IACA root: CA (path length 0), keyCertSign + cRLSign.
    case iaca
    /// Document signer: digitalSignature, EKU 1.0.18013.5.1.2.
    case documentSigner
    /// Reader authentication root: CA, keyCertSign + cRLSign.
    case readerRoot
    /// Reader authentication certificate: digitalSignature, EKU 1.0.18013.5.1.6.
    case readerAuthentication
    /// An end-entity certificate with an arbitrary EKU (for negative tests).
    case endEntity(extendedKeyUsage: String?)
    /// Any combination, for negative tests: basicConstraints CA flag, key usage in OpenSSL's config
    /// syntax (nil: no key usage extension), EKU OID (nil: none).
    case custom(isCA: Bool, keyUsage: String?, extendedKeyUsage: String?)
    /// An OpenID4VP request-signing certificate of an mdoc verifier: the reader-authentication profile
    /// (digitalSignature, EKU 1.0.18013.5.1.6, which HAIP names for mdoc), with these subjectAltName
    /// dNSNames (`x509_san_dns` client identifiers).
    case requestSigner(dnsNames: [String])
    /// A request-signing certificate without the reader EKU (an ecosystem that defines none):
    /// digitalSignature and these dNSNames only.
    case requestSignerWithoutReaderEKU(dnsNames: [String])

    var builderProfile: X509Builder.Profile {
        switch self {
        case .iaca:
            .init(
                isCA: true, pathLength: 0, keyUsage: "critical,keyCertSign,cRLSign",
                crlDistributionPoint: "URI:https://crl.example.invalid/iaca.crl",
                issuerAlternativeName: "URI:https://issuer.example.invalid")
        case .documentSigner:
            .init(
                isCA: false, keyUsage: "critical,digitalSignature",
                extendedKeyUsage: "critical," + MdocKeyUsage.documentSigner,
                crlDistributionPoint: "URI:https://crl.example.invalid/iaca.crl",
                issuerAlternativeName: "URI:https://issuer.example.invalid")
        case .readerRoot:
            .init(isCA: true, pathLength: 0, keyUsage: "critical,keyCertSign,cRLSign")
        case .readerAuthentication:
            .init(
                isCA: false, keyUsage: "critical,digitalSignature",
                extendedKeyUsage: "critical," + MdocKeyUsage.readerAuthentication)
        case .endEntity(let eku):
            .init(isCA: false, keyUsage: "critical,digitalSignature", extendedKeyUsage: eku.map { "critical," + $0 })
        case .custom(let isCA, let ku, let eku):
            .init(isCA: isCA, keyUsage: ku ?? "", extendedKeyUsage: eku.map { "critical," + $0 })
        case .requestSigner(let names):
            .init(
                isCA: false, keyUsage: "critical,digitalSignature",
                extendedKeyUsage: "critical," + MdocKeyUsage.readerAuthentication,
                subjectAlternativeName: names.isEmpty ? nil : names.map { "DNS:" + $0 }.joined(separator: ","))
        case .requestSignerWithoutReaderEKU(let names):
            .init(
                isCA: false, keyUsage: "critical,digitalSignature",
                subjectAlternativeName: names.isEmpty ? nil : names.map { "DNS:" + $0 }.joined(separator: ","))
        }
    }
}

extension Certificate {
    /// Issues a certificate (ECDSA-signed). Self-signed when `issuer` is nil.
    /// - Parameters:
    ///   - subject: the subject name.
    ///   - publicKey: the subject's public key (EC2).
    ///   - issuer: the issuing CA's certificate (its subject becomes the issuer name), or nil for a root.
    ///   - issuerKey: the CA's signer (or the subject's own, for a root).
    ///   - serial: the serial number.
    ///   - notBefore: start of validity.
    ///   - notAfter: end of validity.
    ///   - profile: the 18013-5 Annex B profile.
    package static func issue(
        subject: DistinguishedName, publicKey: COSEKey, issuer: Certificate?,
        issuerKey: SoftwareSigner, serial: UInt64, notBefore: Date, notAfter: Date,
        profile: CertificateProfile
    ) throws(COSEError) -> Certificate {
        do {
            let c = try X509Builder.issue(
                subject: subject.attributes, subjectKey: publicKey.publicKey,
                issuer: issuer?.cert, issuerKey: issuerKey.key,
                serial: serial, notBefore: Int64(notBefore.timeIntervalSince1970),
                notAfter: Int64(notAfter.timeIntervalSince1970),
                profile: profile.builderProfile)
            return try Certificate(der: c.der)
        } catch let e as COSEError {
            throw e
        } catch {
            throw .signingFailed
        }
    }
}

/// A bounded, thread-safe cache of parsed certificates keyed by their exact DER bytes. When full it
/// is emptied (a flood of distinct certificates only costs the uncached parse time).
final class CertificateCache: Sendable {
    static let shared = CertificateCache(capacity: 256)
    private let capacity: Int
    private let entries = LockedValue<[Key: Certificate]>([:])

    /// DER bytes as a dictionary key: hashed over the length and the last 32 bytes (inside the
    /// signature, so they differ between certificates), compared in full. Hashing the whole DER
    /// with SipHash cost more than the rest of a cache hit. (Hasher is seeded per process, and a
    /// flood of look-alike certificates is bounded by the capacity: at most that many comparisons.)
    struct Key: Hashable, Sendable {
        let der: [UInt8]
        static func == (a: Key, b: Key) -> Bool {
            guard a.der.count == b.der.count else { return false }
            guard !a.der.isEmpty else { return true }
            return a.der.withUnsafeBytes { x in
                b.der.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
            }
        }
        func hash(into h: inout Hasher) {
            h.combine(der.count)
            der.withUnsafeBytes { b in h.combine(bytes: UnsafeRawBufferPointer(rebasing: b[max(0, b.count - 32)...])) }
        }
    }

    init(capacity: Int) { self.capacity = capacity }

    func lookup(_ der: [UInt8]) -> Certificate? { entries.withLock { $0[Key(der: der)] } }

    func store(_ c: Certificate) {
        entries.withLock { e in
            if e.count >= capacity { e.removeAll(keepingCapacity: true) }
            e[Key(der: c.der)] = c
        }
    }
}

/// The fields of a certificate that trust decisions read, extracted once.
final class CertificateFacts: Sendable {
    let subject: String
    let notBefore: Date
    let notAfter: Date
    let authorityKeyIdentifier: [UInt8]?
    /// Extended key usage OIDs, dotted.
    let extendedKeyUsages: [String]
    let isCA: Bool
    let allowsDigitalSignature: Bool
    /// The certificate, for the self-signature check, which is made on first use: it is a signature
    /// verification, and only a refused chain's explanation asks for it (an anchor is trusted as
    /// configured; a request's chain is validated by its issuer's signatures).
    private let cert: X509Certificate
    /// Whether issuer and subject names are equal (a certificate whose names differ is not self-signed).
    private let namesMatch: Bool
    /// The self-signature check's result once made: 0 not yet, 1 fails, 2 verifies.
    private let selfSignature = Atomic<UInt8>(0)

    /// True when the certificate is self-signed: issuer and subject names equal and its signature
    /// verifies under its own key. Computed on first use (threads asking at once may each compute it,
    /// and store the same answer; the verification only reads the certificate and its key).
    var isSelfSigned: Bool {
        guard namesMatch else { return false }
        switch selfSignature.load(ordering: .acquiring) {
        case 1: return false
        case 2: return true
        default:
            let verifies = cert.isSigned(by: cert)
            selfSignature.store(verifies ? 2 : 1, ordering: .releasing)
            return verifies
        }
    }

    init(_ cert: X509Certificate) {
        self.cert = cert
        isCA = cert.isCA
        allowsDigitalSignature = cert.keyUsage.map { $0 & X509Certificate.keyUsageDigitalSignature != 0 } ?? false
        namesMatch = cert.namesMatch
        subject = cert.subject
        notBefore = Date(timeIntervalSince1970: TimeInterval(cert.notBefore))
        notAfter = Date(timeIntervalSince1970: TimeInterval(cert.notAfter))
        authorityKeyIdentifier = cert.authorityKeyIdentifier
        extendedKeyUsages = cert.extendedKeyUsages
    }
}

internal import CryptoCore
import Foundation

/// An X.509 certificate as carried in `x5chain` (DER), with the accessors mdoc trust decisions need.
public struct Certificate: Sendable {
    let cert: X509Certificate

    /// Parses DER; trailing bytes are rejected.
    public init(der: [UInt8]) throws(COSEError) {
        do { cert = try X509Certificate(der: der) } catch { throw .invalidCertificate }
    }

    /// The exact DER bytes.
    public var der: [UInt8] { cert.der }
    /// Subject distinguished name (RFC 2253).
    public var subject: String { cert.subject }
    /// Issuer distinguished name (RFC 2253).
    public var issuer: String { cert.issuer }
    /// Start of validity.
    public var notBefore: Date { Date(timeIntervalSince1970: TimeInterval(cert.notBefore)) }
    /// End of validity.
    public var notAfter: Date { Date(timeIntervalSince1970: TimeInterval(cert.notAfter)) }
    /// Subject Key Identifier.
    public var subjectKeyIdentifier: [UInt8]? { cert.subjectKeyIdentifier }
    /// Authority Key Identifier (keyIdentifier field).
    public var authorityKeyIdentifier: [UInt8]? { cert.authorityKeyIdentifier }
    /// True when basicConstraints says CA.
    public var isCA: Bool { cert.isCA }

    /// The subject public key as a COSE_Key (EC2 P-256/384/521 or OKP Ed25519).
    public func publicKey() throws(COSEError) -> COSEKey {
        do { return COSEKey(publicKey: try cert.publicKey()) } catch { throw .invalidKey("unsupported certificate key") }
    }

    /// True when the extended key usage extension lists `oid` (dotted notation).
    public func hasExtendedKeyUsage(_ oid: String) -> Bool { cert.hasExtendedKeyUsage(oid) }

    /// True when this certificate's signature verifies with `issuer`'s key.
    public func isSigned(by issuer: Certificate) -> Bool { cert.isSigned(by: issuer.cert) }

    /// Validates `leaf ← intermediates… ← anchor` at `time` (X.509 strict mode). Profile checks (EKU,
    /// key usage, AKI policy) are the caller's.
    public static func validatePath(leaf: Certificate, intermediates: [Certificate] = [], anchors: [Certificate], at time: Date) throws(COSEError) {
        do {
            try X509Certificate.validatePath(leaf: leaf.cert, intermediates: intermediates.map(\.cert), anchors: anchors.map(\.cert),
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

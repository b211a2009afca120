#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR

/// Why a reader whose signature verified is not trusted (shown on the consent screen; the `underlying`
/// of a `TrustRule.readerNotTrusted` refusal).
public enum UntrustedReason: String, Error, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The holder has configured no trust anchors.
    case noTrustAnchors
    /// The reader certificate is self-signed and not itself an anchor.
    case selfSigned
    /// The chain does not lead to any configured anchor.
    case notChainedToAnchor
    /// The reader certificate is expired or not yet valid at the engine's clock.
    case outsideValidity
    /// The reader certificate is a CA certificate (18013-5 Annex B: an end-entity certificate).
    case isCertificateAuthority
    /// The reader certificate's key usage lacks digitalSignature (or the extension is absent).
    case lacksDigitalSignatureKeyUsage
    /// The reader certificate lacks extended key usage 1.0.18013.5.1.6.
    case lacksReaderExtendedKeyUsage
    /// The certificate's authority is not in the holder's allowed authorities (reported for one of
    /// several signatures when another one is allowed).
    case authorityNotAllowed

    /// The phrase (`explanation`).
    public var description: String { explanation }

    /// A phrase for the consent screen and the explanation.
    public var explanation: String {
        switch self {
        case .noTrustAnchors: "no trust anchors are configured"
        case .selfSigned: "the reader certificate is self-signed"
        case .notChainedToAnchor: "the reader certificate does not chain to a trusted reader root"
        case .outsideValidity: "the reader certificate is expired or not yet valid"
        case .isCertificateAuthority: "the reader certificate is a CA certificate"
        case .lacksDigitalSignatureKeyUsage: "the reader certificate lacks the digitalSignature key usage"
        case .lacksReaderExtendedKeyUsage: "the reader certificate lacks EKU 1.0.18013.5.1.6"
        case .authorityNotAllowed: "the reader certificate's authority is not among the holder's allowed authorities"
        }
    }
}

/// The outcome of reader authentication for a DocRequest (or the whole request), for the consent UI
/// and the explanation.
public enum ReaderVerdict: Sendable, Hashable {
    /// No valid reader signature covers it.
    case notAuthenticated
    /// A reader signature covers it, and the reader chains to a trust anchor through an allowed
    /// authority with a reader-authentication certificate.
    case trusted(subject: String, authorityKeyIdentifier: [UInt8]?)
    /// A reader signature covers it and verifies, but the reader is not trusted, for `reason`.
    case signedNotTrusted(subject: String, reason: UntrustedReason)

    /// The reader certificate subject, if signed.
    public var subject: String? {
        switch self {
        case .notAuthenticated: nil
        case .trusted(let s, _), .signedNotTrusted(let s, _): s
        }
    }

    /// Weakest first: not authenticated, signed but not trusted, trusted.
    package var strength: Int {
        switch self {
        case .notAuthenticated: 0
        case .signedNotTrusted: 1
        case .trusted: 2
        }
    }
}

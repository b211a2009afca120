#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR

/// Which reader certificate authorities the holder accepts (what iOS calls supported authority key
/// identifiers), matched against the reader certificate's Authority Key Identifier.
public enum AuthorityPolicy: Sendable, Hashable {
    /// Any authority: any reader may ask (whether it is trusted is reported, not enforced).
    case any
    /// Only readers whose certificate's AKI is one of these (the issuing CA's SKI); a signed request
    /// from any other reader is refused (`untrustedReader`). An empty list behaves like `.any`.
    case only([[UInt8]])
}

/// The holder's reader-trust policy. Every reader signature is always verified, and a bad one always
/// refuses; what follows a valid signature is this policy's choice:
///
/// | policy | unsigned DocRequest | signed, not trusted | signed by an authority not in `.only` |
/// | --- | --- | --- | --- |
/// | default | answered, "not authenticated" | answered, "signed, not trusted" and why | refused |
/// | `requireTrustedReader` | answered | refused (`untrustedReader`) | refused |
/// | `requireReaderAuthentication` | refused (`readerAuthenticationRequired`) | refused (`untrustedReader`) | refused |
public struct ReaderTrustPolicy: Sendable {
    /// Reader root certificates. When empty, signatures are still verified but no reader is trusted.
    public var trustAnchors: [Certificate]
    /// Which issuing authorities (by AKI) may ask at all: `.any`, or `.only` a list, refusing every other signed reader.
    public var authorities: AuthorityPolicy
    /// Every DocRequest must be covered by a valid signature of a trusted reader (implies
    /// `requireTrustedReader`).
    public var requireReaderAuthentication: Bool
    /// A signed DocRequest must come from a trusted reader (chain to an anchor at the engine's clock,
    /// 18013-5 Annex B reader certificate profile); unsigned DocRequests are still answered unless
    /// `requireReaderAuthentication` is set.
    public var requireTrustedReader: Bool
    /// The end-entity profile a signer's certificate must have to be trusted, in every protocol: one
    /// certificate gets one verdict whether it signs an Annex C `readerAuth` or an OpenID4VP request
    /// object. Default: the ISO/IEC 18013-5 Annex B reader profile (EKU 1.0.18013.5.1.6), which HAIP
    /// names for mdoc; `.requestSigner` for an ecosystem whose verifiers carry no such EKU.
    public var signerProfile: SignerProfile

    /// Creates a policy.
    public init(
        trustAnchors: [Certificate] = [], authorities: AuthorityPolicy = .any,
        requireReaderAuthentication: Bool = false,
        requireTrustedReader: Bool = false, signerProfile: SignerProfile = .mdocReader
    ) {
        self.trustAnchors = trustAnchors
        self.authorities = authorities
        self.requireReaderAuthentication = requireReaderAuthentication
        self.requireTrustedReader = requireTrustedReader
        self.signerProfile = signerProfile
    }
}

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
    ///
    /// A policy read from a snapshot keeps its anchors as DER and parses them when reader trust is
    /// first needed (a signed request, or this property): a request no signature covers never parses
    /// a certificate, and in OpenSSL 3.0 a process's first certificate parse costs about 7 million
    /// instructions. An anchor of a snapshot that is not a certificate is left out here, and every
    /// signed request is refused while it is there (`contextCorrupt`, `anchorNotCertificate`).
    public var trustAnchors: [Certificate] {
        get { anchors.parsed.certificates }
        set { anchors = TrustAnchors(newValue) }
    }
    /// The anchors as stored (DER), and their certificates once parsed.
    package var anchors: TrustAnchors
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
        self.init(
            anchors: TrustAnchors(trustAnchors), authorities: authorities,
            requireReaderAuthentication: requireReaderAuthentication, requireTrustedReader: requireTrustedReader,
            signerProfile: signerProfile)
    }

    /// Creates a policy with anchors as stored (a snapshot's DER, parsed when first needed).
    package init(
        anchors: TrustAnchors, authorities: AuthorityPolicy, requireReaderAuthentication: Bool,
        requireTrustedReader: Bool, signerProfile: SignerProfile
    ) {
        self.anchors = anchors
        self.authorities = authorities
        self.requireReaderAuthentication = requireReaderAuthentication
        self.requireTrustedReader = requireTrustedReader
        self.signerProfile = signerProfile
    }
}

/// A policy's trust anchors: each one's DER in order, and the certificates parsed once, when first
/// needed (immutable apart from that one-time parse, so shared between copies of a policy and threads).
package final class TrustAnchors: Sendable {
    /// Each anchor's DER, in order (what a snapshot stores).
    package let der: [[UInt8]]
    private let once = OnceReference<Parsed>()

    /// The anchors' certificates, and whether every anchor parsed.
    final class Parsed: Sendable {
        let certificates: [Certificate]
        let complete: Bool
        init(_ certificates: [Certificate], complete: Bool) {
            self.certificates = certificates
            self.complete = complete
        }
    }

    /// Anchors given as certificates (parsed already).
    init(_ certificates: [Certificate]) {
        der = certificates.map(\.der)
        _ = once.storeIfNil(Parsed(certificates, complete: true))
    }

    /// Anchors given as DER (a snapshot's), parsed on first use.
    package init(der: [[UInt8]]) { self.der = der }

    /// Whether the certificates have been parsed.
    package var isParsed: Bool { once.load() != nil }

    /// The certificates that parse (each anchor parsed once, through the process's certificate cache).
    var parsed: Parsed {
        if let p = once.load() { return p }
        var certificates = [Certificate]()
        certificates.reserveCapacity(der.count)
        for d in der {
            if let c = try? Certificate(der: d) { certificates.append(c) }
        }
        return once.storeIfNil(Parsed(certificates, complete: certificates.count == der.count))
    }

    /// Every anchor's certificate.
    /// - Throws: `anchorNotCertificate` when an anchor is not a DER certificate.
    func certificates() throws(PresentmentError) -> [Certificate] {
        let p = parsed
        guard p.complete else { throw PresentmentError(ContextRule.anchorNotCertificate) }
        return p.certificates
    }
}

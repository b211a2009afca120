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
    /// The end-entity profile a signer's certificate must have to be trusted under an anchor that has
    /// no purpose of its own (`anchorPurposes`), in every protocol: one certificate gets one verdict
    /// whether it signs an Annex C `readerAuth` or an OpenID4VP request object. Default: the ISO/IEC
    /// 18013-5 Annex B reader profile (EKU 1.0.18013.5.1.6), which HAIP names for mdoc;
    /// `.requestSigner` for an ecosystem whose verifiers carry no such EKU.
    public var signerProfile: SignerProfile

    /// Each anchor's purpose, in `trustAnchors` order; nil: the anchor follows `signerProfile`. The
    /// profile a chain is judged by follows the anchor it reaches, not the protocol it came in.
    public var anchorPurposes: [AnchorPurpose?] { anchors.purposes }

    /// Adds `certificate` as an anchor for `purpose` (or sets the purpose of an anchor already there).
    /// - Throws: `context.anchorCannotAnchor` for a certificate that can never anchor a chain (not a CA,
    ///   or a keyUsage without keyCertSign).
    public mutating func addAnchor(_ certificate: Certificate, purpose: AnchorPurpose) throws(PresentmentError) {
        guard certificate.canAnchorChains else { throw PresentmentError(ContextRule.anchorCannotAnchor) }
        var der = anchors.der
        var purposes = anchors.purposes
        if let i = der.firstIndex(of: certificate.der) {
            purposes[i] = purpose
        } else {
            der.append(certificate.der)
            purposes.append(purpose)
        }
        anchors = TrustAnchors(der: der, purposes: purposes)
    }

    /// Removes the anchor whose DER is `der`, if present; true when it was there.
    @discardableResult public mutating func removeAnchor(der: [UInt8]) -> Bool {
        guard let i = anchors.der.firstIndex(of: der) else { return false }
        var list = anchors.der
        var purposes = anchors.purposes
        list.remove(at: i)
        purposes.remove(at: i)
        anchors = TrustAnchors(der: list, purposes: purposes)
        return true
    }

    /// The CLI's spelling of the purpose an anchor is used for (its own, else the profile's).
    package func effectivePurposeArgument(_ own: AnchorPurpose?) -> String { effectivePurpose(own).argument }

    /// The purpose an anchor is used for: its own, else the one `signerProfile` implies.
    func effectivePurpose(_ own: AnchorPurpose?) -> AnchorPurpose {
        own ?? (signerProfile == .mdocReader ? .mdocReader : .relyingParty)
    }

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

/// What the holder trusts an anchor for: which end-entity profile a signer chaining to it must have.
public enum AnchorPurpose: String, Sendable, Hashable, CaseIterable {
    /// An ISO/IEC 18013-5 reader CA (a RICAL entry, an IACA-style reader root): signers must be mdoc
    /// readers (not a CA, digitalSignature, EKU 1.0.18013.5.1.6).
    case mdocReader
    /// A relying party's CA (OpenID4VP request signers, the EU's relying-party access certificates,
    /// which carry no reader EKU): signers must be end-entity certificates, not self-signed, with
    /// digitalSignature. The default for an anchor the holder adds by hand (`context trust add`).
    case relyingParty

    /// The CLI's spelling (`mdoc-reader`, `relying-party`).
    public var argument: String { self == .mdocReader ? "mdoc-reader" : "relying-party" }

    /// The purpose spelled as the CLI takes it.
    public init?(argument: String) {
        switch argument {
        case "mdoc-reader": self = .mdocReader
        case "relying-party": self = .relyingParty
        default: return nil
        }
    }

    /// The end-entity profile a signer under such an anchor is held to.
    var signerProfile: SignerProfile { self == .mdocReader ? .mdocReader : .requestSigner }
}

/// A policy's trust anchors: each one's DER and purpose in order, and the certificates parsed once, when
/// first needed (immutable apart from that one-time parse, so shared between copies of a policy and
/// threads).
package final class TrustAnchors: Sendable {
    /// Each anchor's DER, in order (what a snapshot stores).
    package let der: [[UInt8]]
    /// Each anchor's purpose (nil: the policy's `signerProfile` decides), one per `der`.
    package let purposes: [AnchorPurpose?]
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

    /// Anchors given as certificates (parsed already), without purposes of their own.
    init(_ certificates: [Certificate]) {
        der = certificates.map(\.der)
        purposes = Array(repeating: nil, count: certificates.count)
        _ = once.storeIfNil(Parsed(certificates, complete: true))
    }

    /// Anchors given as DER (a snapshot's), parsed on first use; `purposes` (default: none of their
    /// own) has one entry per anchor.
    package init(der: [[UInt8]], purposes: [AnchorPurpose?]? = nil) {
        precondition(purposes == nil || purposes!.count == der.count, "one purpose per anchor")
        self.der = der
        self.purposes = purposes ?? Array(repeating: nil, count: der.count)
    }

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

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MdocCBOR

/// Evaluates reader certificates against the holder's policy: the X.509 part of reader trust that
/// every protocol shares (Annex C `readerAuth` x5chain, OpenID4VP `x5c`). Signatures are the front
/// end's; this decides only who the signer is and whether the holder trusts them.
package struct ReaderTrustEvaluator: Sendable {
    package let policy: ReaderTrustPolicy
    /// The time certificates are checked at (the engine's clock).
    package let now: Date

    package init(policy: ReaderTrustPolicy, now: Date) {
        self.policy = policy
        self.now = now
    }

    /// The trust verdict for a reader certificate chain (leaf first) whose signature has been verified:
    /// `.success` with trusted or signed-not-trusted (and why), or `.failure` (`untrustedReader`) when
    /// the holder's explicit authority list refuses the reader. Trusted means: the leaf's AKI passes
    /// the authority policy, the chain reaches an anchor at `now` (X.509 strict), and the leaf has the
    /// ISO/IEC 18013-5 Annex B reader-authentication profile (not a CA, digitalSignature, EKU
    /// 1.0.18013.5.1.6).
    package func evaluate(_ chain: [Certificate]) -> Swift.Result<ReaderVerdict, PresentmentError> {
        let leaf = chain[0]
        let subject = leaf.subject
        let aki = leaf.authorityKeyIdentifier
        if case .only(let allowed) = policy.authorities, !allowed.isEmpty {
            guard let aki, allowed.contains(aki) else {
                return .failure(
                    PresentmentError(
                        .untrustedReader, "reader certificate authority is not in the holder's allowed authorities"))
            }
        }
        func untrusted(_ r: UntrustedReason) -> Swift.Result<ReaderVerdict, PresentmentError> {
            .success(.signedNotTrusted(subject: subject, reason: r))
        }
        guard !policy.trustAnchors.isEmpty else { return untrusted(.noTrustAnchors) }
        guard now >= leaf.notBefore && now <= leaf.notAfter else { return untrusted(.outsideValidity) }
        do {
            try Certificate.validatePath(
                leaf: leaf, intermediates: Array(chain.dropFirst()), anchors: policy.trustAnchors, at: now)
        } catch {
            return untrusted(leaf.isSelfSigned ? .selfSigned : .notChainedToAnchor)
        }
        // The 18013-5 Annex B reader-authentication certificate profile.
        guard !leaf.isCA else { return untrusted(.isCertificateAuthority) }
        guard leaf.allowsDigitalSignature else { return untrusted(.lacksDigitalSignatureKeyUsage) }
        guard leaf.hasExtendedKeyUsage(MdocKeyUsage.readerAuthentication) else {
            return untrusted(.lacksReaderExtendedKeyUsage)
        }
        return .success(.trusted(subject: subject, authorityKeyIdentifier: aki))
    }
}

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
    /// the authority policy, the chain reaches an anchor at `now` (X.509 strict on the leaf and
    /// intermediates; the anchor itself an input, RFC 5280 §6.1), and the leaf has the signer profile
    /// of that anchor's purpose (`AnchorPurpose`; an anchor without one follows the policy's
    /// `signerProfile`): an mdoc reader (ISO/IEC 18013-5 Annex B: not a CA, digitalSignature, EKU
    /// 1.0.18013.5.1.6) or a relying party's request signer (not a CA, not self-signed,
    /// digitalSignature). When anchors of both purposes are held, the chain is judged under each
    /// purpose whose anchors it reaches (mdoc reader first) and is trusted when one admits it. The
    /// verdict depends on the certificate and the policy only, never on the protocol the signature
    /// came in.
    func evaluate(_ chain: [Certificate], anchors: [Certificate]) -> Swift.Result<ReaderVerdict, PresentmentError> {
        let leaf = chain[0]
        let subject = leaf.subject
        let aki = leaf.authorityKeyIdentifier
        if case .only(let allowed) = policy.authorities, !allowed.isEmpty {
            guard let aki, allowed.contains(aki) else {
                return .failure(PresentmentError(TrustRule.authorityNotAllowed))
            }
        }
        func untrusted(_ r: UntrustedReason) -> Swift.Result<ReaderVerdict, PresentmentError> {
            .success(.signedNotTrusted(subject: subject, reason: r))
        }
        guard !anchors.isEmpty else { return untrusted(.noTrustAnchors) }
        guard now >= leaf.notBefore && now <= leaf.notAfter else { return untrusted(.outsideValidity) }
        let purposes = policy.anchors.purposes.map(policy.effectivePurpose)
        // One path validation when every anchor has one purpose (the usual case); else one per purpose.
        var first: UntrustedReason?
        for purpose in AnchorPurpose.allCases {
            let group: [Certificate]
            if purposes.allSatisfy({ $0 == purpose }) {
                group = anchors
            } else {
                group = zip(anchors, purposes).filter { $0.1 == purpose }.map(\.0)
            }
            guard !group.isEmpty else { continue }
            do {
                try Certificate.validatePath(
                    leaf: leaf, intermediates: Array(chain.dropFirst()), anchors: group, at: now)
            } catch {
                continue
            }
            guard let reason = Self.profileFailure(leaf, purpose.signerProfile) else {
                return .success(.trusted(subject: subject, authorityKeyIdentifier: aki))
            }
            if first == nil { first = reason }
        }
        return untrusted(first ?? (leaf.isSelfSigned ? .selfSigned : .notChainedToAnchor))
    }

    /// Why `leaf` lacks the end-entity `profile` (nil: it has it): 18013-5 Annex B for mdoc readers;
    /// HAIP for request signers (an end-entity certificate that is not self-signed, with
    /// digitalSignature).
    static func profileFailure(_ leaf: Certificate, _ profile: SignerProfile) -> UntrustedReason? {
        guard !leaf.isCA else { return .isCertificateAuthority }
        guard leaf.allowsDigitalSignature else { return .lacksDigitalSignatureKeyUsage }
        switch profile {
        case .mdocReader:
            guard leaf.hasExtendedKeyUsage(MdocKeyUsage.readerAuthentication) else {
                return .lacksReaderExtendedKeyUsage
            }
        case .requestSigner:
            guard !leaf.isSelfSigned else { return .selfSigned }
        }
        return nil
    }

    /// The policy's answer for a request no signature covers: a refusal when it requires reader
    /// authentication.
    package func requireSignature() throws(PresentmentError) {
        if policy.requireReaderAuthentication { throw PresentmentError(TrustRule.signatureRequired) }
    }

    /// The trust step every protocol shares, after every signature has verified: a verdict per
    /// signer, and the first refusal the policy makes (an authority outside `.only`; a signer not
    /// trusted under `requireTrustedReader` or `requireReaderAuthentication`), with the per-signer
    /// refusal for the explanation.
    ///
    /// With `anySignature` (several signatures over one request, OpenID4VP multisigned: a verifier
    /// signs once per trust framework it belongs to), the request passes when any signature passes:
    /// the authority list when any signer's authority is allowed, the trusted-reader requirement when
    /// any signer is trusted; the other signers are reported as signed-not-trusted with their reason.
    /// Without it every signature must pass (Annex C, where each signature covers its own DocRequests).
    package func judge(_ signers: [(label: String, chain: [Certificate])], anySignature: Bool = false) -> Judgement {
        var out = Judgement(verdicts: [], refusals: [], refusal: nil)
        // The holder's anchors, parsed here when a snapshot's policy is first needed: one that is not
        // a certificate refuses every signed request (the context is corrupt), whatever the signer.
        let anchors: [Certificate]
        do { anchors = try policy.anchors.certificates() } catch {
            out.verdicts = signers.map { .signedNotTrusted(subject: $0.chain[0].subject, reason: .notChainedToAnchor) }
            out.refusals = signers.map { _ in error }
            out.refusal = error
            return out
        }
        out.verdicts.reserveCapacity(signers.count)
        var authorityRefusal: PresentmentError?
        var trustRefusal: PresentmentError?
        var firstRefusal: PresentmentError?  // in signature order, whichever kind
        for (label, chain) in signers {
            var refused: PresentmentError?
            switch evaluate(chain, anchors: anchors) {
            case .success(let verdict):
                out.verdicts.append(verdict)
                if trustRefusal == nil, policy.requireTrustedReader || policy.requireReaderAuthentication,
                    case .signedNotTrusted(_, let reason) = verdict
                {
                    trustRefusal = PresentmentError(TrustRule.readerNotTrusted, at: label, underlying: reason)
                }
            case .failure(let e):
                out.verdicts.append(.signedNotTrusted(subject: chain[0].subject, reason: .authorityNotAllowed))
                refused = e
                let atSigner = PresentmentError(TrustRule.authorityNotAllowed, at: label)
                if authorityRefusal == nil { authorityRefusal = atSigner }
                if trustRefusal == nil, policy.requireTrustedReader || policy.requireReaderAuthentication {
                    trustRefusal = atSigner
                }
            }
            out.refusals.append(refused)
            if firstRefusal == nil { firstRefusal = authorityRefusal ?? trustRefusal }
        }
        if anySignature {
            let anyAllowed = out.refusals.contains { $0 == nil }
            let anyTrusted = out.verdicts.contains { if case .trusted = $0 { true } else { false } }
            out.refusal = !anyAllowed ? authorityRefusal : anyTrusted ? nil : trustRefusal
        } else {
            out.refusal = firstRefusal
        }
        return out
    }

    /// What `judge` decided.
    package struct Judgement: Sendable {
        /// One verdict per signer, in order.
        package var verdicts: [ReaderVerdict]
        /// Per signer, the refusal when its authority was refused.
        package var refusals: [PresentmentError?]
        /// The first refusal, if any: the request must not be answered.
        package var refusal: PresentmentError?
    }
}

/// Which end-entity certificate profile a reader's or verifier's certificate is held to before it can
/// be trusted: part of the holder's policy, the same for every protocol.
public enum SignerProfile: String, Sendable, Hashable, CaseIterable {
    /// An mdoc reader (ISO/IEC 18013-5 Annex B: not a CA, digitalSignature, EKU 1.0.18013.5.1.6): the
    /// default, and the profile HAIP names for mdoc.
    case mdocReader
    /// An end-entity request signer of an ecosystem that defines no EKU (HAIP leaves the profile to the
    /// ecosystem): not a CA, not self-signed, digitalSignature.
    case requestSigner
}
